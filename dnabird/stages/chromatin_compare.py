"""Stage `chromatin_compare`: several chromatin runs side by side, e.g. pretrained vs from scratch, a 1 kb
vs an 8 kb window; one table (`results.txt`, `results.json`) of the median AUROC per group with
bootstrap intervals, each run written into `<stage>/<name>/`.

Its config is the `chromatin` stage's (`ChromatinConfig`) plus `runs`: run name -> overrides of those
settings (nested sections merge key by key); the `compare` stage (`dnabird.stages.compare`) with task
`chromatin` runs it.
"""

from __future__ import annotations

from dnabird.stages.compare import flat_comparison_stage

STAGE = flat_comparison_stage("chromatin_compare", "chromatin")
