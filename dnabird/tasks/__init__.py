"""The task registry: each task module defines a `dnabird.finetune.task.Task` and its one instance `TASK`.
Adding a task is its module and one entry in `TASKS` (name -> module, imported on first use so the command
line stays light); the fine-tuning recipe (`dnabird.finetune`), which sits below this package, knows no task
by name, and the pipeline's `compare` stage runs any registered task.
"""

from __future__ import annotations

import importlib

from dnabird.errors import reject
from dnabird.finetune.task import Task

TASKS = {"promoter": "dnabird.tasks.promoter", "chromatin": "dnabird.tasks.chromatin",
         "labelled": "dnabird.tasks.labelled",
         "text_classification": "dnabird.text.classify", "summarise": "dnabird.text.summarise_task",
         "listops": "dnabird.text.listops"}


def task(name: str) -> Task:
    """The registered task `name`."""
    reject(name not in TASKS, "task", name, f"one of {sorted(TASKS)}")
    return importlib.import_module(TASKS[name]).TASK


def load_config(name: str, path, overrides=()):
    """Task `name`'s config from a YAML of its keys, with `key.sub=value` overrides (`dnabird.config.load_config`)."""
    from dnabird.config import load_config as read

    return read(task(name).config, path, overrides)


def finetune(name: str, config, *, resume: bool = False) -> dict:
    """Fine-tune on task `name` (`Task.finetune`); returns the report."""
    return task(name).finetune(config, resume=resume)
