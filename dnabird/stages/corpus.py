"""Stage `corpus`: cut the fetched genome into sentences and documents (BigBird App. F.1)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dnabird.pipeline import RunContext, Stage


@dataclass(frozen=True)
class CorpusConfig:  # placeholder with the corpus module's fields until dnabird.data.corpus lands
    passes: int = 10
    seed: int = 0
    min_sentence_bp: int = 500
    max_sentence_bp: int = 1000
    min_document_sentences: int = 50
    max_document_sentences: int = 100
    max_offset_bp: int = 5000
    max_n_fraction: float = 0.1
    contigs: tuple[str, ...] | None = None
    held_out: tuple[str, ...] = ("chr8", "chr9")


def inputs(config: CorpusConfig, context: RunContext) -> list[Path]:
    return [context.output("fetch", "fasta")]


def run(config: CorpusConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    from dnabird.data.corpus import build_corpus

    build_corpus(context.output("fetch", "fasta"), stage_dir, config)
    return {"corpus": stage_dir, "report": stage_dir / "report.json"}


STAGE = Stage("corpus", CorpusConfig, inputs, run)
