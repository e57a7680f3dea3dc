"""Random access to a reference genome FASTA (over pyfaidx), in 0-based half-open coordinates.

`Genome(path).fetch(chrom, start, end, strand)` returns a `Window`: the sequence and how
many N were padded at each end when the window runs off the chromosome (windows are padded,
never shortened). Contig names resolve through the aliases `chr1`↔`1` … `chrX`↔`X`,
`chrY`↔`Y` (never `chrM`↔`MT`: different sequences). IUPAC ambiguity codes read as N.

The `.fai` index (`build_index`, samtools' rules; beside the FASTA or in a cache folder, `index_path`) is checked
against the FASTA (modification time; each record's header, line width and end byte) and a stale one rebuilt,
or reported with `rebuild_index=False`. For bgzip FASTA pyfaidx indexes and only the time check applies.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pyfaidx

from dnabird.errors import InputFormatError, ParameterError, reject
from dnabird.io import sha256_hex, write_text_atomic

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


class Genome(contextlib.AbstractContextManager):
    """A FASTA reference genome (plain or bgzip). `soft_mask`: "keep" returns soft-masked (repeat) bases in
    lower case, "upper" upper-cases all; `rebuild_index`: rebuild a stale `.fai` or raise `InputFormatError`."""

    def __init__(self, path: str | Path, *, soft_mask: str = "keep", rebuild_index: bool = True):
        reject(soft_mask not in SOFT_MASK_MODES, "soft_mask", soft_mask, f"one of {SOFT_MASK_MODES}")
        self.path = Path(path)
        self.soft_mask, self.rebuild_index = soft_mask, rebuild_index
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
        reject(strand not in ("+", "-"), "strand", strand, "'+' or '-'")
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
        self.__init__(**state)

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Genome({str(self.path)!r}, soft_mask={self.soft_mask!r}, contigs={len(self._lengths)})"


def index_path(path: Path) -> Path:
    """The `.fai` of a FASTA: `PATH.fai` when it exists or can be written, else one in the cache folder
    `$XDG_CACHE_HOME/dnabird/fai` (by default under ~/.cache), named by the FASTA's resolved path."""
    beside = Path(f"{path}.fai")
    if beside.exists() or os.access(path.parent, os.W_OK | os.X_OK):
        return beside
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dnabird" / "fai"
    return cache / f"{sha256_hex(os.path.realpath(path))[:16]}-{path.name}.fai"


def _open_indexed(path: Path, rebuild_index: bool) -> pyfaidx.Faidx:
    """Open `path` with pyfaidx, building a missing index and rebuilding (or reporting) a stale one."""
    if not path.is_file():
        raise InputFormatError("FASTA file not found", path=path)
    if path.stat().st_size == 0:
        raise InputFormatError("FASTA file is empty", path=path)
    index = index_path(path)
    if index.parent != path.parent:
        log.info("%s: folder not writable, its index is kept in %s", path, index)
    if path.suffix in (".gz", ".bgz"):  # pyfaidx indexes bgzip itself; only its mtime check applies
        return _pyfaidx(path, index, rebuild=True)
    if index.exists():
        problem = "older than the FASTA" if path.stat().st_mtime > index.stat().st_mtime else None
        if problem is None:
            try:
                faidx = _pyfaidx(path, index)
            except InputFormatError as err:
                problem = f"unreadable: {err.__cause__}"
            else:
                problem = _index_problem(path, faidx.index)
                if problem is None:
                    return faidx
                faidx.close()
        if not rebuild_index:
            raise InputFormatError(f"index does not match the FASTA {path} ({problem}); delete it to rebuild",
                                   path=index)
        log.warning("rebuilding stale index %s (%s)", index, problem)
    build_index(path, index)
    return _pyfaidx(path, index)


def _pyfaidx(path: Path, index: Path, rebuild: bool = False) -> pyfaidx.Faidx:
    gzi = {} if index.parent == path.parent else {"gzi_indexname": str(index.with_suffix(".gzi"))}
    try:
        return pyfaidx.Faidx(str(path), indexname=str(index), as_raw=True, rebuild=rebuild, **gzi)
    except pyfaidx.UnsupportedCompressionFormat as err:
        raise InputFormatError("compressed FASTA must be bgzip-compressed (or decompressed)",
                               path=path) from err
    except (pyfaidx.FastaIndexingError, ValueError, RuntimeError) as err:
        raise InputFormatError(f"malformed FASTA or index: {err}", path=path) from err


