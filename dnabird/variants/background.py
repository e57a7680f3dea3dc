"""A background for calibrating scores: random SNVs of the genome, scored with the same model and settings.

`background_alleles` draws SNVs uniformly over the genome's bases (seeded): each at an A/C/G/T base whose
centred window (the scoring window's length) lies inside its contig and holds no N, with an ALT drawn
among the three other bases. `score_background` scores them as `score_variants` scores a VCF, and
`VariantScores.calibrate(background)` gives each score's empirical quantile among the background's. The
background is random genomic SNVs — mostly in sequence under little constraint, but not a set of known
neutral variants (docs/variant-scoring.md).
"""

from __future__ import annotations

import os

import numpy as np

from dnabird.errors import InputFormatError, ParameterError, check_int, reject
from dnabird.genome.reference import Genome
from dnabird.variants.records import Allele, Variant
from dnabird.variants.scores import VariantScores

DRAWS_PER_SNV = 100  # draws allowed per background SNV before the genome is deemed too gapped
BASES = "ACGT"


def background_alleles(genome: Genome, count: int, window_bp: int, seed: int = 0) -> list[Allele]:
    """`count` distinct SNVs drawn uniformly over the genome's positions with `np.random.default_rng(seed)`,
    keeping those at an A/C/G/T base whose centred `window_bp` window lies inside the contig and holds no N;
    each ALT drawn among the three other bases. In genome order (FASTA contigs, then position), as records
    0 … count − 1 with ids bg1 … bgN."""
    check_int("count", count, 1)
    check_int("window_bp", window_bp, 1)
    rng = np.random.default_rng(seed)
    names, sizes = zip(*genome.lengths.items(), strict=True)
    ends = np.cumsum(sizes)
    left = window_bp // 2  # a SNV's centred window starts this many bp before it
    drawn: dict[tuple[int, int], str] = {}
    for _ in range(count * DRAWS_PER_SNV):
        at, other = int(rng.integers(ends[-1])), int(rng.integers(3))
        index = int(np.searchsorted(ends, at, side="right"))
        position = at - int(ends[index] - sizes[index])
        if (index, position) in drawn or position < left or position - left + window_bp > sizes[index]:
            continue
        try:
            window = genome.fetch(names[index], position - left, position - left + window_bp).sequence.upper()
        except InputFormatError:  # a character other than A/C/G/T/N in the window
            continue
        ref = window[left]
        if ref in BASES and "N" not in window:
            drawn[index, position] = ref + BASES.replace(ref, "")[other]
            if len(drawn) == count:
                break
    if len(drawn) < count:
        raise ParameterError("background", count, f"at most {len(drawn)}: {count * DRAWS_PER_SNV} draws found only "
                                                   f"{len(drawn)} positions whose {window_bp}-bp window has no N "
                                                   f"in {genome.path}")
    return [Allele(record, 1, Variant(names[index], position + 1, bases[0], bases[1], f"bg{record + 1}"))
            for record, ((index, position), bases) in enumerate(sorted(drawn.items()))]


def score_background(model, genome: str | os.PathLike | Genome, count: int, *, seed: int = 0,
                     progress: bool = True, **options) -> VariantScores:
    """`count` background SNVs (`background_alleles`) scored with `model` as `score_variants(model, genome,
    …, **options)` scores variants — calibrate its scores with `scores.calibrate(background)`. Single process
    (a chunked run, `dnabird.variants.resume`, scores its background under torchrun too)."""
    from dnabird.variants.score import prepare_scoring

    scoring = prepare_scoring(model, genome, **options)
    return score_background_with(scoring, count, seed, progress)


def check_background(scoring, count: int) -> None:
    """`ParameterError` unless a background of `count` SNVs can be drawn for `scoring`'s windows."""
    check_int("background", count, 0)
    reject(count > 0 and scoring.setup.anchor.kind != "centre", "background", count,
           f"0: a background is drawn for windows centred on the variants, not {scoring.setup.anchor} windows")


def score_background_with(scoring, count: int, seed: int, progress: bool = True) -> VariantScores:
    """The background scored with a prepared `ScoringSetup` (each rank its records, merged on every rank)."""
    check_background(scoring, count)
    alleles = background_alleles(scoring.genome, count, scoring.setup.window_bp, seed)
    return scoring.score_all(alleles, progress, "scoring background")
