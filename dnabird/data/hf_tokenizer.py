"""`HFTokenizer`: a DNA tokenizer read from a Hugging Face `tokenizer.json`, as published checkpoints bring it.

The special tokens are the ones `special_tokens_map.json` (or `tokenizer_config.json`) beside it names, never
guessed, at the file's own ids (GENA-LM's: [UNK]=0, [CLS]=1, [SEP]=2, [PAD]=3, [MASK]=4). The ids are
transformers' `PreTrainedTokenizerFast` ids on the same file for upper-case input, [CLS]/[SEP] included: a
character with no piece of its own (an `N` where the file has no `N`, an IUPAC letter, a digit) is the file's
unk token, as its model makes it, and a run the normalizer replaces (GENA-LM: >= 10 N become `-`, which
decodes to nothing) is the normalizer's token. Two differences, both deliberate: lower case reads as upper
case (transformers makes GENA-LM's soft-masked bases [UNK]), and `offsets` gives a replaced run the whole
run's span (transformers: its last base), so the spans tile the sequence.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tokenizers import AddedToken, decoders, normalizers, processors
from tokenizers import Tokenizer as BackendTokenizer
from tokenizers.models import BPE

from dnabird.data.tokenizer_base import SPECIAL_NAMES, DnaTokenizer, TokenizersBackedTokenizer
from dnabird.errors import InputFormatError
from dnabird.io import write_json_atomic, write_text_atomic

TOKENIZER_FILE = "tokenizer.json"
SPECIAL_TOKENS_FILE = "special_tokens_map.json"
CONFIG_FILE = "tokenizer_config.json"


def read_special_tokens(directory: Path) -> dict[str, str]:
    """{name: token text} for pad/unk/cls/sep/mask from `special_tokens_map.json`, then `tokenizer_config.json`."""
    found: dict[str, str] = {}
    for name in (SPECIAL_TOKENS_FILE, CONFIG_FILE):
        path = directory / name
        if not path.is_file():
            continue
        try:
            stated = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise InputFormatError(f"not valid JSON ({err})", path=path) from None
        for special in SPECIAL_NAMES:
            text = stated.get(f"{special}_token") if isinstance(stated, dict) else None
            text = text.get("content") if isinstance(text, dict) else text  # a string or {"content": ...}
            if isinstance(text, str) and special not in found:
                found[special] = text
    missing = [f"{name}_token" for name in SPECIAL_NAMES if name not in found]
    if missing:
        raise InputFormatError(f"{', '.join(missing)} not stated: {SPECIAL_TOKENS_FILE} (or {CONFIG_FILE}) beside "
                               f"{TOKENIZER_FILE} must name each special token, e.g. "
                               '{"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]", '
                               '"sep_token": "[SEP]", "mask_token": "[MASK]"}', path=directory)
    return found


class HFTokenizer(DnaTokenizer, TokenizersBackedTokenizer):
    """A `tokenizers` tokenizer over DNA with the special tokens `special_tokens` names ({"pad": "[PAD]", …}).

    Use `HFTokenizer.load(directory or tokenizer.json)`.
    """

    unknown_is_unk = True  # as transformers: a character without a piece is the unk token, never an error

    def __init__(self, tokenizer_json: str, special_tokens: dict[str, str], *, path: str | os.PathLike | None = None):
        self.path = Path(path) if path is not None else None
        self._json, self.special_tokens = tokenizer_json, dict(special_tokens)
        try:
            self._tokenizer = BackendTokenizer.from_str(tokenizer_json)
        except Exception as err:  # the library raises a bare Exception for every parse failure
            raise InputFormatError(f"not a Hugging Face tokenizer.json ({err})", path=path) from None
        for name in SPECIAL_NAMES:
            token_id = self._tokenizer.token_to_id(special_tokens[name])
            if token_id is None:
                raise InputFormatError(f"{name}_token {special_tokens[name]!r} is not in the vocabulary", path=path)
            setattr(self, f"{name}_id", token_id)
        added = {token.content for token in self._tokenizer.get_added_tokens_decoder().values() if token.special}
        self.special_ids = frozenset(self._tokenizer.token_to_id(t) for t in added | set(special_tokens.values()))
        letters = {piece for piece in self._tokenizer.get_vocab(with_added_tokens=False)
                   if len(piece) == 1 and piece.isascii() and piece.isupper()}
        self.alphabet = "".join(sorted(letters - {self._tokenizer.id_to_token(i) for i in self.special_ids}))
        if not set("ACGT") <= set(self.alphabet):
            raise InputFormatError(f"not a DNA tokenizer: its single-letter pieces are {self.alphabet!r}, "
                                   "without all of A, C, G, T", path=path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> HFTokenizer:
        """Read `tokenizer.json` and the special-token names beside it (`path`: the file or its directory)."""
        path = Path(path)
        file = path / TOKENIZER_FILE if path.is_dir() else path
        if file.name != TOKENIZER_FILE:
            raise InputFormatError(f"expected a file named {TOKENIZER_FILE} (with {SPECIAL_TOKENS_FILE} beside it)",
                                   path=path)
        return cls(cls.existing_file(file).read_text(), read_special_tokens(file.parent), path=file)

    def __getstate__(self) -> dict:
        return {"tokenizer_json": self._json, "special_tokens": self.special_tokens, "path": self.path}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    def definition(self) -> bytes:
        return self._json.encode() + json.dumps(self.special_tokens, sort_keys=True).encode()

    def serialized(self) -> bytes:
        return self._json.encode()

    @property
    def files(self) -> tuple[Path, ...]:
        if self.path is None:
            raise InputFormatError("this tokenizer was not read from a file: write it with write_hf_tokenizer_files")
        return tuple(p for p in (self.path, self.path.parent / SPECIAL_TOKENS_FILE, self.path.parent / CONFIG_FILE)
                     if p.is_file())

    def offsets(self, sequence: str) -> list[tuple[int, int]]:
        """Each token's 0-based half-open bp span in `sequence`, tiling it: a token that stands for a replaced
        run (GENA-LM's `-`) spans the whole run, an unk token the character(s) it stands for."""
        upper = self.checked_upper(sequence, None)[0]
        return self.tiling_spans([end for _, end in self._tokenizer.encode(upper, add_special_tokens=False).offsets])


def sentencepiece_to_tokenizer_json(tokenizer) -> str:
    """dnabird's sentencepiece BPE `Tokenizer` as a `tokenizers` BPE `tokenizer.json`: the same pieces at the
    same ids; merges ordered by the merged piece's rank, as sentencepiece applies them; lower case
    upper-cased by the normalizer; `[CLS] … [SEP]` added by the post-processor."""
    pieces = [tokenizer.id_to_piece(i) for i in range(tokenizer.vocab_size)]
    vocab = {piece: i for i, piece in enumerate(pieces)}
    special = {pieces[i] for i in tokenizer.special_ids}
    merges = [(piece[:k], piece[k:]) for piece in pieces if piece not in special
              for k in range(1, len(piece)) if piece[:k] in vocab and piece[k:] in vocab]
    backend = BackendTokenizer(BPE(vocab, merges, unk_token=pieces[tokenizer.unk_id]))
    backend.add_special_tokens([AddedToken(pieces[i], special=True, normalized=False)
                                for i in sorted(tokenizer.special_ids)])
    backend.normalizer = normalizers.Sequence([normalizers.Replace(base.lower(), base)
                                               for base in tokenizer.alphabet])
    backend.post_processor = processors.BertProcessing((pieces[tokenizer.sep_id], tokenizer.sep_id),
                                                       (pieces[tokenizer.cls_id], tokenizer.cls_id))
    backend.decoder = decoders.Fuse()
    return backend.to_str()


def write_hf_tokenizer_files(tokenizer: DnaTokenizer, directory: str | os.PathLike, *, max_length: int) -> None:
    """`tokenizer.json`, `special_tokens_map.json` and `tokenizer_config.json` in `directory`, so that
    transformers' `AutoTokenizer.from_pretrained(directory)` gives dnabird's ids: an `HFTokenizer`'s own
    `tokenizer.json` unchanged, a sentencepiece `Tokenizer` converted (`sentencepiece_to_tokenizer_json`)."""
    directory = Path(directory)
    text = tokenizer._json if isinstance(tokenizer, HFTokenizer) else sentencepiece_to_tokenizer_json(tokenizer)
    special = {f"{name}_token": tokenizer.id_to_piece(getattr(tokenizer, f"{name}_id")) for name in SPECIAL_NAMES}
    write_text_atomic(directory / TOKENIZER_FILE, text)
    write_json_atomic(directory / SPECIAL_TOKENS_FILE, special)
    write_json_atomic(directory / CONFIG_FILE, {"tokenizer_class": "PreTrainedTokenizerFast",
                                                "model_max_length": max_length, **special})

