"""What `predict` runs a head over, read lazily in input order: `SequenceRecord`s (a sequence table or FASTA, one
row per sequence) and `Region`s (a BED / TSV / CSV / parquet of regions, or the tiles of regions of a
genome). Coordinates are 0-based half-open; a region's `row` is its number in the input (from 0)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pysam

from dnabird.errors import InputFormatError, ParameterError, reject
from dnabird.genome.bed import read_bed
from dnabird.genome.reference import Genome
from dnabird.inference.windows import parse_region

FASTA_SUFFIXES = (".fa", ".fasta", ".fna", ".fa.gz", ".fasta.gz", ".fna.gz")
REGION_COLUMNS = ("chrom", "start", "end")  # required in a region table; "strand" and "name" are optional


@dataclass(frozen=True)
class SequenceRecord:
    """One input sequence, its `id` (the FASTA name or the table's id column, else the row number)."""

    row: int
    id: str
    sequence: str


@dataclass(frozen=True)
class Region:
    """A genomic region: `strand` "+", "-" or "." (none given); `name` from the input, else chrom:start-end
    (1-based inclusive, as samtools writes a region)."""

    row: int
    chrom: str
    start: int
    end: int
    strand: str = "."
    name: str = ""

    @property
    def label(self) -> str:
        return self.name or f"{self.chrom}:{self.start + 1}-{self.end}"


def _is_fasta(path: Path) -> bool:
    return path.name.lower().endswith(FASTA_SUFFIXES)


def _read_table(path: Path) -> pd.DataFrame:
    """A CSV (.csv), parquet (.parquet) or tab-separated table (anything else), every column as read."""
    if not path.is_file():
        raise InputFormatError("file not found", path=path)
    name = path.name.lower()
    if name.endswith(".parquet"):
        return pd.read_parquet(path)
    return pd.read_csv(path, sep="," if name.endswith((".csv", ".csv.gz")) else "\t", dtype=str,
                       keep_default_na=False, comment=None)


def read_sequences(source: str | os.PathLike | Sequence[str], column: str = "sequence",
                   id_column: str = "id") -> Iterator[SequenceRecord]:
    """The sequences of a FASTA (plain or gzip), of a table's `column` (ids from `id_column` when it has
    one), or of a list of strings."""
    if not isinstance(source, (str, os.PathLike)):
        reject(not all(isinstance(s, str) for s in source), "sequences", type(source).__name__,
               "a FASTA or table path, or a list of sequences")
        yield from (SequenceRecord(row, str(row), text) for row, text in enumerate(source))
        return
    path = Path(source)
    if _is_fasta(path):
        if not path.is_file():
            raise InputFormatError("FASTA file not found", path=path)
        with pysam.FastxFile(str(path)) as handle:
            yield from (SequenceRecord(row, record.name, record.sequence or "") for row, record in enumerate(handle))
        return
    table = _read_table(path)
    if column not in table.columns:
        raise InputFormatError(f"no column {column!r} (columns: {', '.join(map(str, table.columns))}); name the "
                               "sequence column with --sequence-column", path=path)
    ids = table[id_column].astype(str) if id_column in table.columns else pd.Series(range(len(table))).astype(str)
    for row, (name, text) in enumerate(zip(ids, table[column], strict=True)):
        if not isinstance(text, str):
            raise InputFormatError(f"row {row + 1}: {column}={text!r} is not a sequence", path=path)
        yield SequenceRecord(row, name, text)


def read_regions(path: str | os.PathLike) -> Iterator[Region]:
    """The regions of a BED (.bed, .bed.gz; strand and name from its columns) or of a table with columns
    chrom, start, end (0-based half-open, as BED) and optionally strand and name."""
    path = Path(path)
    if path.name.lower().endswith((".bed", ".bed.gz", ".bed.bgz")):
        for row, record in enumerate(read_bed(path)):
            yield Region(row, record.chrom, record.start, record.end, record.strand or ".", record.name or "")
        return
    table = _read_table(path)
    missing = [c for c in REGION_COLUMNS if c not in table.columns]
    if missing:
        raise InputFormatError(f"no column(s) {missing} (a region table has columns chrom, start, end and "
                               f"optionally strand, name; found {', '.join(map(str, table.columns))})", path=path)
    strands = table["strand"].astype(str) if "strand" in table.columns else ["."] * len(table)
    names = table["name"].astype(str) if "name" in table.columns else [""] * len(table)
    for row, (chrom, start, end, strand, name) in enumerate(zip(table["chrom"], table["start"], table["end"],
                                                                strands, names, strict=True)):
        try:
            start, end = int(start), int(end)
        except ValueError:
            raise InputFormatError(f"row {row + 1}: start={start!r}, end={end!r}: expected integers",
                                   path=path) from None
        reject(strand not in ("+", "-", "."), "strand", strand, f"'+', '-' or '.' ({path}, row {row + 1})")
        yield Region(row, str(chrom), start, end, strand, name)


def tile_spans(genome: Genome, regions: Iterable[str] | None) -> list[tuple[str, int, int]]:
    """The spans to tile: each "chrom" (the whole contig) or "chrom:start-end" (1-based inclusive) of
    `regions`, or every contig of the genome (None); an unknown contig or a span off its contig raises."""
    if regions is None:
        return [(chrom, 0, length) for chrom, length in genome.lengths.items()]
    spans = []
    for text in regions:
        chrom, start, end = (text, 0, None) if ":" not in text else parse_region(text)
        if chrom not in genome:
            raise ParameterError("region", text, f"a contig of {genome.path.name} ({', '.join(genome.contigs[:10])}"
                                 f"{' …' if len(genome.contigs) > 10 else ''})")
        chrom, length = genome.resolve(chrom), genome.length(chrom)
        end = length if end is None else end
        reject(end > length, "region", text, f"a span within {chrom} ({length} bp)")
        spans.append((chrom, start, end))
    return spans


def tiles(genome: Genome, spans: list[tuple[str, int, int]], window: int, step: int) -> Iterator[Region]:
    """Windows of `window` bp every `step` bp from each span's start; the last ends at the span's end. A span
    shorter than `window` gets one window on its centre, shifted to stay on its contig where the contig is
    long enough (else it leaves the contig at both ends, padded and flagged)."""
    row = 0
    for chrom, start, end in spans:
        if end - start <= window:
            length = genome.length(chrom)
            first = start + (end - start) // 2 - window // 2
            first = min(max(first, 0), length - window) if length >= window else (length - window) // 2
            starts = [first]
        else:
            last = start + (end - window - start) // step * step
            starts = itertools.chain(range(start, last + 1, step), [end - window] if last + window < end else [])
        for first in starts:
            yield Region(row, chrom, first, first + window)
            row += 1
