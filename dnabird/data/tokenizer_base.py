"""`DnaTokenizer`: what every DNA tokenizer offers the rest of dnabird, and the methods built on it.

Two kinds implement it: `dnabird.data.tokenizer.Tokenizer` (sentencepiece BPE trained by dnabird, special
ids fixed at [PAD]=0 … [MASK]=4) and `dnabird.data.hf_tokenizer.HFTokenizer` (a Hugging Face
`tokenizer.json` that an imported checkpoint brings, with its own ids). Callers take every special id from
the instance, never from a constant: `pad_id`, `unk_id`, `cls_id`, `sep_id`, `mask_id`, and `special_ids`,
every id that spells no DNA (never masked, never drawn as a random replacement, 0 bp long).
Input is DNA in either case: soft-masked lower case reads as upper case.
"""

from __future__ import annotations

import abc
import functools
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from dnabird.errors import InputFormatError, ParameterError


def check_sequence(sequence: str, record: str, alphabet: str) -> None:
    """Raise `InputFormatError` naming `record` if `sequence` holds a character outside `alphabet`."""
    bad = re.search(f"[^{re.escape(alphabet)}]", sequence)
    if bad is not None:
        raise InputFormatError(f"character {bad.group()!r} at offset {bad.start()}: expected only {alphabet} "
                               "(in either case: soft-masked lower case reads as upper case)", record=record)


class DnaTokenizer(abc.ABC):
    """The tokenizer interface: encode/decode DNA, bp spans of tokens, special ids, padding to blocks.

    Subclasses set `pad_id`, `unk_id`, `cls_id`, `sep_id`, `mask_id`, `special_ids`, `alphabet` (the
    upper-case letters they encode) and `hash` (sha256 hex of what defines their ids).
    """

    pad_id: int
    unk_id: int
    cls_id: int
    sep_id: int
    mask_id: int
    special_ids: frozenset[int]
    alphabet: str
    hash: str

    @property
    @abc.abstractmethod
    def vocab_size(self) -> int:
        """Ids in the vocabulary, special tokens included."""

    @property
    @abc.abstractmethod
    def files(self) -> tuple[Path, ...]:
        """The files that define the tokenizer (copied into every checkpoint made with it)."""

    @abc.abstractmethod
    def id_to_piece(self, token_id: int) -> str:
        """The text of one token id."""

    @abc.abstractmethod
    def encode(self, sequences: str | Sequence[str], *, record: str | None = None,
               num_threads: int = 1) -> list[int] | list[list[int]]:
        """Token ids of one sequence (a list of ids) or of each of several (a list of lists), without [CLS]
        and [SEP]; `record` names the input in errors."""

    @abc.abstractmethod
    def decode(self, ids: Iterable[int]) -> str:
        """The DNA spelled by `ids`; special tokens decode to nothing."""

    @abc.abstractmethod
    def offsets(self, sequence: str) -> list[tuple[int, int]]:
        """Each token's 0-based half-open bp span in `sequence`; the spans tile it exactly."""

    def check(self, sequence: str, record: str) -> None:
        """Raise `InputFormatError` naming `record` if upper-case `sequence` holds a letter outside the alphabet."""
        check_sequence(sequence, record, self.alphabet)

    def checked_upper(self, sequences: str | Sequence[str], record: str | None) -> list[str]:
        """The sequences upper-cased, each checked (`record`, with the index appended for a list)."""
        if isinstance(sequences, str):
            upper = sequences.upper()
            self.check(upper, record or "sequence")
            return [upper]
        upper = [sequence.upper() for sequence in sequences]
        for index, sequence in enumerate(upper):
            self.check(sequence, f"{record or 'sequence'} {index}")
        return upper

    @functools.cached_property
    def piece_lengths(self) -> np.ndarray:
        """Base pairs each token id spells (int64 [vocab]; 0 for the special ids)."""
        return np.array([0 if i in self.special_ids else len(self.id_to_piece(i)) for i in range(self.vocab_size)],
                        dtype=np.int64)

    def encode_batch(self, sequences: Sequence[str], *, block_size: int = 64, length: int | None = None,
                     add_special_tokens: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """`[CLS] seq [SEP]` per sequence, padded with [PAD] to a multiple of `block_size` (see `pad_batch`)."""
        return self.pad_batch(self.encode(list(sequences)), block_size=block_size, length=length,
                              add_special_tokens=add_special_tokens)

    def pad_batch(self, rows: Sequence[Sequence[int]], *, block_size: int = 64, length: int | None = None,
                  add_special_tokens: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """`[CLS] ids [SEP]` per row of token ids, padded with [PAD] to a multiple of `block_size`.

        Returns `(ids, attention_mask)`, int64 and bool arrays of shape [batch, length]; the mask is
        True where a token is real. `length` fixes the padded length (it must be a block multiple
        that fits every row); by default the longest row is rounded up.
        """
        if block_size < 1:
            raise ParameterError("block_size", block_size, "an integer >= 1")
        if add_special_tokens:
            rows = [[self.cls_id, *ids, self.sep_id] for ids in rows]
        longest = max((len(ids) for ids in rows), default=0)
        if length is None:
            length = max(block_size, -(-longest // block_size) * block_size)
        elif length % block_size or length < longest:
            raise ParameterError("length", length,
                                 f"a multiple of block_size={block_size} that is >= {longest}")
        ids = np.full((len(rows), length), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), length), dtype=bool)
        for row, tokens in enumerate(rows):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = True
        return ids, mask

    def bp_per_token(self, sentences: Iterable[str]) -> float:
        """Mean base pairs per token over `sentences` (total bp / total tokens)."""
        bases = tokens = 0
        for sentence in sentences:
            bases += len(sentence)
            tokens += len(self.encode(sentence))
        if tokens == 0:
            raise ParameterError("sentences", "an empty stream", "at least one non-empty sentence")
        return bases / tokens
