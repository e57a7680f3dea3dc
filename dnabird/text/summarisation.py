"""Summarising documents with an encoder-decoder checkpoint (imported LED / BigBird-Pegasus, or trained by the
`summarise` task): its own tokenizer, its own special tokens around each document, generation settings.

A document longer than the encoder's positions is cut to its first tokens with a warning that says how many
were cut (`on_long="truncate"`, the default) or refused (`on_long="error"`); an empty document is an error
that names it. `summarise(model_dir, documents)` is the one-call API; `dnabird text summarise` the command.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from dnabird.data.text import read_jsonl
from dnabird.errors import InputFormatError, reject
from dnabird.io import write_text_atomic
from dnabird.model.checkpoint import read_tokenizer
from dnabird.model.generation import GenerationSettings, generate
from dnabird.model.seq2seq import EncoderDecoder, load_seq2seq
from dnabird.progress import progress_bar

log = logging.getLogger(__name__)
ON_LONG = ("truncate", "error")


def load_tokenizer(directory: str | os.PathLike):
    """The tokenizer a checkpoint carries: an imported `tokenizer.json`, or dnabird's sentencepiece `.model`."""
    from dnabird.data.pretrained_tokenizer import FILE, PretrainedTokenizer
    from dnabird.data.text_tokenizer import TextTokenizer

    if (Path(directory) / FILE).is_file():
        return PretrainedTokenizer.load(Path(directory) / FILE)
    return read_tokenizer(directory, TextTokenizer)


def template(tokenizer) -> tuple[list[int], list[int]]:
    """The special tokens a tokenizer's checkpoint puts before and after a text: an imported tokenizer's own
    (LED `<s> … </s>`, Pegasus `… </s>`), dnabird's `[CLS] … [SEP]`."""
    if hasattr(tokenizer, "template"):
        return tokenizer.template()
    return [tokenizer.cls_id], [tokenizer.sep_id]


@dataclass
class EncodedDocuments:
    """Token ids of documents with their special tokens, and how many tokens truncation cut from each."""

    ids: list[list[int]]
    cut: list[int] = field(default_factory=list)

    @property
    def truncated(self) -> int:
        return sum(1 for c in self.cut if c)


def encode_documents(tokenizer, documents: Sequence[str], *, max_length: int, on_long: str = "truncate",
                     names: Sequence[str] | None = None) -> EncodedDocuments:
    """Each document as `prefix tokens suffix` of at most `max_length` tokens (see the module docstring);
    `names` name the documents in errors and warnings (default: "document <index>")."""
    reject(on_long not in ON_LONG, "on_long", on_long, f"one of {ON_LONG}")
    names = names or [f"document {i}" for i in range(len(documents))]
    prefix, suffix = template(tokenizer)
    room = max_length - len(prefix) - len(suffix)
    reject(room < 1, "max_length", max_length, f"more than the {len(prefix) + len(suffix)} special tokens")
    out = EncodedDocuments([], [])
    for name, document, tokens in zip(names, documents, tokenizer.encode(list(documents)), strict=True):
        if not document.strip() or not tokens:
            raise InputFormatError("empty document: nothing to summarise", record=name)
        cut = max(0, len(tokens) - room)
        if cut and on_long == "error":
            raise InputFormatError(f"{len(tokens) + len(prefix) + len(suffix)} tokens, more than the "
                                   f"{max_length} the encoder reads (on_long='truncate' keeps the first ones)",
                                   record=name)
        out.ids.append([*prefix, *tokens[:room], *suffix])
        out.cut.append(cut)
    if out.truncated:
        log.warning("%d of %d documents were longer than %d tokens: kept their first tokens, cut %d tokens in all "
                    "(at most %d from one)", out.truncated, len(documents), max_length, sum(out.cut), max(out.cut))
    return out


