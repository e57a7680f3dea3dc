"""Random access to a reference genome FASTA (over pyfaidx), in 0-based half-open coordinates.

`Genome(path).fetch(chrom, start, end, strand)` returns a `Window`: the sequence and how
many N were padded at each end when the window runs off the chromosome (windows are padded,
never shortened). Contig names resolve through the aliases `chr1`↔`1` … `chrX`↔`X`,
`chrY`↔`Y` (never `chrM`↔`MT`: different sequences). IUPAC ambiguity codes read as N.

The `.fai` index is built when missing. An existing index is checked against the FASTA
(modification time, and each record's header, line width and end byte); a stale one is
rebuilt, or reported when `rebuild_index=False`, so a fetch never returns the wrong bases.
For bgzip-compressed FASTA only the modification-time check applies.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pyfaidx

from dnabird.errors import InputFormatError, ParameterError

log = logging.getLogger(__name__)

SOFT_MASK_MODES = ("keep", "upper")
_IUPAC_AMBIGUOUS = "RYSWKMBDHV"
_TO_N = str.maketrans(_IUPAC_AMBIGUOUS + _IUPAC_AMBIGUOUS.lower(), "N" * 10 + "n" * 10)
_VALID = "ACGTNacgtn"
_DROP_VALID = str.maketrans("", "", _VALID)
_COMPLEMENT = str.maketrans(_VALID, "TGCANtgcan")
_ALIASABLE = re.compile(r"(chr)?([1-9]|1[0-9]|2[0-2]|X|Y)")
_MAX_NAMES_LISTED = 60


@dataclass(frozen=True)
class Window:
    """A fetched window. `sequence` is 5'→3' on `strand`; `pad_left`/`pad_right` count the N
    added at the start/end of `sequence` (as returned) where the window ran off the contig."""

    chrom: str
    start: int
    end: int
    strand: str
    sequence: str
    pad_left: int
    pad_right: int


def contig_alias(name: str) -> str | None:
    """The other spelling of a primary chromosome name (`chr7` → `7`, `X` → `chrX`), else None."""
    match = _ALIASABLE.fullmatch(name)
    if match is None:
        return None
    return match.group(2) if match.group(1) else f"chr{name}"


def reverse_complement(sequence: str) -> str:
    """Reverse complement of an A/C/G/T/N sequence, keeping each base's case."""
    return sequence.translate(_COMPLEMENT)[::-1]


class Genome:
    """A FASTA reference genome.

    Parameters
    ----------
    path : FASTA file (plain or bgzip); its `.fai` index is built beside it when missing.
    soft_mask : "keep" returns soft-masked (repeat) bases in lower case; "upper" uppercases all.
    rebuild_index : rebuild a stale `.fai` (default) or raise `InputFormatError` naming it.
    """

    def __init__(self, path: str | Path, *, soft_mask: str = "keep", rebuild_index: bool = True):
        if soft_mask not in SOFT_MASK_MODES:
            raise ParameterError("soft_mask", soft_mask, f"one of {SOFT_MASK_MODES}")
        self.path = Path(path)
        self.soft_mask = soft_mask
        self.rebuild_index = rebuild_index
        self._faidx = _open_indexed(self.path, rebuild_index)
        self._lengths = {name: record.rlen for name, record in self._faidx.index.items()}

    @property
    def contigs(self) -> list[str]:
        """Contig names in FASTA order."""
        return list(self._lengths)

    @property
    def lengths(self) -> dict[str, int]:
        """Contig name → length in bp, in FASTA order."""
        return dict(self._lengths)

    def resolve(self, chrom: str) -> str:
        """The FASTA's name for `chrom` (itself or its alias); unknown names raise, listing those present."""
        if chrom in self._lengths:
            return chrom
        alias = contig_alias(chrom)
        if alias in self._lengths:
            return alias
        names = self.contigs
        listed = ", ".join(names[:_MAX_NAMES_LISTED])
        if len(names) > _MAX_NAMES_LISTED:
            listed += f", … ({len(names) - _MAX_NAMES_LISTED} more)"
        raise InputFormatError(f"no contig named {chrom!r}; available: {listed}", path=self.path)

    def __contains__(self, chrom: str) -> bool:
        return chrom in self._lengths or contig_alias(chrom) in self._lengths

    def length(self, chrom: str) -> int:
        """Length in bp of `chrom` (aliases accepted)."""
        return self._lengths[self.resolve(chrom)]

    def fetch(self, chrom: str, start: int, end: int, strand: str = "+") -> Window:
        """Bases [start, end) of `chrom` (0-based half-open), reverse-complemented on "-".

        Positions outside the contig read as N and are counted in `pad_left`/`pad_right`.
        """
        name = self.resolve(chrom)
        if strand not in ("+", "-"):
            raise ParameterError("strand", strand, "'+' or '-'")
        if int(start) != start or int(end) != end or end < start:
            raise ParameterError("(start, end)", (start, end), "integers with start <= end")
        start, end = int(start), int(end)
        length = self._lengths[name]
        before = max(0, min(end, 0) - start)
        after = max(0, end - max(start, length))
        core = self._read(name, start + before, end - after) if end - after > start + before else ""
        sequence = "N" * before + core + "N" * after
        if strand == "-":
            sequence, before, after = reverse_complement(sequence), after, before
        return Window(name, start, end, strand, sequence, before, after)

    def _read(self, name: str, start: int, end: int) -> str:
        sequence = self._faidx.fetch(name, start + 1, end).translate(_TO_N)
        invalid = sequence.translate(_DROP_VALID)
        if invalid:
            offset = start + next(i for i, base in enumerate(sequence) if base not in _VALID)
            raise InputFormatError(f"invalid base {invalid[0]!r} at 0-based position {offset}",
                                   path=self.path, record=name)
        return sequence.upper() if self.soft_mask == "upper" else sequence

    def close(self) -> None:
        self._faidx.close()

    def __getstate__(self) -> dict:
        """Pickle by path (e.g. into DataLoader workers); the copy reopens the file."""
        return {"path": self.path, "soft_mask": self.soft_mask, "rebuild_index": self.rebuild_index}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["path"], soft_mask=state["soft_mask"], rebuild_index=state["rebuild_index"])

    def __enter__(self) -> Genome:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Genome({str(self.path)!r}, soft_mask={self.soft_mask!r}, contigs={len(self._lengths)})"


