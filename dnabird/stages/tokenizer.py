"""Stage `tokenizer`: train the DNA BPE tokenizer on corpus training sentences; report held-out bp/token.

Its config is `dnabird.data.tokenizer.TokenizerConfig` (every key documented there).
"""

from __future__ import annotations

from pathlib import Path

from dnabird.data.tokenizer import TokenizerConfig, train_on_corpus
from dnabird.io import write_json_atomic
from dnabird.pipeline import RunContext, Stage
from dnabird.stages import outputs_of

MODEL_NAME = "dna.model"


def run(config: TokenizerConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    _, report = train_on_corpus(context.output("corpus", "corpus"), stage_dir / MODEL_NAME, config)
    write_json_atomic(stage_dir / "report.json", report)
    return {"model": stage_dir / MODEL_NAME, "report": stage_dir / "report.json"}


STAGE = Stage("tokenizer", TokenizerConfig, outputs_of(("corpus", "corpus")), run)
