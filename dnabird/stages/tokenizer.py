"""Stage `tokenizer`: train the DNA BPE tokenizer on corpus training sentences; report held-out bp/token."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dnabird.data.tokenizer import train_on_corpus
from dnabird.pipeline import RunContext, Stage, write_json

MODEL_NAME = "dna.model"


@dataclass
class TokenizerConfig:
    """sentencepiece BPE settings (vocabulary counts the 5 special tokens)."""

    vocab_size: int = 32000
    max_piece_length: int = 16  # longest piece in bp
    sample_sentences: int = 100_000  # training sentences sampled into memory (about 3.5 GB)
    heldout_sentences: int = 20_000  # held-out sentences sampled to report bp/token
    seed: int = 0  # sampling seed (defaults to the pipeline's seed)


def inputs(config: TokenizerConfig, context: RunContext) -> list[Path]:
    return [context.output("corpus", "corpus")]


def run(config: TokenizerConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    _, report = train_on_corpus(context.output("corpus", "corpus"), stage_dir / MODEL_NAME,
                                heldout_sentences=config.heldout_sentences, seed=config.seed,
                                vocab_size=config.vocab_size, max_piece_length=config.max_piece_length,
                                sample_size=config.sample_sentences)
    write_json(stage_dir / "report.json", report)
    return {"model": stage_dir / MODEL_NAME, "report": stage_dir / "report.json"}


STAGE = Stage("tokenizer", TokenizerConfig, inputs, run)
