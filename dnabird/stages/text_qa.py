"""Stage `text_qa`: extractive QA (`dnabird.text.qa`): train a span model, report EM/F1 on validation.

Null paths come from the `text_data` stage (its SQuAD files) and the `text_tokenizer` stage.
"""

from __future__ import annotations

from dnabird.stages import training_stage
from dnabird.text.qa import QAConfig, answer_questions

STAGE = training_stage("text_qa", QAConfig, answer_questions, {
    "data.train": ("text_data", "squad_train"), "data.validation": ("text_data", "squad_validation"),
    "tokenizer": ("text_tokenizer", "model")}, outputs={"model": "model", "report": "report.json",
                                                       "predictions": "predictions.json"})
