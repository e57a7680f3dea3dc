"""The one fine-tuning recipe: a task's data (`TaskData`) and a `FinetuneConfig` in; the selected model with
its `task.json`, `report.json`, `metrics.jsonl` and plots out. Every supervised task plugs in here."""
