"""In-silico saturation mutagenesis: every SNV of a region scored in one window centred on the region.

All SNVs share that window (the region's centre base at index window_bp // 2), so their effects are
comparable position by position; the result is a position × {A, C, G, T} matrix per output (0 at the
reference base, NaN where the reference is N) with a heat map.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from dnabird.errors import UnscorableVariantError, reject
from dnabird.genome.reference import Genome
from dnabird.inference.predictor import Predictor
from dnabird.inference.windows import parse_region
from dnabird.progress import progress_bar
from dnabird.train.metrics import save_png
from dnabird.variants.records import Allele, Variant
from dnabird.variants.score import ScoredWindow, resolve_setup, score_windows
from dnabird.variants.scorer import SCORERS
from dnabird.variants.scores import VariantScores
from dnabird.variants.windows import anchored_windows

BASES = "ACGT"
@dataclasses.dataclass
class Mutagenesis:
    """The scores of every SNV of `sequence` = genome[start:end) of `chrom` (`scores`, one row per SNV in
    position then A, C, G, T order) and their effect matrices."""

    chrom: str
    start: int
    end: int
    sequence: str
    scores: VariantScores

    def matrix(self, kind: str = "diff") -> np.ndarray:
        """[positions, 4 bases, outputs]: the score `kind` of each SNV; 0 at the reference base (for
        differences), NaN where the position could not be scored."""
        values = np.full((self.end - self.start, len(BASES), len(self.scores.outputs)), np.nan)
        if kind in ("diff", "abs_diff", "logit_diff"):
            for offset, base in enumerate(self.sequence):
                if base in BASES:
                    values[offset, BASES.index(base)] = 0.0
        units = self.scores.units
        rows = (units["pos"].to_numpy() - 1 - self.start, [BASES.index(a) for a in units["alt"]])
        values[rows] = self.scores.array(kind)
        return values

    def to_hdf5(self, path: str | os.PathLike) -> None:
        """/diff, /logit_diff … [positions, 4, outputs], /outputs, /sequence; chrom, start, end, bases and
        settings as attributes."""
        from dnabird.inference.tables import hdf5_output, string_dataset

        with hdf5_output(path, self.scores.settings) as out:
            for kind in ("ref", "alt", "diff", "logit_diff"):
                out.create_dataset(kind, data=self.matrix(kind).astype(np.float32))
            string_dataset(out, "outputs", self.scores.outputs)
            out.attrs.update(chrom=self.chrom, start=self.start, end=self.end, sequence=self.sequence, bases=BASES)

    def plot(self, path: str | os.PathLike, *, output: int | str = 0, kind: str = "diff") -> None:
        """A heat map (bases × positions) of one output, the reference base of each position dotted."""
        from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

        index = self.scores.outputs.index(output) if isinstance(output, str) else output
        grid = self.matrix(kind)[:, :, index].T  # [4, positions]
        limit = float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 1.0
        width = min(24.0, 3.0 + 0.12 * grid.shape[1])
        fig = Figure(figsize=(width, 2.6))
        ax = fig.subplots()
        image = ax.imshow(grid, aspect="auto", cmap="RdBu_r", vmin=-limit or -1, vmax=limit or 1,
                          interpolation="nearest")
        refs = [(i, BASES.index(b)) for i, b in enumerate(self.sequence) if b in BASES]
        if refs:
            ax.scatter(*zip(*refs, strict=True), s=6, c="black", marker="o")
        ax.set_yticks(range(len(BASES)), list(BASES))
        ax.set_xlabel(f"{self.chrom}:{self.start + 1:,}-{self.end:,} (1-based)")
        ax.set_title(f"{self.scores.settings.get('method')} {kind}: {self.scores.outputs[index]}", fontsize=9)
        fig.colorbar(image, ax=ax, fraction=0.03, pad=0.01)
        save_png(fig, path, dpi=120)


def saturation_mutagenesis(model, genome: str | os.PathLike | Genome, region: str | tuple[str, int, int], *,
                           method: str = "auto", rc: str | None = None, window_bp: int | None = None,
                           eval_length: int | None = None, flank_bp: int = 0, batch_size: int = 16,
                           device: str = "auto", progress: bool = True, tokenizer=None, task=None) -> Mutagenesis:
    """Score every SNV of `region` in one window centred on it (arguments as `score_variants`; a
    TSS-anchored head is not supported: its windows are anchored at a TSS, not on a region)."""
    predictor = Predictor.load(model, tokenizer=tokenizer, task=task, device=device)
    genome = genome if isinstance(genome, Genome) else Genome(genome)
    setup = resolve_setup(predictor, method=method, rc=rc, window_bp=window_bp, eval_length=eval_length,
                          flank_bp=flank_bp, checkpoint=model if isinstance(model, (str, os.PathLike)) else None)
    reject(setup.anchor.kind != "centre", "model", model, "a model with centre-anchored windows (a pretrained MLM "
           "or a centre-anchored head): saturation mutagenesis centres one window on the region")
    chrom, start, end = parse_region(region)
    chrom = genome.resolve(chrom)
    reject(end > genome.length(chrom) or end - start > setup.window_bp, "region", region,
           f"a region within {chrom} ({genome.length(chrom)} bp) and at most window_bp={setup.window_bp} bp long")
    centre = start + (end - start) // 2
    window_start = centre - setup.window_bp // 2
    sequence = genome.fetch(chrom, start, end).sequence.upper()
    snvs = [(start + offset + 1, ref, alt) for offset, ref in enumerate(sequence) if ref in BASES
            for alt in BASES if alt != ref]  # (1-based pos, REF, ALT) in position then A, C, G, T order
    alleles = [Allele(0, n, Variant(chrom, *snv)) for n, snv in enumerate(snvs, start=1)]

    def windows_of(allele: Allele) -> list[ScoredWindow]:
        windows = anchored_windows(genome, allele.variant, window_start, window_start + setup.window_bp, centre)
        return [ScoredWindow(allele, windows, ".", True)]

    with progress_bar(total=len(alleles), enabled=progress, desc="mutagenesis", unit=" SNVs") as bar:
        scorer = SCORERS[setup.method](predictor, setup)
        scores = score_windows(scorer, setup, alleles, windows_of, batch_size, bar)
    if len(scores.skipped):
        first = scores.skipped.iloc[0]
        raise UnscorableVariantError(first["reason"], first["detail"])
    scores.settings = {**setup.describe(), "window_start": window_start, "tokenizer_hash": predictor.tokenizer.hash}
    return Mutagenesis(chrom, start, end, sequence, scores)
