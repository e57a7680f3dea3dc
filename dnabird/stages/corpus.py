"""Stage `corpus`: cut the fetched genome into sentences and documents (BigBird App. F.1).

Its config is `dnabird.data.corpus.CorpusConfig` (every key documented there); resuming an
interrupted run by completed parts is `build_corpus`'s own.
"""

from __future__ import annotations

from pathlib import Path

from dnabird.data.corpus import CorpusConfig, build_corpus
from dnabird.pipeline import RunContext, Stage


def inputs(config: CorpusConfig, context: RunContext) -> list[Path]:
    return [context.output("fetch", "fasta")]


def run(config: CorpusConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    build_corpus(context.output("fetch", "fasta"), stage_dir, config)
    return {"corpus": stage_dir, "report": stage_dir / "report.json"}


STAGE = Stage("corpus", CorpusConfig, inputs, run)
