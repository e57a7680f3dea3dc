"""Pipeline stages: each module adapts one library step to `dnabird run` and exposes `STAGE`, or, generic, makes
the stage of a name (`finetune.stage`: a task's; `compare.stage`: a comparison). The helpers below fill a
section's null paths from earlier stages and make a training stage."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path

from dnabird.errors import ConfigError
from dnabird.pipeline import STAGE_MODULES, RunContext, Stage, load_pipeline
from dnabird.train.checkpoint import resumable

TRAINED = {"model": "model", "report": "report.json", "metrics": "metrics.jsonl"}  # output -> file in the folder


def outputs_of(*sources: tuple[str, str]) -> Callable[[object, RunContext], list[Path]]:
    """A stage's `inputs`: the outputs (stage, name) of earlier stages it reads, whatever its config."""
    return lambda config, context: [context.output(*source) for source in sources]


def optional_output(context: RunContext, stage: str, name: str) -> Path | None:
    """`context.output(stage, name)`, or None when that stage has no such output."""
    try:
        return context.output(stage, name)
    except ConfigError:
        return None


def filled(config, context: RunContext, out_dir: Path | None, sources: Mapping[str, tuple[str, str]]):
    """`config` writing into `out_dir` (if given), each null field of `sources` (`field` or `data.field` ->
    (stage, output)) taken from that earlier stage's output. A field of `sources` written `<stage>:<output>`
    (e.g. `text_data:summaries_warmup_train`, or in a list of files) names another output of an earlier stage."""
    changes, data = {}, {}
    for name, source in sources.items():
        section, _, key = name.rpartition(".")
        value = getattr(config.data if section else config, key)
        if value is None:
            resolved = str(context.output(*source))
        else:
            resolved = [_resolved(item, context) for item in value] if isinstance(value, list) \
                else _resolved(value, context)
            if resolved == value:
                continue
        (data if section else changes)[key] = resolved
    if data:
        changes["data"] = dataclasses.replace(config.data, **data)
    if out_dir is not None:
        changes["train"] = dataclasses.replace(config.train, out_dir=str(out_dir))
    return dataclasses.replace(config, **changes)


def _resolved(value, context: RunContext):
    """`value`, or the path of the earlier stage's output it names as `<stage>:<output>`."""
    reference = _reference(value)
    return str(context.output(*reference)) if reference else value


def _reference(value) -> tuple[str, str] | None:
    """(stage, output) of a value written `<stage>:<output>` with a registered stage's name, else None."""
    stage, sep, output = value.partition(":") if isinstance(value, str) else ("", "", "")
    return (stage, output) if sep and stage in STAGE_MODULES else None


def training_stage(name: str, config: type, train: Callable, sources: Mapping[str, tuple[str, str]],
                   outputs: Mapping[str, str] = TRAINED) -> Stage:
    """The stage `name` running `train(config, resume=...)` in its folder (resuming from its checkpoints), null
    paths from earlier stages (`filled` with `sources`, which it reads); outputs: name -> file in the folder."""

    def inputs(config, context: RunContext) -> list[Path]:
        resolved = filled(config, context, None, sources)
        values = [getattr(resolved.data if "." in key else resolved, key.rpartition(".")[2]) for key in sources]
        return [Path(p) for value in values for p in ([value] if isinstance(value, str) else value)]

    def run(config, context: RunContext, stage_dir: Path) -> dict[str, Path]:
        config = filled(config, context, stage_dir, sources)
        train(config, resume=resumable(config.train.out_dir))
        return {output: stage_dir / file for output, file in outputs.items()}

    return Stage(name, config, inputs, run)


def pipeline_section(name: str, path: str | Path, overrides, resolve: Callable):
    """A pipeline YAML's section `name`, `resolve(config, context, out_dir)` filling its null paths from the
    finished earlier stages under the pipeline's `out_dir` and writing into `out_dir/<name>`."""
    pipeline = load_pipeline(path, overrides)
    if name not in pipeline.stages:
        raise ConfigError(f"{path}: no {name!r} section")
    return resolve(pipeline.stages[name], RunContext(pipeline.out_dir), pipeline.out_dir / name)
