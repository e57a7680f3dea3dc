"""Stage `chromatin_compare`: several chromatin runs side by side, e.g. pretrained vs from scratch, a 1 kb
vs an 8 kb window; one table (`results.txt`, `results.json`) of the median AUROC per group with
bootstrap intervals, each run written into `<stage>/<name>/`.

Its config is the `chromatin` stage's (`ChromatinConfig`) plus `runs`: run name -> overrides of those
settings (nested sections merge key by key); the `compare` stage (`dnabird.stages.compare`) with task
`chromatin` runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from dnabird.stages.compare import FlatRuns, comparison_stage
from dnabird.tasks.chromatin import ChromatinConfig


@dataclass
class ChromatinCompareConfig(FlatRuns, ChromatinConfig):
    """`ChromatinConfig` shared by every run, and `runs`: name -> that run's overrides."""

    runs: dict = field(default_factory=dict)
    STAGE: ClassVar[str] = "chromatin_compare"
    TASK: ClassVar[str] = "chromatin"


STAGE = comparison_stage("chromatin_compare", ChromatinCompareConfig)
