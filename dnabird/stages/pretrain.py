"""Stage `pretrain`: MLM + NSP pretraining on the `shards` stage's output, then the held-out report.

Null paths in the section are taken from the `tokenizer` and `shards` stages; the run writes into
the stage folder (checkpoints, metrics.jsonl, learning_curve.png, report.json, model/).
`dnabird pretrain --config PIPELINE.yaml` trains the same section on its own (`from_pipeline`), which
is how a pipeline's pretraining runs on many GPUs under torchrun once its data stages have run.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dnabird.errors import ConfigError
from dnabird.pipeline import RunContext, Stage, load_pipeline
from dnabird.pretraining.recipe import PretrainConfig, pretrain


def _resolved(config: PretrainConfig, context: RunContext, stage_dir: Path | None = None) -> PretrainConfig:
    paths = {"tokenizer": config.tokenizer or context.output("tokenizer", "model"),
             "train_shards": config.train_shards or context.output("shards", "train"),
             "heldout_shards": config.heldout_shards or context.output("shards", "heldout")}
    train = config.train if stage_dir is None else dataclasses.replace(config.train, out_dir=str(stage_dir))
    return dataclasses.replace(config, **{k: str(v) for k, v in paths.items()}, train=train)


def inputs(config: PretrainConfig, context: RunContext) -> list[Path]:
    resolved = _resolved(config, context)
    return [Path(resolved.tokenizer), Path(resolved.train_shards), Path(resolved.heldout_shards)]


def run(config: PretrainConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    resolved = _resolved(config, context, stage_dir)
    resume = (stage_dir / "checkpoints").is_dir() and any((stage_dir / "checkpoints").glob("step_*"))
    pretrain(resolved, resume=resume)
    return {"model": stage_dir / "model", "report": stage_dir / "report.json",
            "metrics": stage_dir / "metrics.jsonl"}


def from_pipeline(path: str | Path, overrides: list[str] = ()) -> PretrainConfig:
    """The `pretrain` section of a pipeline YAML, its null paths taken from the finished tokenizer and
    shards stages under `out_dir`, writing into `out_dir/pretrain`."""
    pipeline = load_pipeline(path, overrides)
    if "pretrain" not in pipeline.stages:
        raise ConfigError(f"{path}: no 'pretrain' section")
    context = RunContext(pipeline.out_dir)
    return _resolved(pipeline.stages["pretrain"], context, pipeline.out_dir / "pretrain")


STAGE = Stage("pretrain", PretrainConfig, inputs, run)
