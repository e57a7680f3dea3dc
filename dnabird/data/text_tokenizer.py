"""Text tokenizer: a sentencepiece model for natural language, the sibling of the DNA `Tokenizer`.

The DNA `Tokenizer`'s method names and special-id attributes (`pad_id` … `mask_id`):

- A model trained here has dnabird's fixed layout [PAD]=0, [UNK]=1, [CLS]=2, [SEP]=3, [MASK]=4, counted in
  the vocabulary size. It normalises nothing and keeps every space, with byte fallback: any Unicode text
  decodes back exactly (`decode(encode(text)) == text`).
- An existing model (e.g. the `spiece.model` of `google/bigbird-roberta-base`, whose config states <pad>=0,
  <s>=1, </s>=2, [SEP]=66) keeps its own ids behind the same attribute names, found by piece name
  (`SPECIAL_PIECES`, first match wins: [CLS] before <s>, as Hugging Face's BigBird tokenizer uses it) or
  given explicitly with `special_pieces`.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from dnabird.data.text import read_documents
from dnabird.data.tokenizer import reservoir_sample
from dnabird.data.tokenizer_base import SPECIAL_NAMES, SPECIAL_TOKENS, SentencePieceTokenizer
from dnabird.errors import InputFormatError, reject

# piece names tried for each special id of an imported model, in order (dnabird/BERT/ALBERT, then RoBERTa/T5)
SPECIAL_PIECES = {"pad": ("[PAD]", "<pad>"), "unk": ("[UNK]", "<unk>"), "cls": ("[CLS]", "<s>"),
                  "sep": ("[SEP]", "</s>"), "mask": ("[MASK]", "<mask>")}
MODEL_TYPES = ("unigram", "bpe", "word", "char")
_BYTE_PIECE = re.compile(r"<0x([0-9A-F]{2})>")


@dataclass(frozen=True)
class TextTokenizerConfig:
    """How a text tokenizer is trained on text files (`train_on_files`).

    vocab_size: pieces including the 5 special tokens (and, with byte_fallback, the 256 byte pieces); an
        upper bound: a text too small to offer that many pieces yields fewer (`TextTokenizer.vocab_size`).
    model_type: sentencepiece's "unigram" (BigBird, ALBERT), "bpe", "word" (whitespace-separated words:
        one token per word) or "char".
    byte_fallback: unseen characters become their UTF-8 bytes instead of [UNK], so every text round-trips.
    sample_lines: lines (paragraphs) sampled into memory for training; seed: seed of the sample.
    text_field: the JSONL field holding a document.
    files: the text files or directories to train on (plain text or JSONL); inside `dnabird run`, null means
        the `text_data` stage's output named by `source` (e.g. "documents_train", "long_range_train").
    """

    files: list[str] | str | None = None
    source: str = "documents_train"
    vocab_size: int = 32000
    model_type: str = "unigram"
    byte_fallback: bool = True
    sample_lines: int = 1_000_000
    seed: int = 0
    text_field: str = "text"

    def __post_init__(self):
        reject(self.model_type not in MODEL_TYPES, "model_type", self.model_type, f"one of {MODEL_TYPES}")
        minimum = len(SPECIAL_TOKENS) + (256 if self.byte_fallback else 0)
        reject(self.vocab_size <= minimum, "vocab_size", self.vocab_size,
               f"an integer > {minimum} (5 specials{' + 256 byte pieces' * self.byte_fallback})")
        reject(self.sample_lines < 1, "sample_lines", self.sample_lines, "an integer >= 1")


class TextTokenizer(SentencePieceTokenizer):
    """A sentencepiece text model: `TextTokenizer.train(...)` builds one, `TextTokenizer.load(path)` reads any."""

    def check_specials(self, path, special_pieces: dict[str, str] | None = None) -> None:
        given = dict(special_pieces or {})
        reject(bool(set(given) - set(SPECIAL_NAMES)), "special_pieces", given, f"keys among {SPECIAL_NAMES}")
        found, missing = {}, []
        for name in SPECIAL_NAMES:
            candidates = (given[name],) if name in given else SPECIAL_PIECES[name]
            piece = next((p for p in candidates if self._sp.id_to_piece(self._sp.piece_to_id(p)) == p), None)
            if piece is None and name == "unk":
                piece = self._sp.id_to_piece(self._sp.unk_id())
            if piece is None:
                missing.append(f"{name} (tried {', '.join(candidates)})")
            found[name] = piece
        if missing:
            raise InputFormatError(f"the model has no piece for {'; '.join(missing)}: name them with "
                                   "special_pieces={'cls': '<piece>', ...}", path=path)
        self.special_pieces, self._options = found, {"special_pieces": found}
        for name, piece in found.items():
            setattr(self, f"{name}_id", self._sp.piece_to_id(piece))
        self.special_ids = frozenset(getattr(self, f"{name}_id") for name in SPECIAL_NAMES) | frozenset(
            i for i in range(self.vocab_size) if self._sp.is_control(i))

    @classmethod
    def train(cls, lines: Iterable[str], path: str | os.PathLike, *,
              vocab_size: int = TextTokenizerConfig.vocab_size,
              model_type: str = TextTokenizerConfig.model_type,
              byte_fallback: bool = TextTokenizerConfig.byte_fallback,
              sample_size: int = TextTokenizerConfig.sample_lines, seed: int = 0,
              num_threads: int | None = None) -> TextTokenizer:
        """Train on a seeded reservoir sample of `lines` and write the model to `path` atomically (the settings:
        see `TextTokenizerConfig`)."""
        TextTokenizerConfig(vocab_size=vocab_size, model_type=model_type, byte_fallback=byte_fallback,
                            sample_lines=sample_size)  # validates the settings
        sample = reservoir_sample((line for line in lines if line.strip()), sample_size, seed)
        reject(not sample, "lines", "an empty stream", "at least one non-blank training line")
        return cls.train_model(sample, path, unit="line", vocab_size=vocab_size, num_threads=num_threads,
                               model_type=model_type, byte_fallback=byte_fallback, hard_vocab_limit=False)

    def decode(self, ids: Iterable[int]) -> str:
        """The text spelled by `ids`; special tokens decode to nothing."""
        return self._sp.decode([int(i) for i in ids if int(i) not in self.special_ids])

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Each token's 0-based half-open character span in `text`, from sentencepiece's byte spans: the pieces of
        one byte-fallback character share its span; a piece that stands for no character (a leading ▁) has none."""
        pieces = self._sp.encode(text, out_type="proto").pieces
        widths = [len(char.encode("utf-8")) for char in text] + [1]
        char_of_byte = np.repeat(np.arange(len(text) + 1, dtype=np.int64), widths)  # byte offset -> char index
        spans, pending = [], 0
        for piece in pieces:
            if piece.begin == piece.end and _BYTE_PIECE.fullmatch(piece.piece):
                pending += 1  # a leading byte of a multi-byte character: spans come with its last byte
                continue
            span = (int(char_of_byte[piece.begin]), int(char_of_byte[piece.end]))
            spans += [span] * (pending + 1)
            pending = 0
        return spans

    def char_lengths(self) -> np.ndarray:
        """Characters each token id spells (int [vocab]): ▁ counts as a space; a byte piece counts 1 if it
        starts a character (ASCII or a UTF-8 lead byte) and 0 if it continues one; special tokens 0."""
        lengths = np.zeros(self.vocab_size, dtype=np.int64)
        for token_id in range(self.vocab_size):
            if token_id in self.special_ids or self._sp.is_unknown(token_id):
                continue
            piece = self._sp.id_to_piece(token_id)
            byte = _BYTE_PIECE.fullmatch(piece) if self._sp.is_byte(token_id) else None
            lengths[token_id] = (int(byte.group(1), 16) & 0xC0 != 0x80) if byte else len(piece)
        return lengths


def train_on_files(paths, out: str | os.PathLike, config: TextTokenizerConfig | None = None) -> TextTokenizer:
    """Train a text tokenizer on the lines of the documents in `paths` (plain text or JSONL, see
    `dnabird.data.text`; None: `config.files`)."""
    config = config or TextTokenizerConfig()
    paths = config.files if paths is None else paths
    reject(paths is None, "files", None, "text files or directories to train on")
    lines = (line for document in read_documents(paths, text_field=config.text_field)
             for line in document.split("\n"))
    return TextTokenizer.train(lines, out, vocab_size=config.vocab_size, model_type=config.model_type,
                               byte_fallback=config.byte_fallback, sample_size=config.sample_lines,
                               seed=config.seed)


def tokenizer_report(tokenizer: TextTokenizer, config: TextTokenizerConfig) -> dict:
    """What `train_on_files` made: settings, vocabulary size, hash and special ids."""
    return {"config": dataclasses.asdict(config), "vocab_size": tokenizer.vocab_size, "tokenizer_hash": tokenizer.hash,
            "special_ids": {name: getattr(tokenizer, f"{name}_id") for name in SPECIAL_NAMES}}
