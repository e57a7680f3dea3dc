"""Variants in: VCF records (plain or bgzipped, read with pysam) or `Variant` objects, one per ALT allele.

`Variant.pos` is VCF's 1-based position of the first REF base; everything else in the library is
0-based (`Variant.start`). A multi-allelic record yields one variant per ALT, all with the record's
index. Alleles that cannot be scored (symbolic `<DEL>`, breakends, `*`, a missing ALT, REF bases other
than A/C/G/T) come out with their `problem`, never silently dropped.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pysam

from dnabird.errors import InputFormatError, ParameterError, UnscorableVariantError

_REF = re.compile(r"[ACGT]+")
_ALT = re.compile(r"[ACGTN]+")
_BREAKEND = re.compile(r"[\[\]]|^\.|\.$")


@dataclass(frozen=True)
class Variant:
    """One ALT allele at a VCF position: `pos` is 1-based (VCF's POS), `ref`/`alt` as written in the VCF."""

    chrom: str
    pos: int
    ref: str
    alt: str
    id: str = "."

    @property
    def start(self) -> int:
        """0-based position of the first REF base."""
        return self.pos - 1

    @property
    def centre(self) -> int:
        """0-based window centre, as Selene: pos − 1 + len(ref) // 2."""
        return self.pos - 1 + len(self.ref) // 2


@dataclass(frozen=True)
class Allele:
    """An input allele: `record` is the 0-based index of its record in the input, `allele` its 1-based
    ALT number; `problem` says why it cannot be scored, if it cannot."""

    record: int
    allele: int
    variant: Variant
    problem: UnscorableVariantError | None = None


def allele_problem(ref: str, alt: str | None) -> UnscorableVariantError | None:
    """Why an allele pair cannot be scored as sequence, or None."""
    if alt is None or alt == ".":
        return UnscorableVariantError("no ALT allele")
    if alt.startswith("<"):
        return UnscorableVariantError("symbolic ALT", alt)
    if alt == "*":
        return UnscorableVariantError("spanning-deletion ALT *")
    if _BREAKEND.search(alt):
        return UnscorableVariantError("breakend ALT", alt)
    if not _REF.fullmatch(ref.upper()):
        return UnscorableVariantError("REF not A/C/G/T", ref)
    if not _ALT.fullmatch(alt.upper()):
        return UnscorableVariantError("ALT not A/C/G/T/N", alt)
    return None


def read_alleles(variants: str | os.PathLike | Iterable[Variant]) -> Iterator[Allele]:
    """Every allele of a VCF file or of an iterable of `Variant`s, in input order (an ALT written
    "A,G" in a `Variant` is split like a VCF record)."""
    if isinstance(variants, (str, os.PathLike)):
        yield from _vcf_alleles(Path(variants))
        return
    if isinstance(variants, Variant):
        variants = [variants]
    for record, variant in enumerate(variants):
        if not isinstance(variant, Variant):
            raise ParameterError("variants", variant, "a VCF path or an iterable of dnabird Variant objects")
        alts = variant.alt.split(",") if variant.alt else [None]
        yield from _alleles(record, variant.chrom, variant.pos, variant.id, variant.ref, alts)


def _alleles(record: int, chrom: str, pos: int, name: str, ref: str, alts) -> Iterator[Allele]:
    for number, alt in enumerate(alts, start=1):
        variant = Variant(chrom, int(pos), ref, alt or ".", name or ".")
        yield Allele(record, number, variant, allele_problem(ref, alt))


def vcf_lines(path: str | os.PathLike) -> Iterator[tuple[int | None, int, str]]:
    """Every line of a VCF (plain, gzip or bgzip) as (record, line number, text without its line end):
    `record` is None for the header (up to the #CHROM line) and the 0-based index of the data record after
    it — the numbering `read_alleles` gives `Allele.record`. Lines end at "\\n" only, as htslib reads them;
    bytes that are not UTF-8 survive a round trip (surrogateescape)."""
    path = Path(path)
    with open(path, "rb") as probe:
        compressed = probe.read(2) == b"\x1f\x8b"
    record, in_header = -1, True
    with (gzip.open if compressed else open)(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            text = raw.decode("utf-8", "surrogateescape").removesuffix("\n").removesuffix("\r")
            record += not in_header
            yield (None if in_header else record), number, text
            in_header = in_header and not text.startswith("#CHROM")


def _vcf_alleles(path: Path) -> Iterator[Allele]:
    """pysam's records in step with `vcf_lines`, so each record's index and line number come from the one
    line reader the VCF writer also uses."""
    check_vcf_path(path)
    verbosity, header = pysam.set_verbosity(0), []  # contigs missing from the header are fine here
    try:
        try:  # samples dropped: dnabird never reads FORMAT (htslib refuses records with a duplicated FORMAT tag)
            handle = pysam.VariantFile(str(path), drop_samples=True)
        except (OSError, ValueError) as err:
            raise InputFormatError(f"not a readable VCF ({err})", path=path) from None
        with handle:
            for record, number, text in vcf_lines(path):
                if record is None:
                    header.append(text + "\n")
                    continue
                try:
                    entry = next(handle)
                except StopIteration:
                    raise InputFormatError("htslib read no record from this line", path=path, line=number) from None
                except (OSError, ValueError) as err:
                    raise _malformed(path, number, text, "".join(header), err) from None
                yield from _alleles(record, entry.chrom, entry.pos, entry.id, entry.ref or "", entry.alts or [None])
    finally:
        pysam.set_verbosity(verbosity)


def _malformed(path: Path, number: int, text: str, header: str, err: Exception) -> InputFormatError:
    """The error for a record htslib refused: its column count, or what htslib says of that line alone."""
    columns = len(text.split("\t"))
    if not text.strip():
        problem = "a blank line"
    elif columns < 8:
        problem = f"{columns} tab-separated columns where a record has at least 8 (CHROM POS ID REF ALT QUAL " \
                  "FILTER INFO)"
    else:  # pysam alone says "truncated file"
        said = _htslib_says(f"{header}{text}\n")
        problem = f"{text[:80]!r}: {said or err}"
    return InputFormatError(f"malformed VCF record: {problem}", path=path, line=number)


def check_vcf_path(path: Path) -> None:
    """`InputFormatError` unless `path` is a file pysam can read as VCF: present, not a folder, plain or
    bgzip-compressed (plain gzip cannot be read record by record)."""
    if path.is_dir():
        raise InputFormatError("is a directory, not a VCF file", path=path)
    if not path.is_file():
        raise InputFormatError("VCF file not found", path=path)
    with open(path, "rb") as handle:
        head = handle.read(14)
    if head[:2] == b"\x1f\x8b" and not (len(head) == 14 and head[3] & 4 and head[12:14] == b"BC"):
        raise InputFormatError("gzip-compressed VCF must be bgzip-compressed (`bgzip` it, or decompress it)",
                               path=path)


def _htslib_says(text: str) -> str:
    """What htslib says (its errors, else its warnings) on reading every record of the VCF `text`."""
    with tempfile.TemporaryDirectory() as folder:
        vcf = Path(folder) / "record.vcf"
        vcf.write_bytes(text.encode("utf-8", "surrogateescape"))
        with tempfile.TemporaryFile("w+", errors="replace") as caught:
            sys.stderr.flush()
            saved, verbosity = os.dup(2), pysam.set_verbosity(3)
            os.dup2(caught.fileno(), 2)
            try:
                with contextlib.suppress(OSError, ValueError), pysam.VariantFile(str(vcf), drop_samples=True) as file:
                    list(file)  # read every record, for htslib to report on
            finally:
                os.dup2(saved, 2)
                os.close(saved)
                pysam.set_verbosity(verbosity)
            caught.seek(0)
            said = [line.strip() for line in caught if line.startswith(("[E::", "[W::"))]
    said = [line for line in said if line.startswith("[E::")] or said  # its errors, else its warnings
    return "htslib: " + "; ".join(said) if said else ""
