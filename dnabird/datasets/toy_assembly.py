"""The toy "hg38": a rearranged copy of toy hg19, its UCSC chain (hg38 → hg19) and the promoters in
hg38 coordinates, as EPDnew ships them.

Each toy hg19 chromosome is cut, at midpoints between neighbouring TSSs, into segments. Its hg38
version is a novel prefix followed by the segments in order, each losing up to 300 bp at its start
(deleted in hg38) and separated by novel hg38-only stretches. Three rearrangements make liftover
non-trivial:
- on `INVERTED_ON` one segment holding two promoters is reverse-complemented (its promoters flip
  strand);
- one such segment of `MOVED[0]` is moved into `MOVED[1]` (its promoters land on another chromosome);
- some novel stretches (2–4 kb) carry hg38-only promoters, which do not lift at all.
The main chain of a chromosome holds its collinear forward segments; every moved or inverted
segment is a chain of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dnabird.datasets.toy_genome import ELEMENT_CHROMOSOMES, ToyGenome

INVERTED_ON = "chr2"
MOVED = ("chr3", "chrX")
SEGMENT_LENGTH = 50_000  # mean hg19 segment at scale 1.0
PREFIX_LENGTH = (1_000, 3_000)  # novel hg38 sequence before the first segment
FIRST_DELETION = (0, 2_000)  # hg19 bases at the chromosome start absent from hg38
DELETION = (0, 300)  # hg19 bases at a segment start absent from hg38
SMALL_INSERTION = (1, 200)  # novel hg38 bases between segments
NOVEL_INSERTION = (2_000, 4_000)  # novel stretch carrying an hg38-only promoter
NOVEL_PROMOTER_FRACTION = 0.15
EPD_UPSTREAM, EPD_DOWNSTREAM = 49, 10  # an EPDnew item: 49 bp upstream + TSS + 10 bp downstream
EPD_SCORE = 900


@dataclass(frozen=True)
class Piece:
    """A stretch of toy hg38: a copy of hg19 `qchrom[qstart:qend]` on `strand`, or novel (qchrom None)."""

    qchrom: str | None
    qstart: int
    qend: int
    strand: str = "+"

    @property
    def length(self) -> int:
        return self.qend - self.qstart


@dataclass(frozen=True)
class LiftedPromoter:
    """A promoter in toy hg38 with its truth in toy hg19 (None where it has no hg19 counterpart).

    status: "ok" (same chromosome and strand), "strand_flip", "other_chromosome" or "unmapped"
    (the statuses of `dnabird.genome.liftover`).
    """

    name: str
    hg38_chrom: str
    hg38_tss: int
    hg38_strand: str
    hg19_chrom: str | None
    hg19_tss: int | None
    hg19_strand: str | None
    status: str
    island: bool
    tata: bool

    def bed8(self) -> tuple:
        """EPDnew BED8 row: 60 bp, TSS = thickStart on +, thickEnd − 1 on −."""
        tss = self.hg38_tss
        if self.hg38_strand == "+":
            start = tss - EPD_UPSTREAM
            thick = (tss, start + 60)
        else:
            start = tss - EPD_DOWNSTREAM
            thick = (start, tss + 1)
        return (self.hg38_chrom, start, start + 60, self.name, EPD_SCORE, self.hg38_strand, *thick)


@dataclass
class Assembly:
    """Toy hg38 as pieces of toy hg19, plus every promoter placed on it."""

    pieces: dict[str, list[Piece]]
    promoters: list[LiftedPromoter]

    def size(self, chrom: str) -> int:
        return sum(piece.length for piece in self.pieces[chrom])

    def chain_text(self, hg19_sizes: dict[str, int]) -> str:
        """The UCSC chain file (t = toy hg38, q = toy hg19): main chains first, then one per moved or
        inverted segment."""
        main, others = [], []
        for chrom, pieces in self.pieces.items():
            placed = [(t, piece) for t, piece in _placed(pieces) if piece.qchrom is not None]
            main.append((chrom, [(t, p) for t, p in placed if p.qchrom == chrom and p.strand == "+"]))
            others.extend((chrom, [(t, p)]) for t, p in placed if p.qchrom != chrom or p.strand == "-")
        return "".join(_chain(chain_id, chrom, self.size(chrom), blocks, hg19_sizes)
                       for chain_id, (chrom, blocks) in enumerate(main + others, start=1))


def _placed(pieces: list[Piece]):
    """(hg38 start, piece) of each of a chromosome's pieces, in order."""
    position = 0
    for piece in pieces:
        yield position, piece
        position += piece.length


def _chain(chain_id: int, tchrom: str, tsize: int, blocks: list[tuple[int, Piece]],
           hg19_sizes: dict[str, int]) -> str:
    """One chain: header, `size dt dq` lines, the last block's size alone, a blank line."""
    qchrom, strand = blocks[0][1].qchrom, blocks[0][1].strand
    qsize = hg19_sizes[qchrom]

    def qcoords(piece: Piece) -> tuple[int, int]:  # on −, coordinates of the reverse complement
        return (piece.qstart, piece.qend) if strand == "+" else (qsize - piece.qend, qsize - piece.qstart)

    t_start, t_end = blocks[0][0], blocks[-1][0] + blocks[-1][1].length
    score = sum(piece.length for _, piece in blocks)
    lines = [f"chain {score} {tchrom} {tsize} + {t_start} {t_end} {qchrom} {qsize} {strand} "
             f"{qcoords(blocks[0][1])[0]} {qcoords(blocks[-1][1])[1]} {chain_id}"]
    for (t, piece), (t_next, piece_next) in zip(blocks, blocks[1:], strict=False):
        dt = t_next - (t + piece.length)
        dq = qcoords(piece_next)[0] - qcoords(piece)[1]
        lines.append(f"{piece.length}\t{dt}\t{dq}")
    lines.append(str(blocks[-1][1].length))
    return "\n".join(lines) + "\n\n"


