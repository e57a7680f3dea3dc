"""Stage `promoter_compare`: several promoter runs side by side, e.g. pretrained vs from scratch ×
genomic vs DeePromoter negatives, each with its baselines; one table (`comparison.txt`, `comparison.json`).

Its config is the `promoter` stage's (`PromoterConfig`) plus `runs`: run name -> overrides of those
settings (nested sections merge key by key), each run written into `<stage>/<name>/`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dnabird.pipeline import RunContext, Stage
from dnabird.stages import finetune
from dnabird.tasks.promoter import PromoterConfig


@dataclass
class PromoterCompareConfig(PromoterConfig):
    """`PromoterConfig` shared by every run, and `runs`: name -> that run's overrides."""

    runs: dict = field(default_factory=dict)

    def __post_init__(self):
        super().__post_init__()
        finetune.run_configs("promoter", self)   # each run's settings validate when the pipeline loads


def inputs(config: PromoterCompareConfig, context: RunContext) -> list[Path]:
    return sorted({p for c in finetune.run_configs("promoter", config).values()
                   for p in finetune.input_paths("promoter", c, context)})


def run(config: PromoterCompareConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    finetune.compare("promoter", config, context, stage_dir)
    return {"comparison": stage_dir / "comparison.json", "table": stage_dir / "comparison.txt"}


STAGE = Stage("promoter_compare", PromoterCompareConfig, inputs, run)
