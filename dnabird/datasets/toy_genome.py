"""The toy "hg19" genome: chromosomes with N gaps, soft-masked repeat families, CpG depletion,
CpG islands, promoters, transcription-factor motif sites, long-range coupled pairs and recent tandem
segmental duplications.

Construction, per chromosome (0-based half-open coordinates throughout):
1. reserve N gaps, then element loci (promoters with their islands, orphan islands, motif sites,
   pair elements, then duplication clusters on every chromosome but chrM) so that nothing overlaps;
2. draw background bases, fill the unreserved space and the duplication units with diverged copies of
   a few consensus repeats (soft-masked), then deaminate most CpGs (C→T or G→A), which gives the
   genome-wide CpG depletion;
3. write islands (CpG-rich, not deaminated), promoter elements, motif sites and pair words over
   their reserved loci, the copies of each duplication cluster, and N over the gaps.

Long-range pairs: element A (anchor + one of `PAIR_WORDS` words) sits 2–6 kb upstream of element B
(another anchor + the partner word); B's word is a fixed function of A's, neither word occurs
anywhere else and pairs stay 1 kb apart, so B is predictable from the nearest A upstream but not
from ~1 kb around B (a 1-in-`PAIR_WORDS` guess).

Duplications: a cluster is a unit of `DUPLICATION_UNIT` bp followed by 1–3 copies of it, each after a
short spacer (`DUPLICATION_SPACER`) and with exactly a fraction `DUPLICATION_DIVERGENCE` of its bases
substituted (no indels): recent near-tandem segmental duplications. As in real ones, the unit is
background with interspersed repeats, copied with it (soft-masked and listed like any repeat copy).
Clusters cover about `DUPLICATION_COVERAGE` of each chromosome. Real hg19 has ~5 % segmental
duplications and ~3 % tandem repeats, mostly older and more diverged; the toy exaggerates (more,
recent, tandem) so that a model trained for minutes can show what context beyond one 500–1000 bp
corpus sentence is worth: a base whose partner copy lies in a neighbouring sentence is nearly free
given that context and a guess without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

A, C, G, T, N = 0, 1, 2, 3, 4
_ENCODE = np.full(256, N, dtype=np.uint8)
for _code, _base in enumerate(b"ACGT"):
    _ENCODE[_base] = _ENCODE[_base + 32] = _code
_COMPLEMENT = np.array([T, G, C, A, N], dtype=np.uint8)
UPPER_ASCII = np.frombuffer(b"ACGTN", dtype=np.uint8)

# name -> length at scale 1.0 (≈ 3.6 Mbp); chrM keeps hg19's real length at every scale.
CHROMOSOME_LENGTHS = {
    "chr1": 760_000, "chr2": 640_000, "chr3": 520_000, "chr7": 460_000, "chr8": 400_000,
    "chr9": 360_000, "chrX": 420_000, "chrM": 16_571, "chrUn_gl000220": 40_000,
}
UNSCALED = ("chrM",)
# chromosomes that carry elements (chrM and the unplaced contig carry background and repeats only)
ELEMENT_CHROMOSOMES = ("chr1", "chr2", "chr3", "chr7", "chr8", "chr9", "chrX")
# (chromosome, "start" | "end", length at scale 1.0): telomere-like N runs
END_GAPS = (("chr1", "start", 10_000), ("chr9", "end", 6_000), ("chr7", "start", 4_000))
INTERNAL_GAPS = (20_000, 1_500)  # a centromere-like gap and a small one per chromosome (scaled)

BACKGROUND_PROBS = (0.287, 0.213, 0.213, 0.287)  # A C G T before CpG deamination
CHRM_PROBS = (0.31, 0.31, 0.13, 0.25)
ISLAND_PROBS = (0.17, 0.33, 0.33, 0.17)
DEAMINATION_RATE = 0.90  # fraction of background CpGs mutated to TpG / CpA
REPEAT_COVERAGE = 0.50  # target masked fraction of the unreserved space
EDGE_MARGIN = 5_000  # no element this close to a chromosome end

# per Mbp of element chromosome. 130 promoters per Mbp put ~110 liftable TSSs on the held-out chr8 + chr9
# (> 200 test windows for the promoter task); 30 % carry a CpG island, which keeps the genome's CpG
# observed/expected near 0.27 (with more island promoters it climbs above real genomes' ~0.25)
PROMOTER_DENSITY, ISLAND_PROMOTER_FRACTION, TATA_FRACTION = 130, 0.3, 0.75
ORPHAN_ISLAND_DENSITY = 8
SITE_DENSITY = {"CTCF": 50, "GATA": 35, "FOXA": 35, "YY1": 25}
PAIR_DENSITY, PAIR_DISTANCE, PAIR_SPACING = 100, (2_000, 6_000), 1_000
ALTERNATIVE_PROMOTER_FRACTION, ALTERNATIVE_DISTANCE = 0.15, (1_500, 3_000)
MIN_PROMOTERS = 5  # per element chromosome, so the liftover plan always finds its special blocks

# motif consensus (motif orientation) and the index of a core base whose change breaks it
MOTIFS = {
    "TATA": ("TATAAAAG", 1), "Inr": ("TCAGTCT", 2), "GCbox": ("GGGGCGGGGC", 4),
    "CTCF": ("TGGCCACCAGGGGGCGCTA", 9), "GATA": ("AGATAAGG", 3), "FOXA": ("TGTTTACTTA", 3),
    "YY1": ("AAGATGGCGGC", 5),
}
# offsets of promoter elements relative to the TSS, in promoter orientation
PROMOTER_LAYOUT = {"GCbox": (-110, -72), "TATA": (-31,), "Inr": (-2,)}
ISLAND_SPAN = (-700, 500)  # island around an island promoter's TSS, promoter orientation
CORE_SPAN = (-200, 100)  # reserved around a promoter without island
ORPHAN_ISLAND_LENGTH = (600, 1_200)
PAIR_ANCHORS = ("GTCAGC", "CTGACG")
PAIR_WORDS, PAIR_WORD_LENGTH = 8, 16
DUPLICATION_COVERAGE = 0.15  # target share of each chromosome (chrM excepted) inside clusters
DUPLICATION_UNIT, DUPLICATION_COPIES, DUPLICATION_SPACER = (300, 900), (1, 3), (0, 100)  # bp, count, bp
DUPLICATION_DIVERGENCE = (0.01, 0.03)  # substituted fraction of each copy relative to its unit

# name, consensus length, consensus GC, weight, divergence range, fraction of consensus kept (min)
REPEAT_FAMILIES = (
    ("ToyAlu", 300, 0.56, 0.42, (0.04, 0.15), 0.6),
    ("ToyMIR", 260, 0.47, 0.15, (0.18, 0.30), 0.4),
    ("ToyL1", 6_000, 0.40, 0.28, (0.05, 0.20), 0.02),
    ("ToyERV", 450, 0.45, 0.08, (0.08, 0.20), 0.5),
    ("(CA)n", 120, None, 0.07, (0.02, 0.08), 0.3),
)


def encode(text: str) -> np.ndarray:
    """DNA text → codes 0..4 (A, C, G, T, N); case is ignored, anything else becomes N."""
    return _ENCODE[np.frombuffer(text.encode("ascii"), dtype=np.uint8)]


def decode(codes: np.ndarray) -> str:
    """Codes 0..4 → upper-case DNA text."""
    return UPPER_ASCII[codes].tobytes().decode("ascii")


def reverse_complement(codes: np.ndarray) -> np.ndarray:
    """Reverse complement of a code array."""
    return _COMPLEMENT[codes[::-1]]


@dataclass(frozen=True)
class Interval:
    """A named locus: repeat copy, island, gap or planted element (kind says which)."""

    chrom: str
    start: int
    end: int
    kind: str
    name: str
    strand: str = "+"


@dataclass(frozen=True)
class Promoter:
    """A planted promoter: TSS position (the first transcribed base) and strand in toy hg19."""

    name: str
    chrom: str
    tss: int
    strand: str
    island: bool
    tata: bool


@dataclass(frozen=True)
class Pair:
    """A long-range coupled pair: A's word index determines B's (same index, other word list)."""

    name: str
    chrom: str
    a_start: int
    b_start: int
    word: int
    length: int

    @property
    def start(self) -> int:
        return self.a_start


@dataclass(frozen=True)
class Duplication:
    """A tandem duplication cluster: the unit at `starts[0]` and its copies at `starts[1:]`, each
    `unit` bp long with a fraction `divergence` of its bases substituted."""

    name: str
    chrom: str
    starts: tuple[int, ...]
    unit: int
    divergence: float

    @property
    def start(self) -> int:
        return self.starts[0]

    @property
    def end(self) -> int:
        return self.starts[-1] + self.unit


@dataclass
class ToyGenome:
    """Sequences (codes 0..4 + soft-mask flags) and every annotation of the toy hg19 genome."""

    codes: dict[str, np.ndarray]
    masked: dict[str, np.ndarray]
    gaps: list[Interval]
    repeats: list[Interval]
    islands: list[Interval]
    promoters: list[Promoter]
    elements: list[Interval]  # promoter elements, motif sites and pair elements
    pairs: list[Pair]
    duplications: list[Duplication]
    consensus: dict[str, np.ndarray]
    pair_words: tuple[list[str], list[str]]
    long_range: list = field(default_factory=list)  # planted long-range sites (`toy_chromatin.plant_long_range`)

    def planted_spans(self, chrom: str) -> list[tuple[int, int]]:
        """(start, end) of every planted element and CpG island on `chrom`."""
        return [(item.start, item.end) for item in (*self.elements, *self.islands) if item.chrom == chrom]

    def rank(self, chrom: str) -> int:
        """`chrom`'s place in FASTA order: records sort by it, then by position."""
        return list(self.codes).index(chrom)

    def lengths(self) -> dict[str, int]:
        """Chromosome name → length, in FASTA order."""
        return {chrom: len(codes) for chrom, codes in self.codes.items()}

    def ascii(self, chrom: str) -> np.ndarray:
        """The chromosome as FASTA bytes: upper case, repeats lower case, gaps N."""
        text = UPPER_ASCII[self.codes[chrom]]
        return np.where(self.masked[chrom], text + 32, text).astype(np.uint8)


