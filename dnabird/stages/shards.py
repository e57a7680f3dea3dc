"""Stage `shards`: one tokenized HDF5 shard per corpus part, resumed part by part (`build_shards`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dnabird.data.shards import build_shards
from dnabird.pipeline import RunContext, Stage
from dnabird.stages import outputs_of


@dataclass
class ShardsConfig:
    """Which corpus splits to tokenize."""

    splits: list[str] = field(default_factory=lambda: ["train", "heldout"])


def run(config: ShardsConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    return build_shards(context.output("corpus", "corpus"), context.output("tokenizer", "model"), stage_dir,
                        config.splits)


STAGE = Stage("shards", ShardsConfig, outputs_of(("corpus", "corpus"), ("tokenizer", "model")), run)
