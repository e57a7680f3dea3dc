"""Stage `chromatin_compare`: several chromatin runs side by side (the `compare` stage with task `chromatin`,
`dnabird.stages.compare`): the `chromatin` stage's keys, flat, plus `runs`: run name -> its overrides."""

from __future__ import annotations

from dnabird.stages.compare import flat_comparison_stage

STAGE = flat_comparison_stage("chromatin_compare", "chromatin")
