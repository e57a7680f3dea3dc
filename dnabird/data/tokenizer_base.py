"""The tokenizer base classes: the interface every dnabird tokenizer (DNA, text, ListOps) offers, and its code.

`TokenizerBase`: the special ids (`pad_id` … `mask_id`, `special_ids`: every id that spells nothing), `hash`
(sha256 hex of the bytes that define the ids), padding to blocks (`pad_batch`, `encode_batch`) and `save`.
Backends: `SentencePieceTokenizer` (the DNA `Tokenizer`, `TextTokenizer`) and `TokenizersBackedTokenizer`
(`HFTokenizer`, `PretrainedTokenizer`). `DnaTokenizer` adds DNA input: the `alphabet` (lower case reads as
upper case; a character outside it is [UNK] where the tokenizer's model says so — `HFTokenizer` — and
otherwise an error naming the record), bp spans (`piece_lengths`, `offsets`), `unk_tokens` and `bp_per_token`.
Callers take every special id from the instance, never from a constant.
"""

from __future__ import annotations

import abc
import functools
import hashlib
import io
import os
import re
import string
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import sentencepiece as spm

from dnabird.errors import InputFormatError, ParameterError, reject
from dnabird.io import atomic_output

# the fixed layout of every tokenizer dnabird trains: [PAD]=0, [UNK]=1, [CLS]=2, [SEP]=3, [MASK]=4
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
SPECIAL_NAMES = ("pad", "unk", "cls", "sep", "mask")  # the special-id attributes: pad_id, unk_id, …
_ASCII_UPPER = str.maketrans(string.ascii_lowercase, string.ascii_uppercase)  # one character stays one


def check_sequence(sequence: str, record: str, alphabet: str) -> None:
    """Raise `InputFormatError` naming `record` if `sequence` holds a character outside `alphabet`."""
    bad = re.search(f"[^{re.escape(alphabet)}]", sequence)
    if bad is not None:
        raise InputFormatError(f"character {bad.group()!r} at offset {bad.start()}: expected only {alphabet} "
                               "(in either case: soft-masked lower case reads as upper case)", record=record)


