"""Stage `charlm`: a character-level causal LM (`dnabird.text.charlm`) and its BPC report.

A null `data` is the `text_data` stage's text8-format file; the run writes into the stage folder and
resumes from its checkpoints when interrupted.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dnabird.pipeline import RunContext, Stage
from dnabird.text.charlm import CharLMConfig, train_charlm
from dnabird.text.training import resumable, with_out_dir


def _resolved(config: CharLMConfig, context: RunContext) -> CharLMConfig:
    return dataclasses.replace(config, data=config.data or str(context.output("text_data", "text8")))


def inputs(config: CharLMConfig, context: RunContext) -> list[Path]:
    return [Path(_resolved(config, context).data)]


def run(config: CharLMConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    resolved = with_out_dir(_resolved(config, context), stage_dir)
    train_charlm(resolved, resume=resumable(resolved.train))
    return {"model": stage_dir / "model", "report": stage_dir / "report.json", "metrics": stage_dir / "metrics.jsonl"}


STAGE = Stage("charlm", CharLMConfig, inputs, run)