def chromosome_lengths(scale: float) -> dict[str, int]:
    """Chromosome lengths at `scale` (chrM fixed)."""
    return {name: length if name in UNSCALED else int(round(length * scale))
            for name, length in CHROMOSOME_LENGTHS.items()}


class _Occupancy:
    """Which bases of one chromosome are already reserved; places new loci without overlap."""

    def __init__(self, length: int):
        self.taken = np.zeros(length, dtype=bool)
        self.gap = np.zeros(length, dtype=bool)
        self.pair_span = np.zeros(length, dtype=bool)  # pairs never interleave

    def free(self, start: int, end: int, pad: int) -> bool:
        return 0 <= start and end <= len(self.taken) and not self.taken[max(0, start - pad): end + pad].any()

    def take(self, start: int, end: int) -> None:
        self.taken[start:end] = True

    def place(self, rng: np.random.Generator, size: int, pad: int, tries: int = 200) -> int | None:
        """Start of a free stretch of `size` bases (with `pad` free around it), or None."""
        low, high = EDGE_MARGIN, len(self.taken) - EDGE_MARGIN - size
        for _ in range(tries if high > low else 0):
            start = int(rng.integers(low, high))
            if self.free(start, start + size, pad):
                self.take(start, start + size)
                return start
        return None


def mark_near(mask: np.ndarray, spans, pad: int) -> np.ndarray:
    """Set `mask` (in place) within `pad` bases of every (start, end) span; returns it."""
    for start, end in spans:
        mask[max(0, start - pad):end + pad] = True
    return mask


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of the runs of True in a boolean array."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.view(np.int8), [0]))))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def _random_bases(rng: np.random.Generator, size: int, probs) -> np.ndarray:
    return rng.choice(4, size=size, p=probs).astype(np.uint8)


