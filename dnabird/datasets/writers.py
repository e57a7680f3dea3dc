"""Small writers for the toy genome's files: FASTA (+ .fai) and tab-separated tables."""

from __future__ import annotations

import pathlib
from collections.abc import Iterable

import numpy as np
import pyfaidx

from dnabird.io import atomic_output, write_text_atomic

FASTA_LINE_WIDTH = 60


def write_fasta(path: pathlib.Path, records: Iterable[tuple[str, np.ndarray]]) -> pathlib.Path:
    """Write (name, ASCII uint8 array) records as 60-column FASTA and build its `.fai` with pyfaidx."""
    with atomic_output(path) as tmp, open(tmp, "wb") as handle:
        for name, ascii_codes in records:
            text = ascii_codes.tobytes()
            handle.write(f">{name}\n".encode())
            handle.write(b"".join(text[start:start + FASTA_LINE_WIDTH] + b"\n"
                                  for start in range(0, len(text), FASTA_LINE_WIDTH)))
    fai = path.with_name(path.name + ".fai")
    with atomic_output(fai) as tmp:
        pyfaidx.Faidx(str(path), indexname=str(tmp), build_index=True).close()
    return fai


def write_table(path: pathlib.Path, rows: Iterable[Iterable[object]], header: str | None = None) -> None:
    """Write tab-separated rows (BED, TSV, predictor names), with an optional first line."""
    lines = ([] if header is None else [header]) + ["\t".join(map(str, row)) for row in rows]
    write_text_atomic(path, "".join(line + "\n" for line in lines))

