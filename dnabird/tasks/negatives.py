"""Negative windows for a positive set: DeePromoter's part-randomised copies, or genomic windows away
from every annotated site, matched to the positives' GC content.

Every draw takes a `numpy.random.Generator` made by the caller from (seed, epoch, index), so a
negative is a pure function of those numbers (exact resume, DDP, redraw per epoch).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dnabird.errors import ParameterError, reject
from dnabird.model.task_spec import Anchor

BASES = np.frombuffer(b"ACGT", dtype=np.uint8)
_GC = np.isin(np.arange(256), list(b"CG"))      # byte -> is G or C
_N = np.arange(256) == ord("N")


def part_bounds(length: int, parts: int) -> np.ndarray:
    """`parts + 1` boundaries cutting `length` bp into equal parts (round(k · length / parts); an
    8,000-bp window gives 20 parts of exactly 400 bp)."""
    return np.round(np.arange(parts + 1) * length / parts).astype(np.int64)


def deepromoter_negative(sequence: np.ndarray, rng: np.random.Generator, *, parts: int = 20,
                         keep: int = 8) -> np.ndarray:
    """DeePromoter's negative of one positive (Oubounyt et al. 2019; as egochao/DeePromoter): cut it into
    `parts` equal subsequences, keep `keep` of them chosen at random, replace every other one with
    i.i.d. uniform A/C/G/T. `sequence` is a uint8 array of ASCII bases."""
    if not 0 <= keep <= parts or parts < 1 or len(sequence) < parts:
        raise ParameterError("(parts, keep)", (parts, keep), f"1 <= parts <= len={len(sequence)}, 0 <= keep <= parts")
    bounds = part_bounds(len(sequence), parts)
    kept = rng.choice(parts, size=keep, replace=False)
    negative = BASES[rng.integers(0, 4, size=len(sequence))]
    for part in kept:
        negative[bounds[part]:bounds[part + 1]] = sequence[bounds[part]:bounds[part + 1]]
    return negative


def gc_fraction(sequence: np.ndarray) -> float:
    """G + C over the called (non-N) bases of a uint8 ASCII sequence (0 when all are N)."""
    called = len(sequence) - int(_N[sequence].sum())
    return float(_GC[sequence].sum()) / called if called else 0.0


CPG_CLASSES = ("CpG island", "non-CpG")


def cpg_class(sequence: np.ndarray, at: int, width: int = 500) -> str:
    """Whether the `width` bp centred on index `at` of a uint8 ASCII sequence look like a CpG island (Takai &
    Jones 2002: GC >= 0.55 and CpG observed/expected >= 0.65): "CpG island", else "non-CpG"."""
    core = sequence[max(0, at - width // 2):at + width - width // 2]
    c, g = int((core == ord("C")).sum()), int((core == ord("G")).sum())
    cpg = int(((core[:-1] == ord("C")) & (core[1:] == ord("G"))).sum())
    island = c and g and (c + g) / len(core) >= 0.55 and cpg * len(core) / (c * g) >= 0.65
    return CPG_CLASSES[0] if island else CPG_CLASSES[1]


@dataclass(frozen=True)
class GenomicWindow:
    """A window drawn from the genome: its anchor position and strand (the window follows the anchor
    rule) and its GC fraction."""

    chrom: str
    position: int
    strand: str
    gc: float


class GenomicNegatives:
    """Windows of the anchor's length from a lattice of starts (every `step` bp) on `chromosomes`, whose
    anchor position lies at least `min_site_distance` bp from every site in `sites` (on either strand)
    and whose N share is at most `max_n_fraction`; `draw` picks one uniformly among those within a GC
    tolerance of a target, never the same stretch twice. `read(chrom)`: a chromosome as uint8 upper-case
    ASCII; `blocked`: chromosome -> intervals no window may overlap. The lattice step is gcd(window length,
    `step`), so windows end on the lattice too; GC is exact (prefix sums over lattice bins).
    """

    def __init__(self, chromosomes: Sequence[str], read: Callable[[str], np.ndarray],
                 sites: Mapping[str, Sequence[int]], anchor: Anchor, *, min_site_distance: int = 2000,
                 max_n_fraction: float = 0.0, step: int = 100,
                 blocked: Mapping[str, Sequence[tuple[int, int]]] | None = None):
        reject(anchor.kind != "tss", "anchor", str(anchor), "a 'tss:-U:+D' anchor")
        width = anchor.length
        step = math.gcd(width, step)
        self.anchor, self.width, self.step = anchor, width, step
        chrom_ids, starts, strands, gcs = [], [], [], []
        self.chroms = list(chromosomes)
        for index, chrom in enumerate(self.chroms):
            sequence = read(chrom)
            bins = len(sequence) // step
            if bins * step < width:
                continue
            cut = sequence[:bins * step].reshape(bins, step)
            gc = np.concatenate(([0], np.cumsum(_GC[cut].sum(1))))
            n = np.concatenate(([0], np.cumsum(_N[cut].sum(1))))
            span = width // step
            gc_count, n_count = gc[span:] - gc[:-span], n[span:] - n[:-span]  # per window start
            start = np.arange(len(gc_count), dtype=np.int64) * step
            ok = n_count <= max_n_fraction * width
            for lo, hi in (blocked or {}).get(chrom, ()):
                ok &= ~((start < hi) & (start + width > lo))      # overlaps a blocked interval
            site = np.sort(np.asarray(sites.get(chrom, ()), dtype=np.int64))
            for strand in ("+", "-"):
                position = start + (anchor.upstream if strand == "+" else anchor.downstream - 1)
                far = _distance_to_nearest(position, site) >= min_site_distance
                keep = ok & far
                chrom_ids.append(np.full(int(keep.sum()), index, dtype=np.int32))
                starts.append(start[keep])
                strands.append(np.full(int(keep.sum()), strand == "-"))
                with np.errstate(invalid="ignore", divide="ignore"):
                    gcs.append((gc_count / (width - n_count))[keep])
        empty = (np.zeros(0), np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, bool))   # typed when none
        columns = [np.concatenate([first, *rest])
                   for first, rest in zip(empty, (gcs, chrom_ids, starts, strands), strict=True)]
        order = np.argsort(columns[0], kind="stable")
        self.gc, self.chrom_id, self.start, self.minus = (column[order] for column in columns)
        self._used: set[tuple[int, int]] = set()

    def __len__(self) -> int:
        """Candidate windows (each lattice start counts once per strand)."""
        return len(self.gc)

    def draw(self, target_gc: float, tolerance: float, rng: np.random.Generator, *,
             tries: int = 16) -> GenomicWindow | None:
        """A candidate with |GC − target| <= tolerance whose stretch no earlier draw used, or None."""
        lo = int(np.searchsorted(self.gc, target_gc - tolerance, side="left"))
        hi = int(np.searchsorted(self.gc, target_gc + tolerance, side="right"))
        if hi <= lo:
            return None
        picks = rng.integers(lo, hi, size=tries).tolist()
        scan = (lo + (picks[0] - lo + k) % (hi - lo) for k in range(hi - lo))   # crowded: on from the first pick
        pick = next((p for p in itertools.chain(picks, scan) if self._key(p) not in self._used), None)
        if pick is None:
            return None
        self._used.add(self._key(pick))
        minus = bool(self.minus[pick])
        position = int(self.start[pick]) + (self.anchor.downstream - 1 if minus else self.anchor.upstream)
        return GenomicWindow(self.chroms[self.chrom_id[pick]], position, "-" if minus else "+", float(self.gc[pick]))

    def _key(self, index: int) -> tuple[int, int]:
        return int(self.chrom_id[index]), int(self.start[index])


def _distance_to_nearest(positions: np.ndarray, sites: np.ndarray) -> np.ndarray:
    """Distance from each position to the nearest of the sorted `sites` (inf when there are none)."""
    if len(sites) == 0:
        return np.full(len(positions), np.inf)
    right = np.searchsorted(sites, positions).clip(max=len(sites) - 1)
    left = (right - 1).clip(min=0)
    return np.minimum(np.abs(sites[right] - positions), np.abs(positions - sites[left]))
