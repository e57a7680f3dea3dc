"""Stage `promoter_compare`: several promoter runs side by side (the `compare` stage with task `promoter`,
`dnabird.stages.compare`): the `promoter` stage's keys, flat, plus `runs`: run name -> its overrides."""

from __future__ import annotations

from dnabird.stages.compare import flat_comparison_stage

STAGE = flat_comparison_stage("promoter_compare", "promoter")
