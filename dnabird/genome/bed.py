"""A small BED reader (BED3 … BED12; plain or gzip), with errors naming the file and line.

Columns 1–8 are typed (chrom, start, end, name, score, strand, thickStart, thickEnd); any
further columns (itemRgb, blocks) are kept as strings in `extra`. Lines starting with `#`,
`track` or `browser`, and blank lines, are skipped. Every data line must have as many columns
as the first one. Fields are tab-separated (whitespace when a line has no tab).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from dnabird.errors import InputFormatError

_SKIP_PREFIXES = ("#", "track", "browser")
_STRANDS = ("+", "-", ".")


@dataclass(frozen=True)
class BedRecord:
    """One BED line; coordinates 0-based half-open. Absent columns are None; `line` is its line number in
    the file (for error messages; not part of equality)."""

    chrom: str
    start: int
    end: int
    name: str | None = None
    score: float | None = None
    strand: str | None = None
    thick_start: int | None = None
    thick_end: int | None = None
    extra: tuple[str, ...] = ()
    line: int | None = field(default=None, compare=False)


def read_bed(path: str | Path) -> Iterator[BedRecord]:
    """Yield the records of a BED file in file order."""
    path = Path(path)
    if not path.is_file():
        raise InputFormatError("BED file not found", path=path)
    opener = gzip.open if path.suffix in (".gz", ".bgz") else open
    columns = None
    with opener(path, "rt") as handle:
        for number, line in enumerate(handle, start=1):
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith(_SKIP_PREFIXES):
                continue
            fields = line.split("\t") if "\t" in line else line.split()
            if columns is None:
                columns = len(fields)
            if len(fields) != columns:
                raise InputFormatError(f"expected {columns} columns like the first record, got {len(fields)}",
                                       path=path, line=number)
            yield _parse(fields, path, number)


@dataclass(frozen=True)
class Tss:
    """A transcription start site: the 0-based position of the first transcribed base, its strand and name;
    `line` is where it was read from (None once lifted; not part of equality)."""

    chrom: str
    position: int
    strand: str
    name: str
    line: int | None = field(default=None, compare=False)


def read_tss(path: str | Path, *, require_thick: bool = False) -> list[Tss]:
    """The TSSs of a stranded BED (BED6 or more), in file order: thickStart on "+" and thickEnd − 1 on "-"
    when the thick columns are present (EPDnew's BED8, whose 11-bp thick part starts at the TSS on "+" and
    ends with it on "-"; `require_thick` demands them), else start on "+" and end − 1 on "-". Unnamed
    records are named chrom:position:strand. A TSS outside its item, or a file without records, is an error."""
    sites = []
    for record in read_bed(path):
        thick = record.thick_start is not None and record.thick_end is not None
        if require_thick and not thick:
            raise InputFormatError("expected BED8 columns (chrom, start, end, name, score, strand, thickStart, "
                                   "thickEnd) as EPDnew ships them, got fewer", path=path, line=record.line)
        if record.strand not in ("+", "-"):
            raise InputFormatError(f"strand {record.strand!r}: a TSS needs '+' or '-'", path=path, line=record.line)
        low, high = (record.thick_start, record.thick_end) if thick else (record.start, record.end)
        position = low if record.strand == "+" else high - 1
        if not record.start <= position < record.end:
            raise InputFormatError(f"the TSS {position} (from {low}-{high}) lies outside the item "
                                   f"{record.start}-{record.end}", path=path, line=record.line)
        name = record.name if record.name not in (None, ".") else f"{record.chrom}:{position}:{record.strand}"
        sites.append(Tss(record.chrom, position, record.strand, name, record.line))
    if not sites:
        raise InputFormatError("no TSS records", path=path)
    return sites


def _parse(fields: list[str], path: Path, line: int) -> BedRecord:
    if len(fields) < 3:
        raise InputFormatError(f"expected at least 3 columns (chrom, start, end), got {len(fields)}",
                               path=path, line=line)
    start = _number(fields[1], "start", path, line)
    end = _number(fields[2], "end", path, line)
    if start < 0 or end < start:
        raise InputFormatError(f"expected 0 <= start <= end, got start={start}, end={end}",
                               path=path, line=line)
    score = _number(fields[4], "score", path, line, float) if len(fields) > 4 and fields[4] != "." else None
    strand = fields[5] if len(fields) > 5 else None
    if strand is not None and strand not in _STRANDS:
        raise InputFormatError(f"strand {strand!r} is not one of {_STRANDS}", path=path, line=line)
    thick_start = _number(fields[6], "thickStart", path, line) if len(fields) > 6 else None
    thick_end = _number(fields[7], "thickEnd", path, line) if len(fields) > 7 else None
    return BedRecord(fields[0], start, end, fields[3] if len(fields) > 3 else None, score, strand,
                     thick_start, thick_end, tuple(fields[8:]), line)


def _number(text: str, column: str, path: Path, line: int, kind: type = int) -> int | float:
    """`text` as an int (or `kind`); an error naming the column, file and line otherwise."""
    try:
        return kind(text)
    except ValueError:
        expected = "an integer" if kind is int else "a number"
        raise InputFormatError(f"{column} {text!r} is not {expected}", path=path, line=line) from None
