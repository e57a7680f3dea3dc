"""DeepSEA-style chromatin data for the toy genome: feature peaks, the `.mat` bundle and its bins.

Peaks follow the planted structure: DNase at promoters and at the motif sites active in each cell,
TF peaks at their motif sites (CTCF occupancy shared across cells: a site bound in K562 is bound in
GM12878), Pol2 at TSSs, H3K4me3 over CpG islands, H3K27ac at promoters and GATA enhancers.

The bundle follows DeepSEA's rules: 200-bp bins, a label is 1 when more than 100 bp of the bin lie in
a peak of that feature, only bins with at least one TF label are kept, each input is the 1000 bp
centred on the bin, one-hot A, G, C, T (N all zero), forward rows then their reverse complements.
Splits: test = chr8 + chr9, valid = the first `VALID_FRACTION` of chr7, train = the rest.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

import h5py
import numpy as np
import scipy.io

from dnabird.datasets.toy_genome import ELEMENT_CHROMOSOMES, ToyGenome
from dnabird.io import atomic_output

BIN, WINDOW, MIN_OVERLAP = 200, 1000, 100
TEST_CHROMOSOMES, VALID_CHROMOSOME, VALID_FRACTION = ("chr8", "chr9"), "chr7", 0.5
SPLIT_KEYS = {"train": ("trainxdata", "traindata"), "valid": ("validxdata", "validdata"),
              "test": ("testxdata", "testdata")}
# rows: A, C, G, T, N codes → one-hot columns in DeepSEA's A, G, C, T order
ONE_HOT_AGCT = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]], np.uint8)
MAT73_HEADER = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: dnabird toy genome HDF5 schema 1.00 ."
MAT5_HEADER = b"MATLAB 5.0 MAT-file, Platform: posix, Created on: dnabird toy genome"


@dataclass(frozen=True)
class Source:
    """Where a feature's peaks come from: `fraction` of the instances of `kind`, with half-widths."""

    kind: str  # "promoter" (TSS), "island" (CpG island span) or a motif kind ("CTCF", …)
    fraction: float
    half_width: tuple[int, int]


# DeepSEA column order: DNase, then TF, then histone marks
FEATURES: dict[str, tuple[Source, ...]] = {
    "GM12878|DNase|None": (Source("promoter", 0.95, (120, 250)), Source("CTCF", 0.9, (80, 150)),
                           Source("YY1", 0.8, (80, 150))),
    "K562|DNase|None": (Source("promoter", 0.95, (120, 250)), Source("CTCF", 0.7, (80, 150)),
                        Source("GATA", 0.9, (80, 200))),
    "HepG2|DNase|None": (Source("promoter", 0.95, (120, 250)), Source("CTCF", 0.8, (80, 150)),
                         Source("FOXA", 0.9, (80, 200))),
    "GM12878|CTCF|None": (Source("CTCF", 0.9, (100, 200)),),
    "K562|CTCF|None": (Source("CTCF", 0.7, (100, 200)),),
    "K562|GATA-1|None": (Source("GATA", 0.9, (100, 250)),),
    "HepG2|FOXA1|None": (Source("FOXA", 0.9, (100, 250)),),
    "K562|Pol2|None": (Source("promoter", 0.8, (150, 300)),),
    "GM12878|YY1|None": (Source("YY1", 0.8, (100, 200)), Source("island", 0.3, (0, 100))),
    "K562|H3K4me3|None": (Source("island", 0.95, (200, 500)),),
    "HepG2|H3K4me3|None": (Source("island", 0.9, (200, 500)),),
    "K562|H3K27ac|None": (Source("promoter", 0.8, (400, 900)), Source("GATA", 0.9, (300, 600))),
}


def feature_group(name: str) -> str:
    """The group of a `cell|target|treatment` name: DNase, histone (target H + digit, as in Selene) or TF."""
    target = name.split("|")[1]
    if target == "DNase":
        return "DNase"
    return "histone" if target[:1] == "H" and target[1:2].isdigit() else "TF"


TF_FEATURES = tuple(name for name in FEATURES if feature_group(name) == "TF")


@dataclass
class ChromatinData:
    """Peaks per feature and the binned DeepSEA examples per split."""

    peaks: list[tuple[str, int, int, str]]
    bins: dict[str, list[tuple[str, int, int]]]
    x: dict[str, np.ndarray]  # split → (2N, 4, 1000) uint8, forward rows then reverse complements
    y: dict[str, np.ndarray]  # split → (2N, F) uint8


def _instances(genome: ToyGenome, kind: str) -> list[tuple[str, int, int]]:
    """(chrom, start, end) of every instance a source can draw peaks from."""
    if kind == "promoter":
        return [(p.chrom, p.tss, p.tss + 1) for p in genome.promoters]
    if kind == "island":
        return [(i.chrom, i.start, i.end) for i in genome.islands]
    return [(e.chrom, e.start, e.end) for e in genome.elements if e.kind == kind]


