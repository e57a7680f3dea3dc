"""The task stage: one registered task (`dnabird.tasks`) fine-tuned in its stage folder, resuming an interrupted
run from its checkpoints; `stage(name)` makes the stage of task `name` (the pipeline's `promoter`, `chromatin`).

A null config field the task lists in `stage_inputs` is filled from that earlier stage's output (in
`optional_inputs`: when that stage has it); a `data` value written `<stage>:<output>` names another output of an
earlier stage. A null `tokenizer` stays null when `pretrained` names a checkpoint of the config's own (it
brings its tokenizer; the recipe reads it).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from dnabird.finetune.config import FROM_SCRATCH
from dnabird.finetune.task import Task
from dnabird.pipeline import RunContext, Stage
from dnabird.stages import TRAINED, filled, optional_output, pipeline_section
from dnabird.tasks import task as registered
from dnabird.train.checkpoint import resumable


def resolved(task: Task, config, context: RunContext, out_dir: Path | None = None):
    """`config` with its null paths taken from earlier stages and (if given) `train.out_dir` set."""
    sources = dict(task.sources(config))
    if getattr(config, "pretrained", None) not in (None, FROM_SCRATCH):
        sources.pop("tokenizer", None)     # a checkpoint given explicitly brings its own tokenizer
    for name, source in task.optional_inputs.items():
        section, _, key = name.rpartition(".")
        if getattr(config.data if section else config, key) is None and optional_output(context, *source) is not None:
            sources[name] = source          # filled when that stage has the output, else left null
    return filled(config, context, out_dir, sources)


def run(task: Task, config) -> dict:
    """Run `config` (its paths filled) into `config.train.out_dir`, resuming from its checkpoints when an earlier
    attempt left some; returns the report."""
    return task.finetune(config, resume=resumable(config.train.out_dir))


def from_pipeline(name: str, path: str | Path, overrides: list[str] = ()):
    """A pipeline YAML's section of task `name`, its null paths taken from the finished earlier stages under
    `out_dir`, writing into `out_dir/<name>` (what `dnabird finetune TASK --config PIPELINE.yaml` runs)."""
    return pipeline_section(name, path, overrides, partial(resolved, registered(name)))


def merge(base: dict, overrides: dict) -> dict:
    """`base` with `overrides` applied key by key, nested mappings merged rather than replaced."""
    merged = dict(base)
    for key, value in overrides.items():
        merged[key] = merge(base[key], value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    return merged


def stage(name: str) -> Stage:
    """The pipeline stage fine-tuning task `name` into its folder: outputs `model`, `report`, `metrics` and the
    task's `outputs`."""
    task = registered(name)

    def inputs(config, context: RunContext) -> list[Path]:
        return task.input_files(resolved(task, config, context))

    def run_stage(config, context: RunContext, stage_dir: Path) -> dict[str, Path]:
        run(task, resolved(task, config, context, stage_dir))
        return {output: stage_dir / file for output, file in {**TRAINED, **task.outputs}.items()}

    return Stage(name, task.config, inputs, run_stage)
