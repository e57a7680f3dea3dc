"""What every fine-tuning stage shares: filling a task section's null paths from earlier stages, and
running it (resuming an interrupted run from its checkpoints).

In a section, null `pretrained` means the `pretrain` stage's model and null `tokenizer` the `tokenizer`
stage's model ("none" trains from scratch), or, when `pretrained` names a checkpoint, the tokenizer saved
in it (an imported model brings its own); a task module's `STAGE_INPUTS` maps its null `data` paths
to (stage, output) pairs, e.g. the promoter task's genome, promoters and chain from `fetch`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dnabird.errors import ConfigError
from dnabird.finetune.config import FROM_SCRATCH
from dnabird.pipeline import RunContext, load_pipeline
from dnabird.tasks import task_module


def resolved(task: str, config, context: RunContext, out_dir: Path | None = None):
    """`config` with its null paths taken from earlier stages and (if given) `train.out_dir` set."""
    data, module = config.data, task_module(task)
    filled = {field: str(context.output(stage, output))
              for field, (stage, output) in module.STAGE_INPUTS.items() if getattr(data, field) is None}
    for field, (stage, output) in getattr(module, "OPTIONAL_STAGE_INPUTS", {}).items():
        if getattr(data, field) is None:    # filled when that stage has the output, else left null
            try:
                filled[field] = str(context.output(stage, output))
            except ConfigError:
                pass
    # a checkpoint given explicitly brings its own tokenizer (the recipe reads it); else the pipeline's
    own_tokenizer = config.pretrained not in (None, FROM_SCRATCH)
    paths = {"pretrained": config.pretrained or str(context.output("pretrain", "model")),
             "tokenizer": config.tokenizer or (None if own_tokenizer else str(context.output("tokenizer", "model")))}
    train = config.train if out_dir is None else dataclasses.replace(config.train, out_dir=str(out_dir))
    return dataclasses.replace(config, **paths, data=dataclasses.replace(data, **filled), train=train)


def input_paths(task: str, config, context: RunContext) -> list[Path]:
    """The files a run reads (their content keys the stage)."""
    config = resolved(task, config, context)
    module = task_module(task)
    paths = [Path(getattr(config.data, field)) for field in module.STAGE_INPUTS]
    paths += [Path(getattr(config.data, field)) for field in getattr(module, "OPTIONAL_STAGE_INPUTS", {})
              if getattr(config.data, field) is not None]
    if config.tokenizer is not None:
        paths.append(Path(config.tokenizer))
    if config.pretrained != FROM_SCRATCH:
        paths.append(Path(config.pretrained))
    return paths


def run(task: str, config, out_dir: Path) -> dict:
    """Fine-tune into `out_dir`, resuming from its checkpoints when an earlier attempt left some."""
    from dnabird.tasks import finetune

    resume = (out_dir / "checkpoints").is_dir() and any((out_dir / "checkpoints").glob("step_*"))
    return finetune(task, config, resume=resume)


def from_pipeline(task: str, path: str | Path, overrides: list[str] = ()):
    """A pipeline YAML's `task` section, its null paths taken from the finished earlier stages under
    `out_dir`, writing into `out_dir/<task>` (what `dnabird finetune TASK --config PIPELINE.yaml` runs)."""
    pipeline = load_pipeline(path, overrides)
    if task not in pipeline.stages:
        raise ConfigError(f"{path}: no {task!r} section")
    return resolved(task, pipeline.stages[task], RunContext(pipeline.out_dir), pipeline.out_dir / task)


def merge(base: dict, overrides: dict) -> dict:
    """`base` with `overrides` applied key by key, nested mappings merged rather than replaced."""
    merged = dict(base)
    for key, value in overrides.items():
        merged[key] = merge(base[key], value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    return merged


def run_configs(task: str, config) -> dict[str, object]:
    """Each named run of a comparison section: the section's settings with that run's overrides, validated."""
    from dnabird.config import build_config

    base = {k: v for k, v in dataclasses.asdict(config).items() if k != "runs"}
    cls = task_module(task).CONFIG
    return {name: build_config(cls, merge(base, overrides or {}), f"{task}_compare.runs.{name}")
            for name, overrides in config.runs.items()}


def compare(task: str, config, context: RunContext, stage_dir: Path) -> dict:
    """Run every named run into `stage_dir/<name>` and write `comparison.json` and its printed table."""
    from dnabird.finetune.report import comparison_table
    from dnabird.io import write_json_atomic, write_text_atomic

    reports = {}
    for name, run_config in run_configs(task, config).items():
        out_dir = stage_dir / name
        reports[name] = run(task, resolved(task, run_config, context, out_dir), out_dir)
    table = comparison_table(reports)
    write_json_atomic(stage_dir / "comparison.json", {name: r["test"] for name, r in reports.items()})
    write_text_atomic(stage_dir / "comparison.txt", table + "\n")
    print(table)
    return reports
