"""Stage `chromatin`: fine-tune on DeepSEA-style chromatin profiles (BigBird App. F.3, Table 7) and report
the median AUROC per feature group on the test chromosomes.

Its config is `dnabird.tasks.chromatin.ChromatinConfig`; null paths come from the `fetch`, `tokenizer`
and `pretrain` stages (`dnabird.stages.finetune`). Outputs in the stage folder: `model/` (with
task.json), report.json, metrics.jsonl, learning_curve.png, auroc_by_group.png, feature_table.tsv,
data_summary.json (and windows_cache.h5 on the windows route).
"""

from __future__ import annotations

from dnabird.stages import finetune
from dnabird.tasks.chromatin import ChromatinConfig

STAGE = finetune.stage("chromatin", ChromatinConfig, boxplot="auroc_by_group.png")
