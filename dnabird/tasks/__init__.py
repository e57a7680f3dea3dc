"""Supervised tasks and their registry: each task module builds a task's `TaskData` for the one fine-tuning
recipe (`dnabird.finetune`), which sits below this package and knows no task by name.

A task module exposes `CONFIG` (its config dataclass: `FinetuneConfig` plus a `data` section) and
`build(config, tokenizer, *, block_size, out_dir) -> TaskData`. Adding a task is one entry in `TASKS`: its
name and a function importing its module (on first use, so the command line stays light).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from dnabird.errors import reject


def _promoter() -> ModuleType:
    from dnabird.tasks import promoter

    return promoter


def _chromatin() -> ModuleType:
    from dnabird.tasks import chromatin

    return chromatin


def _text_classification() -> ModuleType:
    from dnabird.text import classify

    return classify


def _summarise() -> ModuleType:
    from dnabird.text import summarise_task

    return summarise_task


TASKS: dict[str, Callable[[], ModuleType]] = {"promoter": _promoter, "chromatin": _chromatin,
                                              "text_classification": _text_classification, "summarise": _summarise}


def task_module(name: str) -> ModuleType:
    """The module of task `name`."""
    reject(name not in TASKS, "task", name, f"one of {sorted(TASKS)}")
    return TASKS[name]()


def load_config(name: str, path, overrides=()):
    """Task `name`'s config from a YAML of its keys, with `key.sub=value` overrides (`dnabird.config.load_config`)."""
    from dnabird.config import load_config as read

    return read(task_module(name).CONFIG, path, overrides)


def finetune(name: str, config, *, resume: bool = False) -> dict:
    """Fine-tune on task `name` (`dnabird.finetune.recipe.finetune` with its module); returns the report."""
    from dnabird.finetune import recipe

    return recipe.finetune(task_module(name), config, resume=resume)
