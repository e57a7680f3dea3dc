"""What every fine-tuning stage shares: filling a task section's null paths from earlier stages, and
running it (resuming an interrupted run from its checkpoints); `stage` makes a task's pipeline stage.

In a section, null `pretrained` means the `pretrain` stage's model and null `tokenizer` the `tokenizer`
stage's model ("none" trains from scratch), or, when `pretrained` names a checkpoint, the tokenizer saved
in it (an imported model brings its own); a task module's `STAGE_INPUTS` maps its null `data` paths
to (stage, output) pairs, e.g. the promoter task's genome, promoters and chain from `fetch`.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from pathlib import Path

from dnabird.finetune.config import FROM_SCRATCH
from dnabird.pipeline import RunContext, Stage
from dnabird.stages import TRAINED, optional_output, pipeline_section
from dnabird.tasks import task_module
from dnabird.train.checkpoint import resumable


def resolved(task: str, config, context: RunContext, out_dir: Path | None = None):
    """`config` with its null paths taken from earlier stages and (if given) `train.out_dir` set."""
    data, module = config.data, task_module(task)
    filled = {field: str(context.output(stage, output))
              for field, (stage, output) in module.STAGE_INPUTS.items() if getattr(data, field) is None}
    for field, source in getattr(module, "OPTIONAL_STAGE_INPUTS", {}).items():
        path = optional_output(context, *source) if getattr(data, field) is None else None
        if path is not None:    # filled when that stage has the output, else left null
            filled[field] = str(path)
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
    fields = [*module.STAGE_INPUTS, *getattr(module, "OPTIONAL_STAGE_INPUTS", {})]  # optional ones may stay null
    values = [getattr(config.data, field) for field in fields] + [config.tokenizer]
    values += [config.pretrained] if config.pretrained != FROM_SCRATCH else []
    return [Path(value) for value in values if value is not None]


def run(task: str, config, out_dir: Path) -> dict:
    """Fine-tune into `out_dir` (`config.train.out_dir`), resuming from its checkpoints when an earlier attempt
    left some."""
    from dnabird.tasks import finetune

    return finetune(task, config, resume=resumable(config.train.out_dir))


def from_pipeline(task: str, path: str | Path, overrides: list[str] = ()):
    """A pipeline YAML's `task` section, its null paths taken from the finished earlier stages under
    `out_dir`, writing into `out_dir/<task>` (what `dnabird finetune TASK --config PIPELINE.yaml` runs)."""
    return pipeline_section(task, path, overrides, partial(resolved, task))


def merge(base: dict, overrides: dict) -> dict:
    """`base` with `overrides` applied key by key, nested mappings merged rather than replaced."""
    merged = dict(base)
    for key, value in overrides.items():
        merged[key] = merge(base[key], value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    return merged


def stage(task: str, config: type, **files: str) -> Stage:
    """The pipeline stage fine-tuning `task` into its folder: outputs `model`, `report`, `metrics` and `files`
    (output name -> file name in the folder)."""

    def run_stage(config, context: RunContext, stage_dir: Path) -> dict[str, Path]:
        run(task, resolved(task, config, context, stage_dir), stage_dir)
        return {name: stage_dir / file for name, file in {**TRAINED, **files}.items()}

    return Stage(task, config, partial(input_paths, task), run_stage)
