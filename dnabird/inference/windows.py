"""Genome windows as a model reads them: upper-case bases 5'→3' on a strand, N-padded where they leave a
contig (never shortened, never silently: `pad_left`/`pad_right` say so), with their N runs (contig-end
padding, assembly gaps) found by `N_RUN`; `parse_region` reads a samtools region string."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dnabird.errors import ParameterError, reject
from dnabird.genome.reference import Genome

N_RUN = re.compile("N+")
_REGION = re.compile(r"(?P<chrom>[^:\s]+):(?P<start>[\d,]+)-(?P<end>[\d,]+)")


@dataclass(frozen=True)
class GenomeWindow:
    """Bases [start, end) of `chrom` (0-based half-open) on `strand`, upper case; `pad_left`/`pad_right`:
    the sequence holds N padding past a contig end at that end (of the sequence as read)."""

    chrom: str
    start: int
    end: int
    strand: str
    sequence: str
    pad_left: bool
    pad_right: bool

    @property
    def longest_n_run(self) -> int:
        """The longest run of N in the window (padding included), 0 when it has none."""
        return max((len(run) for run in N_RUN.findall(self.sequence)), default=0)


def read_window(genome: Genome, chrom: str, start: int, end: int, strand: str = "+") -> GenomeWindow:
    """The window [start, end) of `chrom` on `strand` ("-": the reverse complement), padding flagged."""
    window = genome.fetch(chrom, start, end, strand)
    return GenomeWindow(window.chrom, window.start, window.end, strand, window.sequence.upper(),
                        bool(window.pad_left), bool(window.pad_right))


def parse_region(region: str | tuple[str, int, int]) -> tuple[str, int, int]:
    """(chrom, start, end), 0-based half-open, from a tuple of those or a samtools string "chr1:1001-1100"
    (1-based, inclusive)."""
    if isinstance(region, str):
        match = _REGION.fullmatch(region.strip())
        if match is None:
            raise ParameterError("region", region, "'CHROM:START-END' (1-based, inclusive), e.g. 'chr1:1001-1100'")
        chrom, start, end = match["chrom"], int(match["start"].replace(",", "")) - 1, int(match["end"].replace(",", ""))
    else:
        chrom, start, end = region
    reject(not isinstance(start, int) or not isinstance(end, int) or start < 0 or end <= start, "region", region,
           "a non-empty region with 0 <= start < end")
    return chrom, start, end
