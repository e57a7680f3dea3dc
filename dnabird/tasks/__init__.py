"""Supervised tasks and their registry: each task module builds a task's `TaskData` for the one fine-tuning
recipe (`dnabird.finetune`), which sits below this package and knows no task by name.

A task module exposes `CONFIG` (its config dataclass: `FinetuneConfig` plus a `data` section) and
`build(config, tokenizer, *, block_size, out_dir) -> TaskData`. Adding a task is one entry in `TASKS`: its
name and its module's import path (imported on first use, so the command line stays light).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from dnabird.errors import ParameterError

TASKS: dict[str, str] = {"promoter": "dnabird.tasks.promoter", "chromatin": "dnabird.tasks.chromatin",
                         "text_classification": "dnabird.text.classify", "summarise": "dnabird.text.summarise_task"}


def task_module(name: str) -> ModuleType:
    """The module of task `name`."""
    if name not in TASKS:
        raise ParameterError("task", name, f"one of {sorted(TASKS)}")
    return importlib.import_module(TASKS[name])


def load_config(name: str, path, overrides=()):
    """Task `name`'s config from a YAML of its keys, with `key.sub=value` overrides (`dnabird.config.load_config`)."""
    from dnabird.config import load_config as read

    return read(task_module(name).CONFIG, path, overrides)


def finetune(name: str, config, *, resume: bool = False) -> dict:
    """Fine-tune on task `name` (`dnabird.finetune.recipe.finetune` with its module); returns the report."""
    from dnabird.finetune import recipe

    return recipe.finetune(task_module(name), config, resume=resume)
