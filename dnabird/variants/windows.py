"""The REF and ALT input windows of a variant, equal in bp length, read from the genome.

Two rules place them (both keep the anchor at its window index):
- centred (`centred_windows`): each allele's centre base sits at index length // 2, as Selene
  (centre = pos − 1 + len(allele) // 2); an indel's ALT window therefore takes
  length // 2 − len(ALT) // 2 bp of genome before the allele and fills the rest after it, so an insertion
  trims and a deletion extends both far ends of the window relative to the REF window;
- anchored (`anchored_windows`): a fixed genomic window (a TSS window, a saturation-mutagenesis region)
  keeps every base between its anchor and the variant where it is; an indel trims or extends the window
  at the far end, the end on the variant's side of the anchor.
Windows that run off a chromosome end are N-padded (`pad_left`/`pad_right`), never shortened. Sequences
are upper case, 5'→3' on `strand` (a "-" window is the reverse complement of the genome).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dnabird.errors import UnscorableVariantError
from dnabird.genome.reference import Genome, reverse_complement
from dnabird.variants.records import Variant


@dataclass(frozen=True)
class AlleleWindows:
    """One variant's REF and ALT windows. The REF allele is `ref[ref_at:ref_at + ref_length]`, the ALT
    allele `alt[alt_at:alt_at + alt_length]`; outside them both spell the same genome, aligned at each
    allele edge. `start`/`end`: the REF window's genomic span (0-based half-open)."""

    ref: str
    alt: str
    ref_at: int
    alt_at: int
    ref_length: int
    alt_length: int
    start: int
    end: int
    strand: str
    pad_left: bool
    pad_right: bool

    def reverse_complement(self) -> AlleleWindows:
        """Both windows on the other strand."""
        return replace(self, ref=reverse_complement(self.ref), alt=reverse_complement(self.alt),
                       ref_at=len(self.ref) - self.ref_at - self.ref_length,
                       alt_at=len(self.alt) - self.alt_at - self.alt_length,
                       strand="-" if self.strand == "+" else "+",
                       pad_left=self.pad_right, pad_right=self.pad_left)


def centred_windows(genome: Genome, variant: Variant, length: int) -> AlleleWindows:
    """Windows of `length` bp with each allele's centre base at index length // 2 (forward strand)."""
    return _windows(genome, variant, length, length // 2 - len(variant.ref) // 2,
                    length // 2 - len(variant.alt) // 2)


def anchored_windows(genome: Genome, variant: Variant, start: int, end: int, anchor: int,
                     strand: str = "+") -> AlleleWindows:
    """Windows over the genomic span [start, end) that contains the variant's REF, keeping the bases
    between `anchor` (a genomic position) and the variant in place; "-" gives the reverse complement."""
    length, first = end - start, variant.start
    if first >= anchor:
        left_ref = left_alt = first - start
    else:
        right = end - first - len(variant.ref)
        left_ref, left_alt = length - right - len(variant.ref), length - right - len(variant.alt)
    windows = _windows(genome, variant, length, left_ref, left_alt)
    return windows.reverse_complement() if strand == "-" else windows


def _windows(genome: Genome, variant: Variant, length: int, left_ref: int, left_alt: int) -> AlleleWindows:
    """REF window = genome[first − left_ref, …) of `length` bp; ALT window = `left_alt` bp of genome
    before the allele, the ALT allele, then genome after the REF allele up to `length` bp."""
    first, ref_length, alt_length = variant.start, len(variant.ref), len(variant.alt)
    right_ref, right_alt = length - left_ref - ref_length, length - left_alt - alt_length
    if min(left_ref, left_alt, right_ref, right_alt) < 0:
        raise UnscorableVariantError("allele does not fit the window",
                                     f"{ref_length}-bp REF, {alt_length}-bp ALT in a {length}-bp window")
    ref = genome.fetch(variant.chrom, first - left_ref, first - left_ref + length)
    before = genome.fetch(variant.chrom, first - left_alt, first)
    after = genome.fetch(variant.chrom, first + ref_length, first + ref_length + right_alt)
    return AlleleWindows(
        ref=ref.sequence.upper(), alt=(before.sequence + variant.alt + after.sequence).upper(),
        ref_at=left_ref, alt_at=left_alt, ref_length=ref_length, alt_length=alt_length,
        start=ref.start, end=ref.end, strand="+",
        pad_left=bool(ref.pad_left or before.pad_left), pad_right=bool(ref.pad_right or after.pad_right))
