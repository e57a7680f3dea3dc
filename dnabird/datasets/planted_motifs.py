"""Labelled sequence tables with a planted motif, to try the `labelled` task on (docs/own-data.md): windows of a
genome that do not overlap (or random DNA) into which `MOTIF` is written 0 to `max_copies` times at random places.

- binary: label 1 when the sequence carries the motif (once), else 0 — half of each;
- regression: target = the number of copies (0 to `max_copies`, uniform) plus Gaussian noise of `noise` s.d.

A reverse-complement copy counts as a copy (the model must read both strands, as a transcription factor does).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from dnabird.io import write_text_atomic

MOTIF = "TATCGATACG"
PROBLEMS = ("binary", "regression")
_COMPLEMENT = str.maketrans("ACGT", "TGCA")


def reverse_complement(sequence: str) -> str:
    return sequence.translate(_COMPLEMENT)[::-1]


def _background(rng: np.random.Generator, count: int, length: int, genome) -> list[str]:
    """`count` windows of `length` bp: non-overlapping windows of `genome` (a `dnabird.genome.Genome`; slots of
    `length` bp drawn without replacement, those with N passed over), else random DNA."""
    if genome is None:
        return ["".join(rng.choice(list("ACGT"), length)) for _ in range(count)]
    contigs = genome.contigs
    slots = np.cumsum([genome.length(c) // length for c in contigs])
    out = []
    for slot in rng.permutation(int(slots[-1])):
        contig = int(np.searchsorted(slots, slot, side="right"))
        start = (int(slot) - (int(slots[contig - 1]) if contig else 0)) * length
        sequence = genome.fetch(contigs[contig], start, start + length).sequence.upper()
        if "N" not in sequence:
            out.append(sequence)
            if len(out) == count:
                return out
    raise ValueError(f"the genome holds {len(out)} windows of {length} bp without N, fewer than {count}")


def plant(sequence: str, copies: int, rng: np.random.Generator, motif: str = MOTIF) -> str:
    """`sequence` with `copies` non-overlapping copies of `motif` (each on a random strand) at random places."""
    slots = len(sequence) // len(motif)
    if copies > slots:
        raise ValueError(f"{copies} copies of a {len(motif)}-bp motif do not fit {len(sequence)} bp")
    bases = list(sequence)
    for slot in rng.choice(slots, size=copies, replace=False):
        word = motif if rng.random() < 0.5 else reverse_complement(motif)
        bases[slot * len(motif):(slot + 1) * len(motif)] = word
    return "".join(bases)


def planted_table(count: int, length: int, *, problem: str = "binary", seed: int = 0, genome=None,
                  max_copies: int = 3, noise: float = 0.3, motif: str = MOTIF) -> pd.DataFrame:
    """A table of `count` sequences of `length` bp with columns `sequence` and `label` (module docstring)."""
    if problem not in PROBLEMS:
        raise ValueError(f"problem={problem!r} is invalid: expected one of {PROBLEMS}")
    rng = np.random.default_rng(seed)
    background = _background(rng, count, length, genome)
    if problem == "binary":
        copies = np.arange(count) % 2
        rng.shuffle(copies)
        labels = copies
    else:
        copies = rng.integers(0, max_copies + 1, size=count)
        labels = np.round(copies + rng.normal(0.0, noise, size=count), 4)
    sequences = [plant(s, int(c), rng, motif) for s, c in zip(background, copies, strict=True)]
    return pd.DataFrame({"sequence": sequences, "label": labels})


def write_tables(out_dir: str | os.PathLike, *, count: int, length: int, seed: int = 0, genome=None,
                 max_copies: int = 3, noise: float = 0.3) -> dict[str, Path]:
    """`motif_binary.csv` and `motif_regression.csv` in `out_dir` (GUE's `sequence,label` layout)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for offset, problem in enumerate(PROBLEMS):
        table = planted_table(count, length, problem=problem, seed=seed + offset, genome=genome,
                              max_copies=max_copies, noise=noise)
        paths[problem] = out_dir / f"motif_{problem}.csv"
        write_text_atomic(paths[problem], table.to_csv(index=False))
    return paths
