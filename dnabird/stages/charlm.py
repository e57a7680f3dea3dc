"""Stage `charlm`: a character-level causal LM (`dnabird.text.charlm`) and its BPC report.

A null `data` is the `text_data` stage's text8-format file; the run writes into the stage folder and
resumes from its checkpoints when interrupted.
"""

from __future__ import annotations

from dnabird.stages import training_stage
from dnabird.text.charlm import CharLMConfig, train_charlm

STAGE = training_stage("charlm", CharLMConfig, train_charlm, {"data": ("text_data", "text8")})