def _open_indexed(path: Path, rebuild_index: bool) -> pyfaidx.Faidx:
    """Open `path` with pyfaidx, building a missing index and rebuilding (or reporting) a stale one."""
    if not path.is_file():
        raise InputFormatError("FASTA file not found", path=path)
    if path.stat().st_size == 0:
        raise InputFormatError("FASTA file is empty", path=path)
    index_path = Path(f"{path}.fai")
    if index_path.exists() and path.stat().st_mtime > index_path.stat().st_mtime and not rebuild_index:
        raise InputFormatError(f"index is older than the FASTA {path}; delete it to rebuild", path=index_path)
    had_index = index_path.exists()
    try:
        faidx = _faidx(path)
    except InputFormatError as err:
        if not had_index or err.line is not None:
            raise
        faidx, problem = None, (None, f"unreadable: {err.__cause__}")  # the index, not the FASTA, may be broken
    else:
        if path.suffix in (".gz", ".bgz"):
            return faidx
        problem = _index_problem(path, faidx.index)
    if problem and had_index:
        if faidx is not None:
            faidx.close()
        if not rebuild_index:
            raise InputFormatError(f"index does not match the FASTA {path} ({problem[1]}); delete it to "
                                   "rebuild", path=index_path)
        log.warning("rebuilding stale index %s (%s)", index_path, problem[1])
        index_path.unlink()
        faidx = _faidx(path)
        problem = _index_problem(path, faidx.index)
    if problem:
        faidx.close()
        line, message = problem
        raise InputFormatError(message, path=path, line=line)
    return faidx


def _faidx(path: Path) -> pyfaidx.Faidx:
    try:
        return pyfaidx.Faidx(str(path), as_raw=True, rebuild=True)
    except pyfaidx.UnsupportedCompressionFormat as err:
        raise InputFormatError("compressed FASTA must be bgzip-compressed (or decompressed)",
                               path=path) from err
    except (pyfaidx.FastaIndexingError, ValueError) as err:
        located = _header_error(path)
        if located is not None:
            raise InputFormatError(located[2], path=path, line=located[0], record=located[1]) from err
        raise InputFormatError(f"malformed FASTA: {err}", path=path) from err


def _header_error(path: Path) -> tuple[int, str, str] | None:
    """First empty or duplicate FASTA header as (line, record, message); None if all are fine."""
    seen: dict[str, int] = {}
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.startswith(b">"):
                continue
            words = line[1:].decode(errors="replace").split()
            if not words or line[1:2].isspace():
                header = line.decode(errors="replace").rstrip()
                return number, header, "malformed FASTA header: no sequence name"
            if words[0] in seen:
                return number, words[0], f"duplicate sequence name (first at line {seen[words[0]]})"
            seen[words[0]] = number
    return None


def _index_problem(path: Path, index) -> tuple[int | None, str] | None:
    """Check the index against the FASTA bytes: each record's header, line width, and that
    records follow each other up to the end of the file.

    Returns (line number or None, description) of the first mismatch, else None.
    """
    size = path.stat().st_size
    previous_end = None
    with open(path, "rb") as handle:
        for name, record in index.items():
            if record.offset > size:
                return None, f"record {name!r} starts beyond the end of the file"
            lookback = min(record.offset, 4096)
            handle.seek(record.offset - lookback)
            before = handle.read(lookback)
            header_start = record.offset - lookback + before.rstrip(b"\r\n").rfind(b"\n") + 1
            header = before[header_start - (record.offset - lookback):].rstrip(b"\r\n")
            if not header.startswith(b">") or header[1:].split()[:1] != [name.encode()] \
                    or header[1:2].isspace():
                line = _line_number(handle, header_start)
                shown = header.decode(errors="replace")
                return line, f"malformed FASTA header {shown!r}: expected '>{name}', the name right after '>'"
            if previous_end is not None and header_start != previous_end:
                return None, f"record {name!r} does not start where the previous record ends"
            if record.rlen > record.lenc:
                handle.seek(record.offset + record.lenc)
                if handle.read(record.lenb - record.lenc).strip(b"\r\n"):
                    return None, f"record {name!r}: lines are not {record.lenc} bases wide"
            previous_end = record.offset + record.rlen + math.ceil(record.rlen / max(record.lenc, 1)) * (
                record.lenb - record.lenc)
        if previous_end is not None and previous_end < size:
            handle.seek(previous_end)
            if handle.read(64).strip():
                return None, "the file continues after the last indexed record"
    return None


def _line_number(handle, offset: int) -> int:
    handle.seek(0)
    return handle.read(offset).count(b"\n") + 1
