"""Stage `listops_data`: LRA's ListOps splits, generated (`dnabird.datasets.listops`; nothing is downloaded).

Outputs `train`, `validation`, `test`: TSVs named as LRA's (`basic_{train,val,test}.tsv`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dnabird.datasets import listops
from dnabird.pipeline import RunContext, Stage
from dnabird.stages import outputs_of


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
        listops.generate({}, **self.bounds())  # validates the bounds

    def bounds(self) -> dict[str, int]:
        """The tree bounds as `listops.generate`'s keyword arguments."""
        return {name: getattr(self, name) for name in ("min_length", "max_length", "max_depth", "max_args")}


def run(config: ListOpsDataConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    sizes = {"train": config.train, "validation": config.validation, "test": config.test}
    return listops.write(stage_dir, listops.generate(sizes, seed=config.seed, **config.bounds()))


STAGE = Stage("listops_data", ListOpsDataConfig, outputs_of(), run)  # generated: reads nothing
