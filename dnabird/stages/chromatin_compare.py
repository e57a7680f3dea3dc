"""Stage `chromatin_compare`: several chromatin runs side by side, e.g. pretrained vs from scratch, a 1 kb
vs an 8 kb window; one table (`comparison.txt`, `comparison.json`) of the median AUROC per group with
bootstrap intervals, each run written into `<stage>/<name>/`.

Its config is the `chromatin` stage's (`ChromatinConfig`) plus `runs`: run name -> overrides of those
settings (nested sections merge key by key).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from dnabird.pipeline import RunContext, Stage
from dnabird.stages import finetune
from dnabird.tasks.chromatin import ChromatinConfig


@dataclass
class ChromatinCompareConfig(ChromatinConfig):
    """`ChromatinConfig` shared by every run, and `runs`: name -> that run's overrides."""

    runs: dict = field(default_factory=dict)

    def __post_init__(self):
        super().__post_init__()
        finetune.run_configs("chromatin", self)   # each run's settings validate when the pipeline loads


def inputs(config: ChromatinCompareConfig, context: RunContext) -> list[Path]:
    return sorted({p for c in finetune.run_configs("chromatin", config).values()
                   for p in finetune.input_paths("chromatin", c, context)})


def run(config: ChromatinCompareConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    started = time.perf_counter()
    finetune.compare("chromatin", config, context, stage_dir)
    print(f"chromatin_compare: {time.perf_counter() - started:.0f} s wall time")
    return {"comparison": stage_dir / "comparison.json", "table": stage_dir / "comparison.txt"}


STAGE = Stage("chromatin_compare", ChromatinCompareConfig, inputs, run)
