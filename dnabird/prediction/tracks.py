"""Genome-browser tracks of tile predictions: per output, the tiles covering each base averaged (tiles that
overlap share the bases they cover; a base no tile covers has no value), written as bigWig (pyBigWig) and
bedGraph, named `<output>.<scale>.bw` / `.bedGraph` (`scale`: "probability", or a regression head's "target");
`plot_tracks` draws a few of them (or a group's median) along the tiled spans."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyBigWig

from dnabird.io import atomic_output

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def per_base_average(starts: np.ndarray, ends: np.ndarray, values: np.ndarray, length: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segments [start, end) of one contig of `length` bp over which the mean of the covering tiles'
    `values` [tiles, outputs] is constant: (starts, ends, means [segments, outputs]); tiles are cut to the
    contig, and segments no tile covers are left out."""
    starts, ends = np.clip(starts, 0, length), np.clip(ends, 0, length)
    keep = ends > starts
    starts, ends, values = starts[keep], ends[keep], np.asarray(values, dtype=np.float64)[keep]
    points = np.unique(np.concatenate([starts, ends]))
    first, last = np.searchsorted(points, starts), np.searchsorted(points, ends)
    sums, counts = np.zeros((len(points), values.shape[1])), np.zeros(len(points), dtype=np.int64)
    np.add.at(sums, first, values)
    np.add.at(sums, last, -values)
    np.add.at(counts, first, 1)
    np.add.at(counts, last, -1)
    sums, counts = np.cumsum(sums, axis=0)[:-1], np.cumsum(counts)[:-1]  # over [points[i], points[i + 1])
    covered = counts > 0
    return points[:-1][covered], points[1:][covered], sums[covered] / counts[covered, None]


def track_names(outputs: list[str], scale: str) -> list[str]:
    """A file stem per output, `<output>.<scale>`, with characters other than letters, digits and ._-
    replaced by _ (made unique by a suffix where two outputs would share one)."""
    stems, seen = [], set()
    for n, output in enumerate(outputs):
        stem = _UNSAFE.sub("_", output).strip("_") or f"output_{n}"
        stem = stem if stem not in seen else f"{stem}_{n}"
        seen.add(stem)
        stems.append(f"{stem}.{scale}")
    return stems


def write_tracks(tiles: pd.DataFrame, outputs: list[str], scale: str, lengths: dict[str, int],
                 folder: str | os.PathLike) -> dict[str, dict[str, str]]:
    """For each output, `folder`/<stem>.bw and <stem>.bedGraph of `tiles` (columns chrom, start, end and one
    per output), contigs in `lengths`' order (the genome's); returns {output: {"bigwig": …, "bedgraph": …}}."""
    segments = {}
    for chrom in lengths:
        rows = tiles[tiles["chrom"] == chrom]
        if len(rows):
            segments[chrom] = per_base_average(rows["start"].to_numpy(), rows["end"].to_numpy(),
                                               rows[outputs].to_numpy(np.float64), lengths[chrom])
    folder, files = Path(folder), {}
    for k, (output, stem) in enumerate(zip(outputs, track_names(outputs, scale), strict=True)):
        bigwig, bedgraph = folder / f"{stem}.bw", folder / f"{stem}.bedGraph"
        with atomic_output(bigwig) as tmp:
            handle = pyBigWig.open(str(tmp), "w")
            handle.addHeader(list(lengths.items()))
            for chrom, (starts, ends, means) in segments.items():
                handle.addEntries([chrom] * len(starts), starts.tolist(), ends=ends.tolist(),
                                  values=means[:, k].tolist())
            handle.close()
        with atomic_output(bedgraph) as tmp, open(tmp, "w", encoding="utf-8") as text:
            for chrom, (starts, ends, means) in segments.items():
                text.writelines(f"{chrom}\t{s}\t{e}\t{v:.7g}\n" for s, e, v in zip(starts, ends, means[:, k],
                                                                                   strict=True))
        files[output] = {"bigwig": bigwig.name, "bedgraph": bedgraph.name}
    return files


def plot_tracks(bigwigs: dict[str, str | os.PathLike], lines: dict[str, list[str]], spans: list[tuple[str, int, int]],
                scale: str, path: str | os.PathLike, bins: int = 2000) -> None:
    """A PNG of tracks along each span (chrom, start, end), one panel per span: each line of `lines` (name ->
    outputs) the median over its outputs of their `bigwigs` (output -> file), read as the mean of at most
    `bins` equal bins of the span (each base when it is shorter); bases no tile covers are left blank."""
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

    from dnabird.train.metrics import save_png

    outputs = list(dict.fromkeys(o for members in lines.values() for o in members))
    fig = Figure(figsize=(9.0, 1.2 + 2.2 * len(spans)))
    handles = {output: pyBigWig.open(str(bigwigs[output])) for output in outputs}
    try:
        for ax, (chrom, start, end) in zip(fig.subplots(len(spans), 1, squeeze=False)[:, 0], spans, strict=True):
            count = min(bins, end - start)
            edges = np.linspace(start, end, count + 1)
            means = np.array([handles[o].stats(chrom, start, end, type="mean", nBins=count) for o in outputs],
                             dtype=np.float64)  # None (no value) becomes nan
            for name, members in lines.items():
                values = means[[outputs.index(m) for m in members]]
                covered = ~np.isnan(values).all(axis=0)
                line = np.full(count, np.nan)
                line[covered] = np.nanmedian(values[:, covered], axis=0)
                ax.stairs(line, edges, baseline=None, label=name, linewidth=1.2)
            ax.set_xlim(start, end)
            ax.set_xlabel(f"{chrom}:{start + 1:,}-{end:,} (1-based)")
            ax.set_ylabel(scale)
            ax.legend(fontsize=7, loc="lower left", bbox_to_anchor=(0, 1), ncols=min(4, len(lines)), frameon=False)
    finally:
        for handle in handles.values():
            handle.close()
    save_png(fig, path, dpi=110)
