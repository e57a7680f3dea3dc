"""Labelled documents for text classification: JSONL (`{"text": ..., "label": ...}` per line) or TSV (a header
row naming the columns, one record per line, tab-separated, no quoting: a text holds no tab or newline).

Labels are kept as strings (a JSONL integer label 1 becomes "1"); errors name the file and line.
"""

from __future__ import annotations

import os
from pathlib import Path

from dnabird.data.text import JSONL_SUFFIX, read_jsonl
from dnabird.errors import InputFormatError


def read_labelled(path: str | os.PathLike, *, text_field: str = "text",
                  label_field: str = "label") -> tuple[list[str], list[str]]:
    """(texts, labels) of a JSONL or TSV file (by suffix: `.jsonl`, else TSV)."""
    path = Path(path)
    if not path.is_file():
        raise InputFormatError("labelled text file not found", path=path)
    texts, labels = [], []
    if path.suffix == JSONL_SUFFIX:
        for number, record in read_jsonl(path):
            text, label = record.get(text_field), record.get(label_field)
            if not isinstance(text, str) or not isinstance(label, (str, int)) or isinstance(label, bool):
                raise InputFormatError(f"expected a string {text_field!r} and a string or integer {label_field!r}, "
                                       f"got {type(text).__name__} and {type(label).__name__}", path=path, line=number)
            texts.append(text)
            labels.append(str(label))
        return texts, labels
    with path.open(encoding="utf-8") as handle:
        header = handle.readline().rstrip("\r\n").split("\t")
        for name in (text_field, label_field):
            if name not in header:
                raise InputFormatError(f"the header names no {name!r} column (columns: {header})", path=path, line=1)
        text_at, label_at = header.index(text_field), header.index(label_field)
        for number, line in enumerate(handle, start=2):
            if not line.strip():
                continue
            cells = line.rstrip("\r\n").split("\t")
            if len(cells) != len(header):
                raise InputFormatError(f"expected {len(header)} tab-separated columns, got {len(cells)}",
                                       path=path, line=number)
            texts.append(cells[text_at])
            labels.append(cells[label_at])
    return texts, labels