def build_index(path: str | Path, index: str | Path | None = None) -> Path:
    """Write `index` (default `PATH.fai`) for a plain FASTA file by samtools' rules; returns its path.

    Accepted: blank lines between records and at the end, CRLF or LF, a last line without a newline; records
    without bases are left out. Refused, naming the line: text before the first header, a header without a
    name (or a space after '>'), a duplicate name, whitespace inside a sequence line, a line wider than the
    record's first, bases after a record's shorter or blank line, and a header as the last line.
    """
    path = Path(path)
    records, seen = [], {}
    record = None  # [name, bases, offset, line bases, line bytes, ended]
    with open(path, "rb") as handle:
        offset = 0
        for number, line in enumerate(handle, start=1):
            text = line.rstrip(b"\r\n")
            if text.startswith(b">"):
                words = text[1:].decode(errors="replace").split()
                if not words or text[1:2].isspace():
                    shown = text.decode(errors="replace")
                    expected = f"expected '>{words[0]}', the name right after '>'" if words else "no sequence name"
                    raise InputFormatError(f"malformed FASTA header {shown!r}: {expected}", path=path, line=number)
                if words[0] in seen:
                    raise InputFormatError(f"duplicate sequence name (first at line {seen[words[0]]})",
                                           path=path, line=number, record=words[0])
                seen[words[0]] = number
                record = [words[0], 0, offset + len(line), 0, 0, False]
                records.append(record)
            elif not text.strip():
                if record is not None:
                    record[5] = True
            elif record is None:
                raise InputFormatError("expected a '>' header line before the sequence", path=path, line=number)
            else:
                width = len(line) if line.endswith(b"\n") else len(line) + 1  # as samtools counts a last line
                _check_sequence_line(text, width, record, path, number)
                record[1] += len(text)
            offset += len(line)
    if record is not None and record[2] == offset:
        raise InputFormatError("the file ends with this record's header line: truncated?", path=path,
                               record=record[0])
    index = Path(index or f"{path}.fai")
    write_text_atomic(index, "".join("\t".join(map(str, row[:5])) + "\n" for row in records if row[1]))
    return index


def _check_sequence_line(text: bytes, size: int, record: list, path: Path, number: int) -> None:
    """Check one sequence line against its record's first line; the first sets the line width."""
    name, _, _, line_bases, line_bytes, ended = record
    if any(byte in b" \t\r\v\f" for byte in text):
        raise InputFormatError("whitespace inside a sequence line", path=path, line=number, record=name)
    if ended:
        raise InputFormatError("sequence continues after a shorter or blank line (only the last line of a "
                               "record may be shorter)", path=path, line=number, record=name)
    if not line_bytes:
        record[3], record[4] = len(text), size
    elif len(text) > line_bases or (len(text) == line_bases and size > line_bytes):
        raise InputFormatError(f"line of {len(text)} bases in {size} bytes where the record's first line has "
                               f"{line_bases} in {line_bytes}: lines must be equally wide", path=path,
                               line=number, record=name)
    elif len(text) < line_bases or size < line_bytes:
        record[5] = True


def _index_problem(path: Path, index) -> str | None:
    """Check the index against the FASTA bytes: each record's header, line width, and that between
    records (and after the last) there are only blank lines and headers of records without bases.

    Returns a description of the first mismatch, else None.
    """
    size = path.stat().st_size
    previous = None  # (name, byte after its last base)
    with open(path, "rb") as handle:
        for name, record in index.items():
            if record.offset > size:
                return f"record {name!r} starts beyond the end of the file"
            lookback = min(record.offset, 4096)
            handle.seek(record.offset - lookback)
            before = handle.read(lookback)
            header_start = record.offset - lookback + before.rstrip(b"\r\n").rfind(b"\n") + 1
            header = before[header_start - (record.offset - lookback):].rstrip(b"\r\n")
            if not header.startswith(b">") or header[1:].split()[:1] != [name.encode()] \
                    or header[1:2].isspace():
                return f"record {name!r}: the line before its sequence is {header.decode(errors='replace')!r}"
            if previous is not None and not _only_blank_lines_and_headers(handle, *previous, header_start):
                return f"record {name!r} does not start where the previous record ends"
            if record.rlen > record.lenc:
                handle.seek(record.offset + record.lenc)
                if handle.read(record.lenb - record.lenc).strip(b"\r\n"):
                    return f"record {name!r}: lines are not {record.lenc} bases wide"
            previous = (name, _end_of_bases(record))
        if previous is not None and not _only_blank_lines_and_headers(handle, *previous, size):
            return f"the file continues after record {previous[0]!r} with bases not in the index"
    return None


def _end_of_bases(record) -> int:
    """The byte just after the last base of an index record."""
    if record.rlen == 0:
        return record.offset
    line, column = divmod(record.rlen - 1, record.lenc)
    return record.offset + line * record.lenb + column + 1


def _only_blank_lines_and_headers(handle, name: str, start: int, stop: int) -> bool:
    """True when bytes [start, stop) end the line of `name`'s last base and hold only blank or header lines."""
    handle.seek(start)
    lines = handle.read(stop - start).split(b"\n")
    return lines[0] in (b"", b"\r") and all(not line.strip() or line.startswith(b">") for line in lines[1:])
