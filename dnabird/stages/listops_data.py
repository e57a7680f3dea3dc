"""Stage `listops_data`: LRA's ListOps splits, generated (`dnabird.datasets.listops`; nothing is downloaded).

Outputs `train`, `validation`, `test`: TSVs named as LRA's (`basic_{train,val,test}.tsv`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dnabird.datasets import listops
from dnabird.pipeline import RunContext, Stage


@dataclass
class ListOpsDataConfig:
    """Split sizes and tree bounds (LRA: 96000/2000/2000, lengths in (500, 2000), max_depth 10, max_args 10);
    a tree is kept when min_length < its tokens (brackets, no parentheses) < max_length."""

    train: int = 96000
    validation: int = 2000
    test: int = 2000
    min_length: int = 500
    max_length: int = 2000
    max_depth: int = 10
    max_args: int = 10
    seed: int = 0

    def __post_init__(self):
        listops.generate({}, min_length=self.min_length, max_length=self.max_length, max_depth=self.max_depth,
                         max_args=self.max_args)  # validates the bounds


def inputs(config: ListOpsDataConfig, context: RunContext) -> list[Path]:
    return []


def run(config: ListOpsDataConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    splits = listops.generate({"train": config.train, "validation": config.validation, "test": config.test},
                              seed=config.seed, min_length=config.min_length, max_length=config.max_length,
                              max_depth=config.max_depth, max_args=config.max_args)
    return listops.write(stage_dir, splits)


STAGE = Stage("listops_data", ListOpsDataConfig, inputs, run)
