"""Stage `corpus`: cut the fetched genome into sentences and documents (BigBird App. F.1).

Its config is `dnabird.data.corpus.CorpusConfig` (every key documented there); resuming an
interrupted run by completed parts is `build_corpus`'s own.
"""

from __future__ import annotations

from pathlib import Path

from dnabird.data.corpus import CorpusConfig, build_corpus
from dnabird.pipeline import RunContext, Stage
from dnabird.stages import outputs_of


def run(config: CorpusConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    build_corpus(context.output("fetch", "fasta"), stage_dir, config)
    return {"corpus": stage_dir, "report": stage_dir / "report.json"}


STAGE = Stage("corpus", CorpusConfig, outputs_of(("fetch", "fasta")), run)