class TokenizerBase(abc.ABC):
    """Special ids, `hash`, padding to blocks and `save` of the defining bytes; subclasses say what the ids are."""

    pad_id: int | None
    unk_id: int | None
    cls_id: int | None
    sep_id: int | None
    mask_id: int | None
    special_ids: frozenset[int]
    path: Path | None = None

    @abc.abstractmethod
    def definition(self) -> bytes:
        """The bytes that define the ids (their sha256 is `hash`, stored in checkpoints and shards)."""

    def serialized(self) -> bytes:
        """The bytes `save` writes (the file `load` reads back): `definition()` unless a subclass says other."""
        return self.definition()

    @property
    @abc.abstractmethod
    def vocab_size(self) -> int:
        """Ids in the vocabulary, special tokens included."""

    @abc.abstractmethod
    def id_to_piece(self, token_id: int) -> str:
        """The text of one token id."""

    @abc.abstractmethod
    def encode(self, texts, **options):
        """Token ids of one input (a list of ids) or of each of several (a list of lists), without [CLS]/[SEP]."""

    @abc.abstractmethod
    def decode(self, ids: Iterable[int]):
        """What `ids` spell; special tokens decode to nothing."""

    @functools.cached_property
    def hash(self) -> str:
        """sha256 hex of `definition()`."""
        return hashlib.sha256(self.definition()).hexdigest()

    @classmethod
    def existing_file(cls, path: str | os.PathLike) -> Path:
        """`path` as a Path; `InputFormatError` if it is no file."""
        path = Path(path)
        if not path.is_file():
            raise InputFormatError("tokenizer model file not found", path=path)
        return path

    def save(self, path: str | os.PathLike) -> Path:
        """Write `serialized()` to `path` (temp file + rename)."""
        path = Path(path)
        with atomic_output(path) as temporary:
            temporary.write_bytes(self.serialized())
        self.path = path
        return path

    @property
    def files(self) -> tuple[Path, ...]:
        """The files that define the tokenizer (copied into every checkpoint made with it)."""
        reject(self.path is None, "tokenizer", f"an unsaved {type(self).__name__}", "one saved to a file (.save)")
        return (self.path,)

    def encode_batch(self, texts: Sequence[str], *, block_size: int = 64, length: int | None = None,
                     truncate: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """`[CLS] text [SEP]` per input, padded with [PAD] to a multiple of `block_size` (see `pad_batch`)."""
        return self.pad_batch(self.encode(list(texts)), block_size=block_size, length=length, truncate=truncate)

    def pad_batch(self, rows: Sequence[Sequence[int]], *, block_size: int = 64, length: int | None = None,
                  truncate: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """`[CLS] ids [SEP]` per row of token ids, padded with [PAD] to a multiple of `block_size`.

        Returns `(ids, attention_mask)`, int64 and bool arrays of shape [batch, length]; the mask is True
        where a token is real. `length` fixes the padded length (a block multiple); by default the longest
        row is rounded up. A longer row is an error unless `truncate`, which keeps its first tokens (and the
        final [SEP]).
        """
        reject(block_size < 1, "block_size", block_size, "an integer >= 1")
        if length is not None and (length < 1 or length % block_size):
            raise ParameterError("length", length, f"a positive multiple of block_size={block_size}")
        if truncate and length is not None:
            rows = [ids[: length - 2] for ids in rows]
        rows = [[self.cls_id, *ids, self.sep_id] for ids in rows]
        longest = max((len(ids) for ids in rows), default=0)
        if length is None:
            length = max(block_size, -(-longest // block_size) * block_size)
        elif length < longest:
            raise ParameterError("length", length, f"a multiple of block_size={block_size} that is >= the "
                                 f"longest row ({longest} tokens), or truncate")
        ids = np.full((len(rows), length), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), length), dtype=bool)
        for row, tokens in enumerate(rows):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = True
        return ids, mask


class SentencePieceTokenizer(TokenizerBase):
    """A sentencepiece model (`.model` file); subclasses check its special pieces in `check_specials`."""

    def __init__(self, model_proto: bytes, *, path: str | os.PathLike | None = None, **options):
        self.path = Path(path) if path is not None else None
        self._model_proto, self._options = model_proto, options
        try:
            self._sp = spm.SentencePieceProcessor(model_proto=model_proto)
        except RuntimeError as err:
            raise InputFormatError(f"not a sentencepiece model ({err})", path=path) from err
        self.check_specials(path, **options)

    @abc.abstractmethod
    def check_specials(self, path: Path | None, **options) -> None:
        """Set the special ids (or fail naming `path`)."""

    def __getstate__(self) -> dict:
        """Pickle by model bytes (e.g. into DataLoader workers)."""
        return {"model_proto": self._model_proto, "path": self.path, **self._options}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    @classmethod
    def load(cls, path: str | os.PathLike, **options):
        """Read a sentencepiece `.model` file."""
        path = cls.existing_file(path)
        return cls(path.read_bytes(), path=path, **options)

    @classmethod
    def train_model(cls, sample: list[str], path: str | os.PathLike, *, unit: str, vocab_size: int,
                    num_threads: int | None, extra: tuple[str, ...] = (), **options):
        """Train on `sample` (of `unit`s) and `extra` with dnabird's special layout and no normalisation; write
        the model to `path`. `options`: the sentencepiece trainer's own."""
        model = io.BytesIO()
        try:
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter([*sample, *extra]), model_writer=model, vocab_size=vocab_size,
                pad_id=0, unk_id=1, bos_id=2, eos_id=3,
                pad_piece="[PAD]", unk_piece="[UNK]", bos_piece="[CLS]", eos_piece="[SEP]",
                control_symbols=["[MASK]"], character_coverage=1.0,
                normalization_rule_name="identity", remove_extra_whitespaces=False,
                max_sentence_length=1 << 20, input_sentence_size=0,
                num_threads=num_threads or os.cpu_count() or 1, minloglevel=2, **options,
            )
        except RuntimeError as err:
            raise ParameterError("vocab_size", vocab_size,
                                 f"a size the {len(sample)}-{unit} sample supports ({err})") from err
        tokenizer = cls(model.getvalue())
        tokenizer.save(path)
        return tokenizer

    def definition(self) -> bytes:
        return self._model_proto

    def encode(self, texts: str | Sequence[str], *, num_threads: int = 1) -> list[int] | list[list[int]]:
        """Token ids of one text (a list of ids) or of each of several (a list of lists)."""
        if isinstance(texts, str):
            return self._sp.encode(texts)
        return self._sp.encode(list(texts), num_threads=num_threads)

    def serialized(self) -> bytes:
        return self._sp.serialized_model_proto()

    @property
    def vocab_size(self) -> int:
        return self._sp.get_piece_size()

    def id_to_piece(self, token_id: int) -> str:
        return self._sp.id_to_piece(int(token_id))


class TokenizersBackedTokenizer(TokenizerBase):
    """A `tokenizers.Tokenizer` (`self._tokenizer`) behind dnabird's method names; `encode` adds no specials."""

    _tokenizer: object

    @property
    def vocab_size(self) -> int:
        return self._tokenizer.get_vocab_size(with_added_tokens=True)

    def id_to_piece(self, token_id: int) -> str:
        return self._tokenizer.id_to_token(int(token_id))

    def encode(self, texts: str | Sequence[str], *, num_threads: int = 1) -> list[int] | list[list[int]]:
        """Token ids of one text (a list) or of each of several (a list of lists), without special tokens;
        `num_threads` is unused (the library picks its own)."""
        if isinstance(texts, str):
            return self._tokenizer.encode(texts, add_special_tokens=False).ids
        return [encoding.ids for encoding in self._tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def decode(self, ids: Iterable[int]) -> str:
        """The text spelled by `ids`; special tokens decode to nothing."""
        return self._tokenizer.decode([int(i) for i in ids], skip_special_tokens=True)


class DnaTokenizer(TokenizerBase):
    """A tokenizer of DNA: subclasses also set `alphabet` (the upper-case letters with a piece of their own),
    `unknown_is_unk` (True: a character outside the alphabet is the unk token, as the tokenizer's model makes
    it; False: an error naming the record) and `offsets`."""

    alphabet: str
    unknown_is_unk: bool = False

    @abc.abstractmethod
    def offsets(self, sequence: str) -> list[tuple[int, int]]:
        """Each token's 0-based half-open bp span in `sequence`; the spans tile it exactly."""

    def encode(self, sequences: str | Sequence[str], *, record: str | None = None,
               num_threads: int = 1) -> list[int] | list[list[int]]:
        """Token ids of one sequence (a list of ids) or of each of several (a list of lists), no [CLS]/[SEP].

        Lower case (soft-masked repeats, as `Genome.fetch` returns them) reads as upper case. `record`
        names the input in errors; for a list the index is appended.
        """
        upper = self.checked_upper(sequences, record)
        if isinstance(sequences, str):
            return super().encode(upper[0])
        return super().encode(upper, num_threads=num_threads)

    def checked_upper(self, sequences: str | Sequence[str], record: str | None) -> list[str]:
        """The sequences with ASCII lower case upper-cased (each character stays one), each checked against
        `alphabet` unless `unknown_is_unk` (`record` names it, with the index appended for a list)."""
        single = isinstance(sequences, str)
        upper = [sequence.translate(_ASCII_UPPER) for sequence in ([sequences] if single else sequences)]
        if not self.unknown_is_unk:
            for index, sequence in enumerate(upper):
                check_sequence(sequence, f"{record or 'sequence'}{'' if single else f' {index}'}", self.alphabet)
        return upper

    def unk_tokens(self, sequence: str) -> int:
        """How many unk tokens `sequence` reads as: 0 where a character without a piece is an error, or where
        every character has a piece of its own (not encoded then); else the unk ids of its encoding."""
        if not self.unknown_is_unk or set(sequence.translate(_ASCII_UPPER)) <= set(self.alphabet):
            return 0
        return self.encode(sequence).count(self.unk_id)

    @staticmethod
    def tiling_spans(ends: Sequence[int]) -> list[tuple[int, int]]:
        """(start, end) spans that tile from 0 to `ends[-1]`, each starting where the one before ends."""
        return list(zip([0, *ends[:-1]], ends, strict=True))

    @functools.cached_property
    def piece_lengths(self) -> np.ndarray:
        """Base pairs each token id spells (int64 [vocab]; 0 for the special ids)."""
        return np.array([0 if i in self.special_ids else len(self.id_to_piece(i)) for i in range(self.vocab_size)],
                        dtype=np.int64)

    def bp_per_token(self, sentences: Iterable[str]) -> float:
        """Mean base pairs per token over `sentences` (total bp / total tokens)."""
        bases = tokens = 0
        for sentence in sentences:
            bases += len(sentence)
            tokens += len(self.encode(sentence))
        reject(tokens == 0, "sentences", "an empty stream", "at least one non-empty sentence")
        return bases / tokens
