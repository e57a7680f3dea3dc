"""Supervised tasks: each module builds a task's `TaskData` for the one fine-tuning recipe (`dnabird.finetune`).

A task module exposes `CONFIG` (its config dataclass: `FinetuneConfig` plus a `data` section) and
`build(config, tokenizer, *, block_size, out_dir) -> TaskData`. Adding a task is one line in `TASKS`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from dnabird.errors import ParameterError

TASKS = {"promoter": "dnabird.tasks.promoter", "chromatin": "dnabird.tasks.chromatin",
         "text_classification": "dnabird.text.classify", "summarise": "dnabird.text.summarise_task"}


def task_module(name: str) -> ModuleType:
    """The module of task `name`."""
    if name not in TASKS:
        raise ParameterError("task", name, f"one of {sorted(TASKS)}")
    return importlib.import_module(TASKS[name])