def pad_batch(rows: Sequence[Sequence[int]], pad_id: int, multiple: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """int64 ids [N, L] and their bool mask (True at real tokens), L the longest row rounded up to a `multiple`."""
    length = -(-max(map(len, rows)) // multiple) * multiple
    ids = torch.full((len(rows), length), pad_id, dtype=torch.long)
    mask = torch.zeros(len(rows), length, dtype=torch.bool)
    for i, row in enumerate(rows):
        ids[i, :len(row)] = torch.as_tensor(row, dtype=torch.long)
        mask[i, :len(row)] = True
    return ids, mask


class Summariser:
    """An encoder-decoder, its tokenizer and how it generates (`GenerationSettings`); `max_length`: encoder
    tokens per document (default: all the model's positions), `on_long`: "truncate" or "error"."""

    def __init__(self, model: EncoderDecoder, tokenizer, *, settings: GenerationSettings | None = None,
                 max_length: int | None = None, on_long: str = "truncate", batch_size: int = 4,
                 device: str | torch.device = "cpu"):
        encoder = model.config.encoder
        positions = encoder.max_positions - encoder.position_offset
        settings = settings or GenerationSettings()
        self.model, self.tokenizer, self.settings = model.to(device).eval(), tokenizer, settings
        self.max_length = positions if max_length is None else max_length
        reject(not 0 < self.max_length <= positions, "max_length", max_length,
               f"at most the encoder's {positions} positions")
        reject(settings.max_length + 1 > model.config.max_decoder_positions, "max_length of generation",
               settings.max_length, f"below the decoder's {model.config.max_decoder_positions} positions")
        self.on_long, self.batch_size, self.device = on_long, batch_size, device
        self.length_multiple = encoder.length_multiple

    @classmethod
    def load(cls, directory: str | os.PathLike, **options) -> Summariser:
        """The checkpoint in `directory` (an encoder-only one is refused, named as such)."""
        return cls(load_seq2seq(directory), load_tokenizer(directory), **options)

    def summarise(self, documents: Sequence[str], *, names: Sequence[str] | None = None,
                  encoded: EncodedDocuments | None = None) -> list[str]:
        """One summary per document, in order."""
        encoded = encoded or encode_documents(self.tokenizer, documents, max_length=self.max_length,
                                              on_long=self.on_long, names=names)
        pad = self.tokenizer.pad_id if self.tokenizer.pad_id is not None else 0
        summaries = []
        for start in progress_bar(range(0, len(encoded.ids), self.batch_size), desc="summarising", unit=" batches"):
            rows = encoded.ids[start:start + self.batch_size]
            ids, mask = pad_batch(rows, pad, self.length_multiple)
            outputs = generate(self.model, ids.to(self.device), mask.to(self.device), settings=self.settings)
            summaries += [self.tokenizer.decode(tokens).strip() for tokens in outputs]
        return summaries


def summarise(model_dir: str | os.PathLike, documents: str | Sequence[str], **options) -> str | list[str]:
    """Summaries of `documents` (one text, or a list) by the checkpoint in `model_dir`. `options`: `settings`
    (`GenerationSettings`), `max_length`, `on_long`, `batch_size`, `device` (see `Summariser`)."""
    single = isinstance(documents, str)
    out = Summariser.load(model_dir, **options).summarise([documents] if single else list(documents))
    return out[0] if single else out


def read_documents(path: Path, document_field: str) -> tuple[list[str], list[dict] | None]:
    """A .jsonl file's documents and records (each record's `document_field`), or a text file as one document."""
    if not path.is_file():
        raise InputFormatError("input file not found", path=path)
    if path.suffix != ".jsonl":
        return [path.read_text(encoding="utf-8")], None
    records = []
    for number, record in read_jsonl(path):
        document = record.get(document_field)
        if not isinstance(document, str):
            raise InputFormatError(f"expected a JSON object with a string {document_field!r} field (got "
                                   f"{type(document).__name__})", path=path, line=number)
        records.append(record)
    return [r[document_field] for r in records], records


def summarise_files(summariser: Summariser, paths: Sequence[str | os.PathLike], *,
                    document_field: str = "document") -> list[Path]:
    """Summarise each file, writing beside it: `<name>.summary.txt` for a text file (one document),
    `<name>.summaries.jsonl` for a JSONL file (each record with a "summary" added). Returns what was written."""
    written = []
    for path in map(Path, paths):
        documents, records = read_documents(path, document_field)
        names = [f"{path} record {i + 1}" for i in range(len(documents))] if records is not None else [str(path)]
        summaries = summariser.summarise(documents, names=names)
        if records is None:
            out = path.with_name(f"{path.stem}.summary.txt")
            write_text_atomic(out, summaries[0] + "\n")
        else:
            out = path.with_name(f"{path.stem}.summaries.jsonl")
            write_text_atomic(out, "".join(json.dumps({**r, "summary": s}) + "\n"
                                           for r, s in zip(records, summaries, strict=True)))
        written.append(out)
    return written
