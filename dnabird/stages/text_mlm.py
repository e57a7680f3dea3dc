"""Stage `text_mlm`: masked-LM pretraining on text (`dnabird.text.mlm`), then the held-out BPC report.

Null paths come from the `text_data` stage (its documents) and the `text_tokenizer` stage; the run writes
into the stage folder (checkpoints, metrics.jsonl, learning_curve.png, report.json, model/) and resumes
from its checkpoints when interrupted.
"""

from __future__ import annotations

from dnabird.stages import training_stage
from dnabird.text.mlm import TextMLMConfig, pretrain_text

STAGE = training_stage("text_mlm", TextMLMConfig, pretrain_text, {
    "train_files": ("text_data", "documents_train"), "validation_files": ("text_data", "documents_validation"),
    "tokenizer": ("text_tokenizer", "model")})
