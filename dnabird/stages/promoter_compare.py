"""Stage `promoter_compare`: several promoter runs side by side, e.g. pretrained vs from scratch ×
genomic vs DeePromoter negatives, each with its baselines; one table (`results.txt`, `results.json`).

Its config is the `promoter` stage's (`PromoterConfig`) plus `runs`: run name -> overrides of those
settings (nested sections merge key by key), each run written into `<stage>/<name>/`; the `compare` stage
(`dnabird.stages.compare`) with task `promoter` runs it.
"""

from __future__ import annotations

from dnabird.stages.compare import flat_comparison_stage

STAGE = flat_comparison_stage("promoter_compare", "promoter")