def call_peaks(genome: ToyGenome, rng: np.random.Generator) -> list[tuple[str, int, int, str]]:
    """Peaks of every feature, merged per feature, sorted by chromosome, start, end."""
    kinds = {source.kind for sources in FEATURES.values() for source in sources}
    occupancy = {kind: rng.random(len(_instances(genome, kind))) for kind in sorted(kinds)}
    order = list(genome.codes)
    peaks = []
    for name, sources in FEATURES.items():
        intervals = []
        for source in sources:
            for (chrom, start, end), u in zip(_instances(genome, source.kind), occupancy[source.kind],
                                              strict=True):
                if u >= source.fraction:
                    continue
                half = int(rng.integers(*source.half_width))
                shift = int(rng.normal(0, 15))
                if source.kind == "island":
                    intervals.append((chrom, max(0, start - half), min(len(genome.codes[chrom]), end + half)))
                else:
                    centre = (start + end) // 2 + shift
                    intervals.append((chrom, max(0, centre - half), centre + half))
        peaks.extend((chrom, start, end, name) for chrom, start, end in _merge(sorted(intervals)))
    peaks.sort(key=lambda peak: (order.index(peak[0]), peak[1], peak[2], list(FEATURES).index(peak[3])))
    return peaks


def _merge(intervals: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    merged: list[tuple[str, int, int]] = []
    for chrom, start, end in intervals:
        if merged and merged[-1][0] == chrom and start <= merged[-1][2]:
            merged[-1] = (chrom, merged[-1][1], max(end, merged[-1][2]))
        else:
            merged.append((chrom, start, end))
    return merged


def _split_of(chrom: str, start: int, length: int) -> str:
    if chrom in TEST_CHROMOSOMES:
        return "test"
    if chrom == VALID_CHROMOSOME and start < VALID_FRACTION * length:
        return "valid"
    return "train"


def build_chromatin(genome: ToyGenome, rng: np.random.Generator) -> ChromatinData:
    """Peaks, then DeepSEA bins, labels and one-hot inputs for every split."""
    peaks = call_peaks(genome, rng)
    names = list(FEATURES)
    tf_rows = [names.index(name) for name in TF_FEATURES]
    windows: dict[str, list[np.ndarray]] = {split: [] for split in SPLIT_KEYS}
    labels: dict[str, list[np.ndarray]] = {split: [] for split in SPLIT_KEYS}
    bins: dict[str, list[tuple[str, int, int]]] = {split: [] for split in SPLIT_KEYS}
    for chrom in sorted(ELEMENT_CHROMOSOMES):  # DeepSEA orders bins chromosome-lexicographically
        codes = genome.codes[chrom]
        covered = np.zeros((len(names), len(codes)), dtype=bool)
        for peak_chrom, start, end, name in peaks:
            if peak_chrom == chrom:
                covered[names.index(name), start:end] = True
        count = len(codes) // BIN
        label = (covered[:, : count * BIN].reshape(len(names), count, BIN).sum(axis=2) > MIN_OVERLAP).T
        flank = (WINDOW - BIN) // 2
        for index in np.flatnonzero(label[:, tf_rows].any(axis=1)):
            start = int(index) * BIN
            if start - flank < 0 or start + BIN + flank > len(codes):
                continue
            split = _split_of(chrom, start, len(codes))
            bins[split].append((chrom, start, start + BIN))
            windows[split].append(codes[start - flank: start + BIN + flank])
            labels[split].append(label[index])
    x, y = {}, {}
    for split in SPLIT_KEYS:
        forward = ONE_HOT_AGCT[np.array(windows[split]).reshape(-1, WINDOW)].transpose(0, 2, 1)
        x[split] = np.ascontiguousarray(np.concatenate([forward, forward[:, ::-1, ::-1]]))
        y[split] = np.concatenate([labels[split], labels[split]]).astype(np.uint8).reshape(-1, len(names))
    return ChromatinData(peaks, bins, x, y)


def write_mat_v73(path: pathlib.Path, split: str, x: np.ndarray, y: np.ndarray) -> None:
    """MATLAB v7.3 (HDF5 with a 512-byte MAT header) in column-major axes: x (1000, 4, N), y (F, N)."""
    with atomic_output(path) as tmp:
        with h5py.File(tmp, "w", userblock_size=512) as handle:
            for key, array in zip(SPLIT_KEYS[split], (x.transpose(2, 1, 0), y.T), strict=True):
                chunks = (*array.shape[:-1], max(1, min(array.shape[-1], 256)))
                dataset = handle.create_dataset(key, data=array, chunks=chunks, compression="gzip",
                                                track_times=False)
                dataset.attrs["MATLAB_class"] = np.bytes_("uint8")
        with open(tmp, "r+b") as handle:  # version 0x0200, little-endian marker "IM"
            handle.write(MAT73_HEADER.ljust(116) + b"\0" * 8 + b"\x00\x02IM")


def write_mat_v5(path: pathlib.Path, split: str, x: np.ndarray, y: np.ndarray) -> None:
    """MATLAB v5 via scipy: x (N, 4, 1000), y (N, F); the header's creation date is made constant."""
    with atomic_output(path) as tmp:
        with open(tmp, "wb") as handle:
            scipy.io.savemat(handle, dict(zip(SPLIT_KEYS[split], (x, y), strict=True)), format="5",
                             do_compression=True)
        with open(tmp, "r+b") as handle:
            handle.write(MAT5_HEADER.ljust(116))
