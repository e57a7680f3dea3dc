"""Stage `promoter`: fine-tune on EPDnew promoters (BigBird App. F.2) and report on the test chromosomes.

Its config is `dnabird.tasks.promoter.PromoterConfig`; null paths come from the `fetch`, `tokenizer` and
`pretrain` stages (`dnabird.stages.finetune`). Outputs in the stage folder: `model/` (with task.json),
report.json, metrics.jsonl, learning_curve.png, roc.png, pr.png, windows.tsv, liftover_dropped.tsv and
tss_lifted.bed (the TSSs in the genome's coordinates, for scoring variants in TSS windows).
"""

from __future__ import annotations

from pathlib import Path

from dnabird.pipeline import RunContext, Stage
from dnabird.stages import finetune
from dnabird.tasks.promoter import PromoterConfig


def inputs(config: PromoterConfig, context: RunContext) -> list[Path]:
    return finetune.input_paths("promoter", config, context)


def run(config: PromoterConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    finetune.run("promoter", finetune.resolved("promoter", config, context, stage_dir), stage_dir)
    return {"model": stage_dir / "model", "report": stage_dir / "report.json", "metrics": stage_dir / "metrics.jsonl",
            "tss": stage_dir / "tss_lifted.bed"}


STAGE = Stage("promoter", PromoterConfig, inputs, run)
