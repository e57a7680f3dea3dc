"""Supervised tasks: each module builds a task's `TaskData` for the one fine-tuning recipe (`dnabird.finetune`)."""
