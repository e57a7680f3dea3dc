"""Stage `promoter`: fine-tune on EPDnew promoters (BigBird App. F.2) and report on the test chromosomes.

Its config is `dnabird.tasks.promoter.PromoterConfig`; null paths come from the `fetch`, `tokenizer` and
`pretrain` stages (`dnabird.stages.finetune`). Outputs in the stage folder: `model/` (with task.json),
report.json, metrics.jsonl, learning_curve.png, roc.png, pr.png, windows.tsv, liftover_dropped.tsv and
tss_lifted.bed (the TSSs in the genome's coordinates, for scoring variants in TSS windows).
"""

from __future__ import annotations

from dnabird.stages import finetune
from dnabird.tasks.promoter import PromoterConfig

STAGE = finetune.stage("promoter", PromoterConfig, tss="tss_lifted.bed")
