"""The REF and ALT input windows of a variant, equal in bp length, read from the genome, placed by one of two
rules that keep the anchor at its window index: `centred_windows` (each allele's centre base at index
length // 2, as Selene: centre = pos − 1 + len(allele) // 2, so an indel's ALT window is trimmed or extended
at both far ends) or `anchored_windows` (a fixed genomic window, e.g. a TSS window or an ISM region, keeps
every base between its anchor and the variant in place; an indel trims or extends the far end on the
variant's side). Windows past a chromosome end are N-padded (`pad_left`/`pad_right`, as
`dnabird.inference.windows.read_window` reads them); each N is a token of
its own, so `n_run_clips` offers a window too long for a model clipped at its N runs, outermost first
(`clip_left`/`clip_right`: bp cut from each end). Sequences are upper case, 5'→3' on `strand` (a "-"
window is the reverse complement of the genome). Training examples follow another rule on purpose
(`dnabird.tasks.splits.window_bases` drops a window off a contig or with too many N): they are a sample,
while every variant asked about must get a score.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, replace

from dnabird.errors import UnscorableVariantError
from dnabird.genome.reference import Genome, reverse_complement
from dnabird.inference.windows import N_RUN, read_window
from dnabird.variants.records import Variant


@dataclass(frozen=True)
class AlleleWindows:
    """One variant's REF and ALT windows. The REF allele is `ref[ref_at:ref_at + ref_length]`, the ALT
    allele `alt[alt_at:alt_at + alt_length]`; outside them both spell the same genome, aligned at each
    allele edge. `start`/`end`: the REF window's genomic span (0-based half-open). `pad_left`/`pad_right`:
    the sequences hold N padding past a contig end at that end; `clip_left`/`clip_right`: bp of the REF
    window cut from that end at an N run (`n_run_clips`)."""

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
    clip_left: int = 0
    clip_right: int = 0

    def reverse_complement(self) -> AlleleWindows:
        """Both windows on the other strand."""
        return replace(self, ref=reverse_complement(self.ref), alt=reverse_complement(self.alt),
                       ref_at=len(self.ref) - self.ref_at - self.ref_length,
                       alt_at=len(self.alt) - self.alt_at - self.alt_length,
                       strand="-" if self.strand == "+" else "+",
                       pad_left=self.pad_right, pad_right=self.pad_left,
                       clip_left=self.clip_right, clip_right=self.clip_left)

    def clip(self, keep_left: int, keep_right: int) -> AlleleWindows:
        """Both windows cut to at most `keep_left` bp before the allele and `keep_right` bp after it (the
        flanks of REF and ALT spell the same genome, aligned at the allele edges, so both lose the same
        stretch of genome); padding cut away is no longer flagged."""
        ref_left, alt_left = min(keep_left, self.ref_at), min(keep_left, self.alt_at)
        ref_stop = self.ref_at + self.ref_length + keep_right
        alt_stop = self.alt_at + self.alt_length + keep_right
        cut_left, cut_right = self.ref_at - ref_left, max(0, len(self.ref) - ref_stop)
        start, end = (self.start + cut_left, self.end - cut_right) if self.strand == "+" else \
            (self.start + cut_right, self.end - cut_left)
        return replace(self, ref=self.ref[self.ref_at - ref_left:ref_stop],
                       alt=self.alt[self.alt_at - alt_left:alt_stop], ref_at=ref_left, alt_at=alt_left,
                       start=start, end=end,
                       pad_left=self.pad_left and not cut_left, pad_right=self.pad_right and not cut_right,
                       clip_left=self.clip_left + cut_left, clip_right=self.clip_right + cut_right)


def n_run_clips(windows: AlleleWindows) -> Iterator[AlleleWindows]:
    """`windows` clipped at ever more of their N runs (contig-end padding, assembly gaps), outermost first:
    each step cuts away the N run farthest from the allele, on either side, and everything beyond it (both
    sides' runs at once when they are as far, so the two strands of a genome are cut alike)."""
    w = windows
    left = max(w.ref[:w.ref_at], w.alt[:w.alt_at], key=len)  # the longer flank of REF and ALT on each side
    right = max(w.ref[w.ref_at + w.ref_length:], w.alt[w.alt_at + w.alt_length:], key=len)
    # a cut at a run keeps the bp between the allele and that run: (bp kept, side), outermost first
    cuts = sorted([(len(left) - run.end(), 0) for run in N_RUN.finditer(left)]
                  + [(run.start(), 1) for run in N_RUN.finditer(right)], reverse=True)
    keep = [len(left), len(right)]
    for kept, sides in itertools.groupby(cuts, key=lambda cut: cut[0]):
        for _, side in sides:
            keep[side] = kept
        yield w.clip(*keep)


def centred_windows(genome: Genome, variant: Variant, length: int) -> AlleleWindows:
    """Windows of `length` bp with each allele's centre base at index length // 2 (forward strand)."""
    return _windows(genome, variant, length, length // 2 - len(variant.ref) // 2,
                    length // 2 - len(variant.alt) // 2)


def anchored_windows(genome: Genome, variant: Variant, start: int, end: int, anchor: int,
                     strand: str = "+") -> AlleleWindows:
    """Windows over the genomic span [start, end) that contains the variant's REF, keeping the bases
    between `anchor` (a genomic position) and the variant in place; "-" gives the reverse complement."""
    left_ref = variant.start - start  # an indel moves the ALT window's left end when the anchor is to its right
    left_alt = left_ref if variant.start >= anchor else left_ref + len(variant.ref) - len(variant.alt)
    windows = _windows(genome, variant, end - start, left_ref, left_alt)
    return windows.reverse_complement() if strand == "-" else windows


def _windows(genome: Genome, variant: Variant, length: int, left_ref: int, left_alt: int) -> AlleleWindows:
    """REF window = genome[first − left_ref, …) of `length` bp; ALT window = `left_alt` bp of genome
    before the allele, the ALT allele, then genome after the REF allele up to `length` bp."""
    first, ref_length, alt_length = variant.start, len(variant.ref), len(variant.alt)
    right_ref, right_alt = length - left_ref - ref_length, length - left_alt - alt_length
    if min(left_ref, left_alt, right_ref, right_alt) < 0:
        raise UnscorableVariantError("allele does not fit the window",
                                     f"{ref_length}-bp REF, {alt_length}-bp ALT in a {length}-bp window")
    ref = read_window(genome, variant.chrom, first - left_ref, first - left_ref + length)
    before = genome.fetch(variant.chrom, first - left_alt, first)
    after = genome.fetch(variant.chrom, first + ref_length, first + ref_length + right_alt)
    return AlleleWindows(
        ref=ref.sequence, alt=(before.sequence + variant.alt + after.sequence).upper(),
        ref_at=left_ref, alt_at=left_alt, ref_length=ref_length, alt_length=alt_length,
        start=ref.start, end=ref.end, strand="+",
        pad_left=ref.pad_left or bool(before.pad_left), pad_right=ref.pad_right or bool(after.pad_right))
