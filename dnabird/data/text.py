"""Text documents from plain-text or JSONL files, the input of the text tokenizer and text pretraining.

- Plain text (any suffix but `.jsonl`): documents are separated by one or more blank lines (BERT's
  pretraining-data convention); a file without blank lines is one document. Line breaks inside a document
  are kept.
- JSONL (`.jsonl`): one JSON object per line, the document in its `text_field` (default "text").

Files are read as UTF-8; a decoding error or a malformed record names the file and line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from dnabird.errors import InputFormatError

JSONL_SUFFIX = ".jsonl"


def text_files(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    """The files named by `paths` (a file, a directory searched for *.txt and *.jsonl, or several), sorted
    within each directory; a missing path is an error."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in (".txt", JSONL_SUFFIX))
            if not found:
                raise InputFormatError("no *.txt or *.jsonl files in this directory", path=path)
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise InputFormatError("text file or directory not found", path=path)
    return files


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise InputFormatError(f"not UTF-8 ({err.reason} at byte {err.start} of the line)",
                                       path=path, line=number) from None


def read_documents(paths: str | os.PathLike | Iterable[str | os.PathLike], *,
                   text_field: str = "text") -> Iterator[str]:
    """Every non-empty document of `paths` (see `text_files`), in order."""
    for path in text_files(paths):
        if path.suffix == JSONL_SUFFIX:
            yield from _jsonl_documents(path, text_field)
        else:
            yield from _plain_documents(path)


def _plain_documents(path: Path) -> Iterator[str]:
    lines: list[str] = []
    for _, line in _lines(path):
        if line.strip():
            lines.append(line)
        elif lines:
            yield "".join(lines).rstrip("\r\n")
            lines = []
    if lines:
        yield "".join(lines).rstrip("\r\n")


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSONL file."""
    path = Path(path)
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputFormatError(f"not valid JSON ({err.msg} at column {err.colno})", path=path,
                                   line=number) from None
        if not isinstance(record, dict):
            raise InputFormatError(f"expected a JSON object, got {type(record).__name__}", path=path, line=number)
        yield number, record


def _jsonl_documents(path: Path, text_field: str) -> Iterator[str]:
    for number, record in read_jsonl(path):
        text = record.get(text_field)
        if not isinstance(text, str):
            raise InputFormatError(f"expected a string field {text_field!r}, got {type(text).__name__} "
                                   f"(keys: {sorted(record)[:8]})", path=path, line=number)
        if text.strip():
            yield text
