"""DeepSEA-style chromatin data for the toy genome: feature peaks, the `.mat` bundle and its bins.

Peaks follow the planted structure: DNase at promoters and at the motif sites active in each cell,
TF peaks at their motif sites (CTCF occupancy shared across cells: a site bound in K562 is bound in
GM12878), Pol2 at TSSs, TBP at promoters with a TATA box, H3K4me3 over CpG islands, H3K27ac at promoters
and GATA enhancers; and, as ChIP-seq calls many weak or indirect events, MAX peaks at low-affinity
background sites (`BACKGROUND_DENSITY` per Mbp, at least `BACKGROUND_CLEARANCE` bp from every planted
element and island) that carry no planted motif. DeepSEA keeps only bins with a TF label, so without
those the training set would hold no plain background: a model would meet it first at scoring time
(where a distant variant lies) and take it for a promoter.

The bundle follows DeepSEA's rules: 200-bp bins, a label is 1 when more than 100 bp of the bin lie in
a peak of that feature, only bins with at least one TF label are kept, each input is the 1000 bp
centred on the bin, one-hot A, G, C, T (N all zero), forward rows then their reverse complements.
Splits: test = chr8 + chr9, valid = the first `VALID_FRACTION` of chr7, train = the rest.

Long-range features (`LONG_RANGE_FEATURES`): `plant_long_range` writes target sites (`LONG_RANGE_TARGET`,
bound by a local TF, so their bins are TF events) into unmasked background, each with a partner element
(`LONG_RANGE_ANCHOR`, then `LONG_RANGE_WORD_COPIES` tandem copies of one of `LONG_RANGE_WORD_COUNT`
words: a cluster of sites, as enhancers carry) 1.5–3.5 kb away on either side. A long-range
feature peaks over a fixed region around a target (`long_range_region`) only when its partner carries one
of the feature's words: among the bins over that region, the word alone decides the label. Every planted
element lies >= `LONG_RANGE_SPACING` bp from every other one (so the 1 kb around a target bin holds no
partner: at chance there), and no partner lies within `LONG_RANGE_EXCLUSIVE` bp of another pair's target
(so an 8 kb window centred on a target bin sees its own partner and no other). The truth, one row per
target with its partner, word and labels, is `long_range_truth.tsv`.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

import h5py
import numpy as np
import scipy.io

from dnabird.datasets.toy_genome import EDGE_MARGIN, ELEMENT_CHROMOSOMES, ToyGenome, distinct_words, encode, mark_near
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
    """Where a feature's peaks come from: `fraction` of the instances of `kind`, with half-widths;
    `words`: only the long-range targets whose partner carries one of these words."""

    kind: str  # "promoter" (TSS; "tata_promoter": those with a TATA box), "island" (CpG island span),
    # "target" (long-range), "background" or a motif kind ("CTCF", …)
    fraction: float
    half_width: tuple[int, int]
    words: tuple[int, ...] | None = None


# the planted long-range set: target motif (TEAD-like, no CpG), partner anchor and words, placement rules
LONG_RANGE_TARGET, LONG_RANGE_ANCHOR = "GGACATTCCTTG", "TTGACTCA"
LONG_RANGE_WORD_COUNT, LONG_RANGE_WORD_LENGTH = 4, 12
LONG_RANGE_WORD_COPIES = 6          # a partner carries its word in tandem copies, as enhancers cluster sites
LONG_RANGE_DENSITY = 5_000          # placement attempts per Mbp of element chromosome
LONG_RANGE_DISTANCE = (1_500, 3_500)  # partner start - target start, either side
LONG_RANGE_SPACING, LONG_RANGE_EXCLUSIVE, LONG_RANGE_PAD = 1_200, 4_200, 40
LONG_RANGE_HALF = 400  # a long-range peak is exactly the target's centre ± 400 bp (no random width or shift)


BACKGROUND_DENSITY, BACKGROUND_CLEARANCE = 100, 1_000  # low-affinity sites per Mbp; bp from any element


def long_range_region(start: int, end: int) -> tuple[int, int]:
    """The region a long-range feature covers around a target at [start, end) when its word is active."""
    centre = (start + end) // 2
    return centre - LONG_RANGE_HALF, centre + LONG_RANGE_HALF


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
    "K562|TBP|None": (Source("tata_promoter", 0.9, (100, 200)),),
    "K562|Pol2|None": (Source("promoter", 0.8, (150, 300)),),
    "GM12878|YY1|None": (Source("YY1", 0.8, (100, 200)), Source("island", 0.3, (0, 100))),
    "K562|MAX|None": (Source("background", 1.0, (100, 200)),),
    # bound at every target over the long-range region: every bin a long-range label could mark is a TF event
    "HepG2|TEAD4|None": (Source("target", 1.0, (LONG_RANGE_HALF, LONG_RANGE_HALF + 1), words=(0, 1, 2, 3)),),
    "HepG2|EP300|None": (Source("target", 1.0, (LONG_RANGE_HALF, LONG_RANGE_HALF + 1), words=(0, 2)),),
    "K562|H3K4me3|None": (Source("island", 0.95, (200, 500)),),
    "HepG2|H3K4me3|None": (Source("island", 0.9, (200, 500)),),
    "K562|H3K27ac|None": (Source("promoter", 0.8, (400, 900)), Source("GATA", 0.9, (300, 600))),
    "K562|H3K4me1|None": (Source("target", 1.0, (LONG_RANGE_HALF, LONG_RANGE_HALF + 1), words=(0, 1)),),
}
# features decided by the partner 1.5-3.5 kb away, not by the central 1 kb
LONG_RANGE_FEATURES = tuple(name for name, sources in FEATURES.items()
                            if any(s.words is not None and len(s.words) < LONG_RANGE_WORD_COUNT for s in sources))


def feature_group(name: str) -> str:
    """The group of a `cell|target|treatment` name: DNase, HM (histone mark: target H + digit, as in
    Selene) or TF."""
    target = name.split("|")[1]
    if target == "DNase":
        return "DNase"
    return "HM" if target[:1] == "H" and target[1:2].isdigit() else "TF"


TF_FEATURES = tuple(name for name in FEATURES if feature_group(name) == "TF")


@dataclass
class ChromatinData:
    """Peaks per feature and the binned DeepSEA examples per split."""

    peaks: list[tuple[str, int, int, str]]
    bins: dict[str, list[tuple[str, int, int]]]
    x: dict[str, np.ndarray]  # split → (2N, 4, 1000) uint8, forward rows then reverse complements
    y: dict[str, np.ndarray]  # split → (2N, F) uint8


@dataclass(frozen=True)
class LongRangeSite:
    """A planted target and its partner element (anchor + word `word`)."""

    name: str
    chrom: str
    target_start: int
    partner_start: int
    word: int

    @property
    def target_end(self) -> int:
        return self.target_start + len(LONG_RANGE_TARGET)

    @property
    def partner_end(self) -> int:
        return self.partner_start + PARTNER_LENGTH


PARTNER_LENGTH = len(LONG_RANGE_ANCHOR) + LONG_RANGE_WORD_COPIES * LONG_RANGE_WORD_LENGTH


def partner_sequence(word: str) -> str:
    """A partner element: the anchor, then `LONG_RANGE_WORD_COPIES` tandem copies of its word."""
    return LONG_RANGE_ANCHOR + word * LONG_RANGE_WORD_COPIES


def long_range_words(rng: np.random.Generator) -> list[str]:
    """`LONG_RANGE_WORD_COUNT` distinct words without CpG (nor at the joins of a partner's copies),
    >= 5 mismatches apart."""
    return distinct_words(lambda: "".join(rng.choice(list("ACGT"), size=LONG_RANGE_WORD_LENGTH)),
                          LONG_RANGE_WORD_COUNT, 5, lambda word: "CG" not in LONG_RANGE_ANCHOR[-1] + word + word[0])


def _busy(genome: ToyGenome, chrom: str) -> np.ndarray:
    """Bases not available to planted long-range elements: gaps, repeats, islands, planted elements,
    duplication clusters, pair spans and promoter cores."""
    spans = genome.planted_spans(chrom)
    spans += [(d.start, d.end) for d in genome.duplications if d.chrom == chrom]
    spans += [(p.tss - 300, p.tss + 300) for p in genome.promoters if p.chrom == chrom]
    busy = mark_near(genome.masked[chrom] | (genome.codes[chrom] == 4), spans, LONG_RANGE_PAD)
    busy[:EDGE_MARGIN] = busy[-EDGE_MARGIN:] = True
    return busy


def plant_long_range(genome: ToyGenome, rng: np.random.Generator) -> tuple[list[LongRangeSite], list[str]]:
    """Write target/partner pairs into `genome` (see the module docstring); returns them and the words."""
    words = long_range_words(rng)
    sites: list[LongRangeSite] = []
    target_len, partner_len = len(LONG_RANGE_TARGET), PARTNER_LENGTH
    for chrom in ELEMENT_CHROMOSOMES:
        codes, busy = genome.codes[chrom], _busy(genome, chrom)
        targets: list[int] = []
        partners: list[int] = []
        for _ in range(int(round(LONG_RANGE_DENSITY * len(codes) / 1e6))):
            target = int(rng.integers(EDGE_MARGIN, len(codes) - EDGE_MARGIN))
            partner = target + int(rng.integers(*LONG_RANGE_DISTANCE)) * (1 if rng.random() < 0.5 else -1)
            word = int(rng.integers(LONG_RANGE_WORD_COUNT))
            free = all(0 <= s and s + n <= len(codes) and not busy[s - LONG_RANGE_PAD:s + n + LONG_RANGE_PAD].any()
                       for s, n in ((target, target_len), (partner, partner_len)))
            apart = all(abs(s - other) >= LONG_RANGE_SPACING for s in (target, partner) for other in targets + partners)
            exclusive = all(abs(partner - t) >= LONG_RANGE_EXCLUSIVE for t in targets) and \
                all(abs(p - target) >= LONG_RANGE_EXCLUSIVE for p in partners)
            if not (free and apart and exclusive):
                continue
            codes[target:target + target_len] = encode(LONG_RANGE_TARGET)
            codes[partner:partner + partner_len] = encode(partner_sequence(words[word]))
            targets.append(target)
            partners.append(partner)
            sites.append(LongRangeSite(f"LR_{len(sites) + 1}", chrom, target, partner, word))
    sites.sort(key=lambda site: (genome.rank(site.chrom), site.target_start))
    genome.long_range = sites
    return sites, words


def long_range_truth_rows(sites: list[LongRangeSite], words: list[str]):
    """Rows of `long_range_truth.tsv` (header `LONG_RANGE_TRUTH_HEADER`)."""
    for site in sites:
        labels = [int(site.word in next(s.words for s in FEATURES[name] if s.words is not None))
                  for name in LONG_RANGE_FEATURES]
        yield (site.name, site.chrom, site.target_start, site.target_end, site.partner_start, site.partner_end,
               partner_sequence(words[site.word]), site.word,
               *long_range_region(site.target_start, site.target_end), *labels)


LONG_RANGE_TRUTH_HEADER = "\t".join(("name", "chrom", "target_start", "target_end", "partner_start", "partner_end",
                                     "partner_sequence", "word", "region_start", "region_end", *LONG_RANGE_FEATURES))


def background_sites(genome: ToyGenome, rng: np.random.Generator) -> list[tuple[str, int, int]]:
    """Low-affinity sites (1 bp): random positions of each element chromosome at least
    `BACKGROUND_CLEARANCE` bp from every gap, planted element, island, promoter and long-range element."""
    sites = []
    for chrom in ELEMENT_CHROMOSOMES:
        codes = genome.codes[chrom]
        loci = genome.planted_spans(chrom) + [(g.start, g.end) for g in genome.gaps if g.chrom == chrom]
        loci += [(p.tss, p.tss + 1) for p in genome.promoters if p.chrom == chrom]
        loci += [span for s in genome.long_range if s.chrom == chrom
                 for span in ((s.target_start, s.target_end), (s.partner_start, s.partner_end))]
        near = mark_near(codes == 4, loci, BACKGROUND_CLEARANCE)
        near[:EDGE_MARGIN] = near[-EDGE_MARGIN:] = True
        free = np.flatnonzero(~near)
        count = min(len(free), int(round(BACKGROUND_DENSITY * len(codes) / 1e6)))
        sites += [(chrom, int(p), int(p) + 1) for p in np.sort(rng.choice(free, size=count, replace=False))]
    return sites


def _instances(genome: ToyGenome, kind: str, words: tuple[int, ...] | None = None,
               background: list[tuple[str, int, int]] | None = None) -> list[tuple[str, int, int]]:
    """(chrom, start, end) of every instance a source can draw peaks from."""
    if kind == "background":
        return background or []
    if kind == "target":
        return [(s.chrom, s.target_start, s.target_end) for s in genome.long_range
                if words is None or s.word in words]
    if kind in ("promoter", "tata_promoter"):
        return [(p.chrom, p.tss, p.tss + 1) for p in genome.promoters if p.tata or kind == "promoter"]
    if kind == "island":
        return [(i.chrom, i.start, i.end) for i in genome.islands]
    return [(e.chrom, e.start, e.end) for e in genome.elements if e.kind == kind]


def call_peaks(genome: ToyGenome, rng: np.random.Generator) -> list[tuple[str, int, int, str]]:
    """Peaks of every feature, merged per feature, sorted by chromosome, start, end."""
    kinds = {source.kind for sources in FEATURES.values() for source in sources}
    background = background_sites(genome, rng)
    occupancy = {kind: rng.random(len(_instances(genome, kind, background=background))) for kind in sorted(kinds)}
    peaks = []
    for name, sources in FEATURES.items():
        intervals = []
        for source in sources:
            instances = _instances(genome, source.kind, background=background)
            chosen = set(_instances(genome, source.kind, source.words, background))
            for (chrom, start, end), u in zip(instances, occupancy[source.kind], strict=True):
                if u >= source.fraction or (chrom, start, end) not in chosen:
                    continue
                half = int(rng.integers(*source.half_width))
                shift = int(rng.normal(0, 15))
                if source.words is not None:   # long-range: the fixed region of the truth file, word decides
                    intervals.append((chrom, *long_range_region(start, end)))
                elif source.kind == "island":
                    intervals.append((chrom, max(0, start - half), min(len(genome.codes[chrom]), end + half)))
                else:
                    centre = (start + end) // 2 + shift
                    intervals.append((chrom, max(0, centre - half), centre + half))
        peaks.extend((chrom, start, end, name) for chrom, start, end in _merge(sorted(intervals)))
    peaks.sort(key=lambda peak: (genome.rank(peak[0]), peak[1], peak[2], list(FEATURES).index(peak[3])))
    return peaks


def _merge(intervals: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    merged: list[tuple[str, int, int]] = []
    for chrom, start, end in intervals:
        if merged and merged[-1][0] == chrom and start <= merged[-1][2]:
            merged[-1] = (chrom, merged[-1][1], max(end, merged[-1][2]))
        else:
            merged.append((chrom, start, end))
    return merged


def build_chromatin(genome: ToyGenome, rng: np.random.Generator) -> ChromatinData:
    """Peaks, then DeepSEA bins, labels and one-hot inputs for every split."""
    peaks = call_peaks(genome, rng)
    names = list(FEATURES)
    tf_rows = [names.index(name) for name in TF_FEATURES]
    windows, labels, bins = ({split: [] for split in SPLIT_KEYS} for _ in range(3))  # per split
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
            split = "test" if chrom in TEST_CHROMOSOMES else "valid" if (
                chrom == VALID_CHROMOSOME and start < VALID_FRACTION * len(codes)) else "train"
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
