"""Stage `text_qa`: extractive QA (`dnabird.text.qa`): train a span model, report EM/F1 on validation.

Null paths come from the `text_data` stage (its SQuAD files) and the `text_tokenizer` stage.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dnabird.pipeline import RunContext, Stage
from dnabird.text.qa import QAConfig, answer_questions
from dnabird.text.training import resumable, with_out_dir


def _resolved(config: QAConfig, context: RunContext) -> QAConfig:
    data = dataclasses.replace(config.data,
                               train=config.data.train or str(context.output("text_data", "squad_train")),
                               validation=config.data.validation or str(context.output("text_data",
                                                                                       "squad_validation")))
    return dataclasses.replace(config, data=data,
                               tokenizer=config.tokenizer or str(context.output("text_tokenizer", "model")))


def inputs(config: QAConfig, context: RunContext) -> list[Path]:
    resolved = _resolved(config, context)
    return [Path(resolved.data.train), Path(resolved.data.validation), Path(resolved.tokenizer)]


def run(config: QAConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    resolved = with_out_dir(_resolved(config, context), stage_dir)
    answer_questions(resolved, resume=resumable(resolved.train))
    return {"model": stage_dir / "model", "report": stage_dir / "report.json",
            "predictions": stage_dir / "predictions.json"}


STAGE = Stage("text_qa", QAConfig, inputs, run)
