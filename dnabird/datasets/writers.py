"""Small writers for the toy genome's files: FASTA (+ .fai) and tab-separated tables."""

from __future__ import annotations

import pathlib
from collections.abc import Iterable

import numpy as np
import pyfaidx

from dnabird.io import atomic_output

FASTA_LINE_WIDTH = 60


def write_fasta(path: pathlib.Path, records: Iterable[tuple[str, np.ndarray]]) -> pathlib.Path:
    """Write (name, ASCII uint8 array) records as 60-column FASTA and build its `.fai` with pyfaidx."""
    with atomic_output(path) as tmp, open(tmp, "wb") as handle:
        for name, ascii_codes in records:
            handle.write(f">{name}\n".encode())
            width, length = FASTA_LINE_WIDTH, len(ascii_codes)
            rows = -(-length // width)
            flat = np.zeros(rows * width, dtype=np.uint8)
            flat[:length] = ascii_codes
            block = np.empty((rows, width + 1), dtype=np.uint8)
            block[:, :width] = flat.reshape(rows, width)
            block[:, width] = ord("\n")
            text = block.tobytes()
            tail = rows * width - length
            if tail:  # the last line is short: drop its padding, keep one newline
                text = text[: -(tail + 1)] + b"\n"
            handle.write(text)
    fai = path.with_name(path.name + ".fai")
    with atomic_output(fai) as tmp:
        pyfaidx.Faidx(str(path), indexname=str(tmp), build_index=True).close()
    return fai


def write_table(path: pathlib.Path, rows: Iterable[Iterable[object]], header: str | None = None) -> None:
    """Write tab-separated rows (BED, TSV, predictor names), with an optional first line."""
    with atomic_output(path) as tmp, open(tmp, "w", encoding="ascii", newline="\n") as handle:
        if header is not None:
            handle.write(header + "\n")
        for row in rows:
            handle.write("\t".join(str(value) for value in row) + "\n")

