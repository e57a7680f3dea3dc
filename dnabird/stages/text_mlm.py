"""Stage `text_mlm`: masked-LM pretraining on text (`dnabird.text.mlm`), then the held-out BPC report.

Null paths come from the `text_data` stage (its documents) and the `text_tokenizer` stage; the run writes
into the stage folder (checkpoints, metrics.jsonl, learning_curve.png, report.json, model/) and resumes
from its checkpoints when interrupted.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dnabird.pipeline import RunContext, Stage
from dnabird.text.mlm import TextMLMConfig, pretrain_text
from dnabird.text.training import resumable, with_out_dir


def _resolved(config: TextMLMConfig, context: RunContext) -> TextMLMConfig:
    return dataclasses.replace(
        config, train_files=config.train_files or str(context.output("text_data", "documents_train")),
        validation_files=config.validation_files or str(context.output("text_data", "documents_validation")),
        tokenizer=config.tokenizer or str(context.output("text_tokenizer", "model")))


def inputs(config: TextMLMConfig, context: RunContext) -> list[Path]:
    resolved = _resolved(config, context)
    files = [resolved.train_files, resolved.validation_files, resolved.tokenizer]
    return [Path(p) for f in files for p in ([f] if isinstance(f, str) else f)]


def run(config: TextMLMConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    resolved = with_out_dir(_resolved(config, context), stage_dir)
    pretrain_text(resolved, resume=resumable(resolved.train))
    return {"model": stage_dir / "model", "report": stage_dir / "report.json", "metrics": stage_dir / "metrics.jsonl"}


STAGE = Stage("text_mlm", TextMLMConfig, inputs, run)
