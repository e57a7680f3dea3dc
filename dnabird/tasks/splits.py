"""Genomic windows of a task: read with the shared drop rules, and split into train / validation / test by
chromosome, or at random by groups of overlapping windows, so that no stretch of sequence is seen in two splits."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from dnabird.errors import ConfigError, reject

SPLITS = ("train", "validation", "test")


def window_bases(genome, chrom: str, start: int, end: int, strand: str, max_n_fraction: float,
                 counts: Counter) -> np.ndarray | None:
    """Bases [start, end) of `chrom` on `strand` as uint8 ASCII, or None when the window runs off the
    chromosome or holds more than `max_n_fraction` N (counted in `counts`: off_chromosome_end, too_many_n).

    Training and evaluation examples are a sample, so a window that is not all genome is dropped. Variant
    scoring keeps such windows instead (`dnabird.variants.windows`: N-padded, clipped at N runs to fit),
    since every variant asked about must get a score."""
    if start < 0 or end > genome.length(chrom):
        counts["off_chromosome_end"] += 1
        return None
    bases = np.frombuffer(genome.fetch(chrom, start, end, strand).sequence.encode("ascii"), np.uint8)
    if np.count_nonzero(bases == ord("N")) > max_n_fraction * len(bases):
        counts["too_many_n"] += 1
        return None
    return bases


def overlap_groups(chroms: Sequence[str], starts: Sequence[int], ends: Sequence[int]) -> np.ndarray:
    """Group id of each half-open interval: intervals that overlap, directly or through a chain of
    others on the same chromosome, share one id (ids are 0, 1, … in order of chromosome, then start)."""
    chroms, starts, ends = np.asarray(chroms), np.asarray(starts), np.asarray(ends)
    order = np.lexsort((starts, chroms))
    groups = np.empty(len(order), dtype=np.int64)
    group, reach, chrom = -1, None, None
    for i in order:
        if chroms[i] != chrom or starts[i] >= reach:
            group += 1
            chrom, reach = chroms[i], ends[i]
        reach = max(reach, ends[i])
        groups[i] = group
    return groups


def chromosome_split(chroms: Sequence[str], *, test: Sequence[str], validation: Sequence[str]) -> np.ndarray:
    """"test" on the `test` chromosomes, "validation" on the `validation` ones, "train" elsewhere."""
    shared = set(test) & set(validation)
    if shared:
        raise ConfigError(f"chromosomes {sorted(shared)} are named both test and validation chromosomes")
    lookup = {**{c: "validation" for c in validation}, **{c: "test" for c in test}}
    return np.array([lookup.get(c, "train") for c in chroms], dtype=object)


def random_split(groups: Sequence[int], *, fractions: Sequence[float], seed: int) -> np.ndarray:
    """Whole groups assigned to train / validation / test with probabilities `fractions` (a seeded,
    group-order-independent draw: each group's split depends only on (seed, group id))."""
    fractions = np.asarray(fractions, dtype=np.float64)
    reject(fractions.shape != (3,) or (fractions < 0).any() or not np.isclose(fractions.sum(), 1.0),
           "split_fractions", fractions.tolist(), "three non-negative fractions summing to 1")
    groups = np.asarray(groups)
    unique = np.unique(groups)
    draws = np.array([np.random.default_rng((seed, int(g))).random() for g in unique])
    assigned = np.searchsorted(np.cumsum(fractions), draws, side="right").clip(max=2)
    by_group = dict(zip(unique.tolist(), np.array(SPLITS, dtype=object)[assigned], strict=True))
    return np.array([by_group[g] for g in groups.tolist()], dtype=object)
