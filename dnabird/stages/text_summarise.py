"""Stage `text_summarise`: several summarisation models on the same splits, and one results table.

A `compare` stage (`dnabird.stages.compare`) with task `summarise` (`dnabird.text.summarise_task`); null paths
come from the `text_data` (summarisation task) and `text_tokenizer` stages. `results.txt`: per model its
encoder's attention and length, the selected step and validation ROUGE-L, test ROUGE-1/2/L (95 % intervals)
and wall time, then the lead-k baseline on each set of test documents (docs/summarisation.md).
"""

from __future__ import annotations

from dnabird.stages import resuming
from dnabird.stages.compare import Track, named_models_stage
from dnabird.stages.text_classify import inputs, model_rows, text_paths
from dnabird.text.summarise_task import MODEL_ROW, TASK, SummariseConfig, finetune, rouge_cells


def results_table(reports: dict[str, dict], seconds: dict[str, float], settings: dict[str, SummariseConfig]) -> str:
    """A Markdown table: each model's test ROUGE-1/2/L (95 % intervals), then the lead-k baseline."""
    lines = ["| model | attention | encoder tokens | selected step | validation ROUGE-L | test ROUGE-1 | "
             "test ROUGE-2 | test ROUGE-L | wall time (s) |", "|---|---|---|---|---|---|---|---|---|"]
    lines += model_rows(reports, seconds, settings, lambda report: report["selection"]["value"], rouge_cells)
    test_sets: dict[str, list[str]] = {}  # test file -> the models scored on it (a warm-up run has its own)
    for name in reports:
        test_sets.setdefault(str(settings[name].data.test), []).append(name)
    for names in test_sets.values():
        label = f" ({', '.join(names)})" if len(test_sets) > 1 else ""
        for scorer, row in reports[names[0]]["test"]["rows"].items():
            if scorer != MODEL_ROW:
                lines.append(f"| {scorer}{label} | — | — | — | — | {rouge_cells(row)} | — |")
    return "\n".join(lines)


TRACK = Track(SummariseConfig, text_paths("summaries"), inputs, resuming(finetune), results_table)
STAGE = named_models_stage("text_summarise", TASK, SummariseConfig)
