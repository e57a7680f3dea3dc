"""DNA byte-pair tokenizer: sentencepiece BPE over A, C, G, T, N with dnabird's fixed special ids.

Special tokens, at the same ids in every dnabird tokenizer: [PAD]=0, [UNK]=1, [CLS]=2, [SEP]=3,
[MASK]=4; the vocabulary size counts them. Sentences are encoded one at a time, so a piece never
crosses a sentence boundary. Lower case (soft-masked bases) reads as upper case.
Training keeps a seeded reservoir sample of `sample_size` sentences; sentencepiece's BPE trainer
then needs about 35 MB per 1,000 sentences of 500-1000 bp (measured at vocab 32000: 10,000
sentences peak at 0.43 GB, 40,000 at 1.4 GB, growing linearly). The default 100,000 sentences
(75 Mbp) fit in about 3.5 GB; 1,000,000 would need about 35 GB.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dnabird.data.corpus import iter_documents
from dnabird.data.tokenizer_base import SPECIAL_TOKENS, DnaTokenizer, SentencePieceTokenizer, check_sequence
from dnabird.errors import InputFormatError, ParameterError, reject
from dnabird.progress import progress_bar

ALPHABET = "ACGTN"


def reservoir_sample(items: Iterable[str], size: int, seed: int) -> list[str]:
    """A uniform sample of `size` items from a stream of unknown length (Li's algorithm L)."""
    rng = np.random.default_rng(seed)

    def uniform() -> float:  # in (0, 1], so its log is finite
        return 1.0 - rng.random()

    stream = iter(items)
    sample = [item for _, item in zip(range(size), stream, strict=False)]
    if len(sample) < size:
        return sample
    weight = math.exp(math.log(uniform()) / size)
    while True:
        skip = math.floor(math.log(uniform()) / math.log1p(-weight))
        for _ in range(skip):
            if next(stream, None) is None:
                return sample
        item = next(stream, None)
        if item is None:
            return sample
        sample[int(rng.integers(size))] = item
        weight *= math.exp(math.log(uniform()) / size)


@dataclass(frozen=True)
class TokenizerConfig:
    """How the DNA tokenizer is trained on a corpus.

    vocab_size: pieces including the 5 special tokens (the paper: 32000).
    max_piece_length: longest piece in bp.
    sample_sentences: training sentences sampled into memory (100,000: about 3.5 GB, see above).
    heldout_sentences: held-out sentences sampled to report bp/token (0: no report).
    seed: seed of both samples.
    """

    vocab_size: int = 32000
    max_piece_length: int = 16
    sample_sentences: int = 100_000
    heldout_sentences: int = 20_000
    seed: int = 0

    def __post_init__(self):
        if self.vocab_size <= len(SPECIAL_TOKENS) + len(ALPHABET):
            raise ParameterError("vocab_size", self.vocab_size, f"an integer > {len(SPECIAL_TOKENS) + len(ALPHABET)}")
        reject(self.max_piece_length < 1, "max_piece_length", self.max_piece_length, "an integer >= 1")
        reject(self.sample_sentences < 1, "sample_size", self.sample_sentences, "an integer >= 1")
        reject(self.heldout_sentences < 0, "heldout_sentences", self.heldout_sentences, "an integer >= 0")


class Tokenizer(DnaTokenizer, SentencePieceTokenizer):
    """A trained DNA BPE model; `Tokenizer.train(...)` builds one, `Tokenizer.load(path)` reads one."""

    pad_id, unk_id, cls_id, sep_id, mask_id = range(len(SPECIAL_TOKENS))
    special_ids = frozenset(range(len(SPECIAL_TOKENS)))
    alphabet = ALPHABET

    def check_specials(self, path) -> None:
        pieces = [self._sp.id_to_piece(i) for i in range(min(self.vocab_size, len(SPECIAL_TOKENS)))]
        if tuple(pieces) != SPECIAL_TOKENS:
            raise InputFormatError(f"not a dnabird DNA tokenizer: pieces 0-4 are {pieces}, expected "
                                   f"{list(SPECIAL_TOKENS)}", path=path)

    @classmethod
    def train(cls, sentences: Iterable[str], path: str | os.PathLike, *,
              vocab_size: int = TokenizerConfig.vocab_size,
              max_piece_length: int = TokenizerConfig.max_piece_length,
              sample_size: int = TokenizerConfig.sample_sentences, seed: int = 0,
              num_threads: int | None = None) -> Tokenizer:
        """Train BPE on a seeded reservoir sample of `sentences` and write the model to `path` atomically; one
        all-N sentence joins the sample so that N is always in the alphabet (else it could map to [UNK])."""
        TokenizerConfig(vocab_size=vocab_size, max_piece_length=max_piece_length,
                        sample_sentences=sample_size)  # validates the settings
        sample = [sentence.upper() for sentence in reservoir_sample(sentences, sample_size, seed)]
        for index, sentence in enumerate(sample):
            check_sequence(sentence, f"training sentence {index}", ALPHABET)
        reject(not sample, "sentences", "an empty stream", "at least one training sentence")
        return cls.train_model(sample, path, unit="sentence", vocab_size=vocab_size, num_threads=num_threads,
                               extra=("N" * max_piece_length,), model_type="bpe",
                               max_sentencepiece_length=max_piece_length, add_dummy_prefix=False,
                               split_by_whitespace=False)

    def decode(self, ids: Iterable[int]) -> str:
        """The DNA spelled by `ids`; special tokens decode to nothing."""
        return self._sp.decode([int(i) for i in ids])

    def offsets(self, sequence: str) -> list[tuple[int, int]]:
        """Each token's 0-based half-open bp span in `sequence`; the spans tile it exactly."""
        return self.token_spans(self.encode(sequence))

    def token_spans(self, ids: Sequence[int]) -> list[tuple[int, int]]:
        """The 0-based half-open bp span of each token of `ids` (DNA tokens only: specials span 0 bp)."""
        return self.tiling_spans(np.cumsum(self.piece_lengths[np.asarray(ids, dtype=np.int64)]).tolist())


def load_tokenizer(path: str | os.PathLike) -> DnaTokenizer:
    """The DNA tokenizer at `path`: a sentencepiece `.model` file (`Tokenizer`), a Hugging Face `tokenizer.json`
    (`dnabird.data.hf_tokenizer.HFTokenizer`), or a directory holding exactly one of them (e.g. a checkpoint)."""
    path = Path(path)
    if path.is_dir():
        found = sorted(path.glob("*.model")) + sorted(path.glob("tokenizer.json"))
        if len(found) != 1:
            raise InputFormatError(f"expected one tokenizer (a sentencepiece .model file or a tokenizer.json), "
                                   f"found {len(found)}{': ' if found else ''}{', '.join(p.name for p in found)}",
                                   path=path)
        path = found[0]
    if path.suffix == ".json":
        from dnabird.data.hf_tokenizer import HFTokenizer

        return HFTokenizer.load(path)
    return Tokenizer.load(path)


def corpus_sentences(corpus_dir: str | os.PathLike, split: str) -> Iterator[str]:
    """Every sentence sequence of one split of a corpus directory, in corpus order."""
    return (sentence.sequence for document in iter_documents(corpus_dir, split) for sentence in document.sentences)


def train_on_corpus(corpus_dir: str | os.PathLike, path: str | os.PathLike,
                    config: TokenizerConfig | None = None) -> tuple[Tokenizer, dict]:
    """Train on a corpus's `train` split; report bp/token on a seeded sample of `heldout` sentences."""
    config = config or TokenizerConfig()
    train = progress_bar(corpus_sentences(corpus_dir, "train"), desc="tokenizer sample", unit=" sentences")
    tokenizer = Tokenizer.train(train, path, vocab_size=config.vocab_size,
                                max_piece_length=config.max_piece_length,
                                sample_size=config.sample_sentences, seed=config.seed)
    heldout = reservoir_sample(progress_bar(corpus_sentences(corpus_dir, "heldout"), desc="tokenizer held-out",
                                            unit=" sentences"), config.heldout_sentences,
                               config.seed) if config.heldout_sentences else []
    report = {"config": dataclasses.asdict(config), "vocab_size": tokenizer.vocab_size,
              "tokenizer_hash": tokenizer.hash, "heldout_sentences": len(heldout),
              "heldout_bp_per_token": round(tokenizer.bp_per_token(heldout), 4) if heldout else None}
    return tokenizer, report