def _deaminate(codes: np.ndarray, rng: np.random.Generator, rate: float) -> None:
    """Mutate a fraction `rate` of CpGs in place, half C→T and half G→A (no new CpG can appear)."""
    cpg = np.flatnonzero((codes[:-1] == C) & (codes[1:] == G))
    hit = cpg[rng.random(len(cpg)) < rate]
    on_c = rng.random(len(hit)) < 0.5
    codes[hit[on_c]] = T
    codes[hit[~on_c] + 1] = A


def _place_in_frame(codes: np.ndarray, tss: int, strand: str, offset: int, motif: np.ndarray) -> int:
    """Write `motif` at `offset` from the TSS in promoter orientation; return its genomic start."""
    start = tss + offset if strand == "+" else tss - offset - len(motif) + 1
    codes[start:start + len(motif)] = motif if strand == "+" else reverse_complement(motif)
    return start


def _consensus(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Each repeat family's consensus: random bases at its GC, or its dinucleotide repeated (microsatellites)."""
    return {name: np.tile(encode(name[1:3]), length // 2) if gc is None
            else _random_bases(rng, length, ((1 - gc) / 2, gc / 2, gc / 2, (1 - gc) / 2))
            for name, length, gc, *_ in REPEAT_FAMILIES}


def distinct_words(draw: Callable[[], Sequence], count: int, mismatches: int,
                   accept: Callable[[Sequence], bool] = lambda word: True) -> list:
    """`count` words from successive `draw()`s: those `accept` takes that differ from every word kept before
    at >= `mismatches` positions."""
    words: list = []
    while len(words) < count:
        word = draw()
        if accept(word) and all(sum(a != b for a, b in zip(word, w, strict=True)) >= mismatches for w in words):
            words.append(word)
    return words


class _ChromosomeBuilder:
    """Lays out and synthesises one chromosome; collects its annotations."""

    def __init__(self, genome: ToyGenome, name: str, length: int, rng: np.random.Generator, scale: float):
        self.genome, self.name, self.length, self.rng, self.scale = genome, name, length, rng, scale
        self.space = _Occupancy(length)
        self.island_spans: list[tuple[int, int, str]] = []

    def count(self, density_per_mbp: float) -> int:
        return int(round(density_per_mbp * self.length / 1e6))

    def reserve_gaps(self) -> None:
        for chrom, where, size in END_GAPS:
            if chrom == self.name:
                size = max(500, int(size * self.scale))
                start = 0 if where == "start" else self.length - size
                self._gap(start, start + size)
        for size in INTERNAL_GAPS:
            size = max(100, min(self.length // 20, int(size * self.scale * self.rng.uniform(0.6, 1.4))))
            start = self.space.place(self.rng, size, pad=2_000)
            if start is not None:
                self._gap(start, start + size)

    def _gap(self, start: int, end: int) -> None:
        self.space.take(start, end)
        self.space.gap[start:end] = True
        self.genome.gaps.append(Interval(self.name, start, end, "gap", "gap"))

    def reserve_promoters(self) -> None:
        """Promoters on both strands (most with a CpG island); some genes get an alternative `_2`
        promoter without island 1.5–3 kb downstream of the first."""
        total = max(MIN_PROMOTERS, self.count(PROMOTER_DENSITY))
        for _ in range(total):
            island = bool(self.rng.random() < ISLAND_PROMOTER_FRACTION)
            strand = "+" if self.rng.random() < 0.5 else "-"
            span = ISLAND_SPAN if island else CORE_SPAN
            start = self.space.place(self.rng, span[1] - span[0], pad=300)
            if start is None:
                continue
            tss = start - span[0] if strand == "+" else start + span[1] - 1
            gene = f"TG{len(self.genome.promoters) + 1:04d}"
            self._promoter(f"{gene}_1", tss, strand, island)
            if island:
                self.island_spans.append((start, start + span[1] - span[0], f"promoter:{gene}_1"))
            if self.rng.random() < ALTERNATIVE_PROMOTER_FRACTION:
                distance = int(self.rng.integers(*ALTERNATIVE_DISTANCE))
                alternative = tss + distance if strand == "+" else tss - distance
                low = alternative + CORE_SPAN[0] if strand == "+" else alternative - CORE_SPAN[1] + 1
                if self.space.free(low, low + CORE_SPAN[1] - CORE_SPAN[0], pad=300):
                    self.space.take(low, low + CORE_SPAN[1] - CORE_SPAN[0])
                    self._promoter(f"{gene}_2", alternative, strand, island=False)

    def _promoter(self, name: str, tss: int, strand: str, island: bool) -> None:
        self.genome.promoters.append(Promoter(name, self.name, tss, strand, island,
                                              bool(self.rng.random() < TATA_FRACTION)))

    def reserve_orphan_islands(self) -> None:
        for _ in range(self.count(ORPHAN_ISLAND_DENSITY)):
            size = int(self.rng.integers(*ORPHAN_ISLAND_LENGTH))
            start = self.space.place(self.rng, size, pad=300)
            if start is not None:
                self.island_spans.append((start, start + size, "orphan"))

    def reserve_sites(self, counters: dict[str, int]) -> None:
        for kind, density in SITE_DENSITY.items():
            motif = MOTIFS[kind][0]
            for _ in range(self.count(density)):
                start = self.space.place(self.rng, len(motif), pad=150)
                if start is None:
                    continue
                counters[kind] = counters.get(kind, 0) + 1
                strand = "+" if self.rng.random() < 0.5 else "-"
                self.genome.elements.append(Interval(self.name, start, start + len(motif), kind,
                                                     f"{kind}_site_{counters[kind]}", strand))

    def reserve_pairs(self) -> None:
        size = len(PAIR_ANCHORS[0]) + PAIR_WORD_LENGTH
        for _ in range(self.count(PAIR_DENSITY)):
            a_start = self.space.place(self.rng, size, pad=100)
            if a_start is None:
                continue
            b_start = a_start + int(self.rng.integers(*PAIR_DISTANCE))
            inside = b_start + size <= self.length - EDGE_MARGIN
            span = slice(a_start, b_start + size)
            apart = slice(max(0, a_start - PAIR_SPACING), b_start + size + PAIR_SPACING)
            if not (inside and self.space.free(b_start, b_start + size, 100)
                    and not self.space.gap[span].any() and not self.space.pair_span[apart].any()):
                self.space.taken[a_start:a_start + size] = False
                continue
            self.space.take(b_start, b_start + size)
            self.space.pair_span[span] = True
            self.genome.pairs.append(Pair(f"PAIR_{len(self.genome.pairs) + 1}", self.name, a_start, b_start,
                                          int(self.rng.integers(PAIR_WORDS)), size))

    def reserve_duplications(self) -> None:
        """Duplication clusters, each a unit and its 1–3 copies in tandem, covering about
        `DUPLICATION_COVERAGE` of the chromosome."""
        mean_span = np.mean(DUPLICATION_UNIT) * (1 + np.mean(DUPLICATION_COPIES)) \
            + np.mean(DUPLICATION_COPIES) * np.mean(DUPLICATION_SPACER)
        for _ in range(self.count(DUPLICATION_COVERAGE * 1e6 / mean_span)):
            unit = int(self.rng.integers(DUPLICATION_UNIT[0], DUPLICATION_UNIT[1] + 1))
            copies = int(self.rng.integers(DUPLICATION_COPIES[0], DUPLICATION_COPIES[1] + 1))
            spacers = self.rng.integers(DUPLICATION_SPACER[0], DUPLICATION_SPACER[1] + 1, size=copies)
            offsets = np.concatenate(([0], np.cumsum(unit + spacers)))
            start = self.space.place(self.rng, int(offsets[-1]) + unit, pad=100)
            if start is not None:
                self.genome.duplications.append(Duplication(
                    f"DUP_{len(self.genome.duplications) + 1}", self.name, tuple((start + offsets).tolist()),
                    unit, round(float(self.rng.uniform(*DUPLICATION_DIVERGENCE)), 3)))

    def synthesise(self) -> None:
        codes = _random_bases(self.rng, self.length, BACKGROUND_PROBS)
        masked = np.zeros(self.length, dtype=bool)
        for start, end in _runs(~self.space.taken):
            self._fill_repeats(codes, masked, start, end)
        for dup in self._duplications():  # units carry repeats too; their copies get them in _duplicate
            self._fill_repeats(codes, masked, dup.start, dup.start + dup.unit)
        _deaminate(codes, self.rng, DEAMINATION_RATE)
        for start, end, label in self.island_spans:
            codes[start:end] = _random_bases(self.rng, end - start, ISLAND_PROBS)
            self.genome.islands.append(Interval(self.name, start, end, "cpg_island", label))
        self._plant(codes)
        self._duplicate(codes, masked)
        for gap in self.genome.gaps:
            if gap.chrom == self.name:
                codes[gap.start:gap.end] = N
        self.genome.codes[self.name], self.genome.masked[self.name] = codes, masked

    def _fill_repeats(self, codes: np.ndarray, masked: np.ndarray, start: int, end: int) -> None:
        """Diverged copies (3'-end fragments, either strand) with exponential spacers over [start, end)."""
        weights = np.array([family[3] for family in REPEAT_FAMILIES])
        position = start
        while True:
            name, length, _, _, divergence, keep = REPEAT_FAMILIES[self.rng.choice(len(weights),
                                                                                  p=weights / weights.sum())]
            size = int(length * self.rng.uniform(keep, 1.0))
            position += int(self.rng.exponential(size * (1 - REPEAT_COVERAGE) / REPEAT_COVERAGE))
            size = min(size, end - position)
            if size < 30:
                return
            copy = self.genome.consensus[name][length - size:].copy()  # 3'-end fragment, as for LINEs
            mutated = self.rng.random(size) < self.rng.uniform(*divergence)
            copy[mutated] = (copy[mutated] + self.rng.integers(1, 4, size=int(mutated.sum()))) % 4
            strand = "+" if self.rng.random() < 0.5 else "-"
            codes[position:position + size] = copy if strand == "+" else reverse_complement(copy)
            masked[position:position + size] = True
            self.genome.repeats.append(Interval(self.name, position, position + size, "repeat", name, strand))
            position += size

    def _plant(self, codes: np.ndarray) -> None:
        """Write promoter elements, motif sites and pair words over their reserved loci."""
        genome = self.genome
        for promoter in (p for p in genome.promoters if p.chrom == self.name):
            for kind, offsets in PROMOTER_LAYOUT.items():
                if (kind == "TATA" and not promoter.tata) or (kind == "GCbox" and not promoter.island):
                    continue
                motif = encode(MOTIFS[kind][0])
                for offset in offsets:
                    start = _place_in_frame(codes, promoter.tss, promoter.strand, offset, motif)
                    genome.elements.append(Interval(self.name, start, start + len(motif), kind,
                                                    promoter.name, promoter.strand))
        for site in (e for e in genome.elements if e.chrom == self.name and e.kind in SITE_DENSITY):
            motif = encode(MOTIFS[site.kind][0])
            codes[site.start:site.end] = motif if site.strand == "+" else reverse_complement(motif)
        a_words, b_words = genome.pair_words
        for pair in (p for p in genome.pairs if p.chrom == self.name):
            for role, start, anchor, word in (("pairA", pair.a_start, PAIR_ANCHORS[0], a_words[pair.word]),
                                              ("pairB", pair.b_start, PAIR_ANCHORS[1], b_words[pair.word])):
                codes[start:start + pair.length] = encode(anchor + word)
                genome.elements.append(Interval(self.name, start, start + pair.length, role, pair.name))

    def _duplications(self) -> list[Duplication]:
        return [d for d in self.genome.duplications if d.chrom == self.name]

    def _duplicate(self, codes: np.ndarray, masked: np.ndarray) -> None:
        """Write each cluster's copies: its unit, repeats and soft mask included, with exactly
        round(divergence × unit) bases substituted."""
        for dup in self._duplications():
            unit = slice(dup.start, dup.start + dup.unit)
            repeats = [r for r in self.genome.repeats if r.chrom == self.name and unit.start <= r.start < unit.stop]
            for start in dup.starts[1:]:
                copy = codes[unit].copy()
                hit = self.rng.choice(dup.unit, size=round(dup.divergence * dup.unit), replace=False)
                copy[hit] = (copy[hit] + self.rng.integers(1, 4, size=len(hit))) % 4
                codes[start:start + dup.unit], masked[start:start + dup.unit] = copy, masked[unit]
                shift = start - dup.start
                self.genome.repeats.extend(replace(r, start=r.start + shift, end=r.end + shift) for r in repeats)


def build_genome(rng: np.random.Generator, scale: float = 1.0) -> ToyGenome:
    """Synthesise the whole toy hg19 genome from `rng`."""
    words = distinct_words(lambda: _random_bases(rng, PAIR_WORD_LENGTH, (0.25,) * 4), 2 * PAIR_WORDS, 6)
    genome = ToyGenome(codes={}, masked={}, gaps=[], repeats=[], islands=[], promoters=[], elements=[],
                       pairs=[], duplications=[], consensus=_consensus(rng),
                       pair_words=([decode(w) for w in words[:PAIR_WORDS]],
                                   [decode(w) for w in words[PAIR_WORDS:]]))
    site_counters: dict[str, int] = {}
    for name, length in chromosome_lengths(scale).items():
        builder = _ChromosomeBuilder(genome, name, length, rng, scale)
        if name == "chrM":
            genome.codes[name] = _random_bases(rng, length, CHRM_PROBS)
            genome.masked[name] = np.zeros(length, dtype=bool)
            continue
        builder.reserve_gaps()
        if name in ELEMENT_CHROMOSOMES:
            builder.reserve_promoters()
            builder.reserve_orphan_islands()
            builder.reserve_sites(site_counters)
            builder.reserve_pairs()
        builder.reserve_duplications()
        builder.synthesise()
    for items in (genome.elements, genome.islands, genome.pairs, genome.duplications, genome.repeats):
        items.sort(key=lambda item: (genome.rank(item.chrom), item.start))
    return genome


