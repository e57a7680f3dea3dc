"""Stage `promoter_compare`: several promoter runs side by side, e.g. pretrained vs from scratch ×
genomic vs DeePromoter negatives, each with its baselines; one table (`results.txt`, `results.json`).

Its config is the `promoter` stage's (`PromoterConfig`) plus `runs`: run name -> overrides of those
settings (nested sections merge key by key), each run written into `<stage>/<name>/`; the `compare` stage
(`dnabird.stages.compare`) with task `promoter` runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from dnabird.stages.compare import FlatRuns, comparison_stage
from dnabird.tasks.promoter import PromoterConfig


@dataclass
class PromoterCompareConfig(FlatRuns, PromoterConfig):
    """`PromoterConfig` shared by every run, and `runs`: name -> that run's overrides."""

    runs: dict = field(default_factory=dict)
    STAGE: ClassVar[str] = "promoter_compare"
    TASK: ClassVar[str] = "promoter"


STAGE = comparison_stage("promoter_compare", PromoterCompareConfig)