def _segments(tss: list[int], length: int, special: bool, rng: np.random.Generator,
              scale: float) -> tuple[list[tuple[int, int]], int | None]:
    """Cut [0, length) at TSS midpoints; return segments and the index of the special one (or None)."""
    mids = [(a + b) // 2 for a, b in zip(tss, tss[1:], strict=False)]
    chosen: set[int] = set()
    special_start = None
    if special:
        i = int(rng.integers(1, len(mids) - 1))  # the segment (mids[i-1], mids[i+1]) holds TSS i and i+1
        special_start = mids[i - 1]
        chosen |= {mids[i - 1], mids[i + 1]}
        mids = [m for m in mids if m != mids[i]]
    wanted = max(1, int(round(length / (SEGMENT_LENGTH * scale)))) - 1
    spare = [m for m in mids if m not in chosen]
    chosen |= {spare[j] for j in rng.choice(len(spare), size=min(wanted, len(spare)), replace=False)}
    bounds = [0, *sorted(chosen), length]
    segments = [(start + int(rng.integers(*(DELETION if k else FIRST_DELETION))), end)
                for k, (start, end) in enumerate(zip(bounds, bounds[1:], strict=False))]
    special_index = bounds.index(special_start) if special else None
    return segments, special_index


def build_assembly(genome: ToyGenome, rng: np.random.Generator, scale: float) -> Assembly:
    """Lay out toy hg38 from toy hg19 and place every promoter (plus hg38-only ones) on it."""
    hg19_sizes = genome.lengths()
    pieces: dict[str, list[Piece]] = {}
    moved_piece = None
    for chrom in ELEMENT_CHROMOSOMES:
        tss = sorted(p.tss for p in genome.promoters if p.chrom == chrom)
        special = chrom in (INVERTED_ON, MOVED[0])
        segments, special_index = _segments(tss, hg19_sizes[chrom], special, rng, scale)
        pieces[chrom] = [Piece(None, 0, int(rng.integers(*PREFIX_LENGTH)))]
        for k, (start, end) in enumerate(segments):
            if k == special_index and chrom == MOVED[0]:
                moved_piece = Piece(chrom, start, end)
                continue
            if k:
                size = NOVEL_INSERTION if rng.random() < NOVEL_PROMOTER_FRACTION else SMALL_INSERTION
                pieces[chrom].append(Piece(None, 0, int(rng.integers(*size))))
            strand = "-" if (k == special_index and chrom == INVERTED_ON) else "+"
            pieces[chrom].append(Piece(chrom, start, end, strand))
    target = pieces[MOVED[1]]
    at = 2 * int(rng.integers(1, (len(target) + 1) // 2))  # before a segment, after an insertion
    target[at:at] = [moved_piece, Piece(None, 0, int(rng.integers(*SMALL_INSERTION)))]
    assembly = Assembly(pieces, [])
    assembly.promoters = _lift_promoters(genome, pieces) + _novel_promoters(genome, pieces, rng)
    assembly.promoters.sort(key=lambda p: (genome.rank(p.hg38_chrom), p.hg38_tss))
    return assembly


def _lift_promoters(genome: ToyGenome, pieces: dict[str, list[Piece]]) -> list[LiftedPromoter]:
    """Each hg19 promoter at its place in hg38 (every segment survives, so every promoter does)."""
    lifted = []
    for chrom, chrom_pieces in pieces.items():
        for position, piece in _placed(chrom_pieces):
            for p in genome.promoters:
                if p.chrom == piece.qchrom and piece.qstart <= p.tss < piece.qend:
                    if piece.strand == "+":
                        tss, strand = position + p.tss - piece.qstart, p.strand
                    else:
                        tss, strand = position + piece.qend - 1 - p.tss, "+" if p.strand == "-" else "-"
                    status = ("other_chromosome" if chrom != p.chrom else
                              "strand_flip" if piece.strand == "-" else "ok")
                    lifted.append(LiftedPromoter(p.name, chrom, tss, strand, p.chrom, p.tss, p.strand,
                                                 status, p.island, p.tata))
    return lifted


def _novel_promoters(genome: ToyGenome, pieces: dict[str, list[Piece]],
                     rng: np.random.Generator) -> list[LiftedPromoter]:
    """One hg38-only promoter in the middle of every long novel stretch."""
    novel, gene = [], len(genome.promoters)
    for chrom, chrom_pieces in pieces.items():
        for position, piece in _placed(chrom_pieces):
            if piece.qchrom is None and piece.length >= NOVEL_INSERTION[0]:
                gene += 1
                strand = "+" if rng.random() < 0.5 else "-"
                novel.append(LiftedPromoter(f"TG{gene:04d}_1", chrom, position + piece.length // 2, strand,
                                            None, None, None, "unmapped", False, False))
    return novel
