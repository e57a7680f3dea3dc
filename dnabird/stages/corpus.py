"""Stage `corpus`: cut the fetched genome into sentences and documents (BigBird App. F.1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dnabird.pipeline import RunContext, Stage


@dataclass
class CorpusConfig:
    """Corpus recipe; see `dnabird.data.corpus` for each setting."""

    passes: int = 10
    sentence_bp: list[int] = field(default_factory=lambda: [500, 1000])
    document_sentences: list[int] = field(default_factory=lambda: [50, 100])
    contigs: list[str] | None = None  # default: chr1-22, X, Y
    heldout: list[str] = field(default_factory=lambda: ["chr8", "chr9"])
    max_n_fraction: float = 0.5


def inputs(config: CorpusConfig, context: RunContext) -> list[Path]:
    return [context.output("fetch", "fasta")]


def run(config: CorpusConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    from dnabird.data.corpus import build_corpus

    build_corpus(context.output("fetch", "fasta"), stage_dir, seed=context.seed, passes=config.passes,
                 sentence_bp=tuple(config.sentence_bp), document_sentences=tuple(config.document_sentences),
                 contigs=config.contigs, heldout=config.heldout, max_n_fraction=config.max_n_fraction)
    return {"corpus": stage_dir, "report": stage_dir / "report.json"}


STAGE = Stage("corpus", CorpusConfig, inputs, run)
