"""Variants on the toy genome, with truth labels for judging variant-effect scores.

- "disruptive": an SNV at a core base of a planted element (promoter TATA/Inr/GC box, TF motif), as many
  of each kind (every promoter has an initiator: drawn over all elements, initiators would outnumber every
  other kind and the set would measure one element), or a deletion of a whole TATA box;
- "neutral": SNVs and indels at least `NEUTRAL_DISTANCE` bp from every element, CpG island and peak,
  plus a multi-allelic site and a variant at the last base of a chromosome; and in-element controls:
  one SNV beside each disrupted element, `CONTROL_FLANK` bp from its motif, touching no motif (its
  `element` column names that neighbour), so a score must tell a broken motif from a harmless change
  in the same neighbourhood rather than rank variants by their distance to elements;
- "ref_mismatch": one record whose REF disagrees with the FASTA (a parser must notice).
Positions in `ToyVariant` are 0-based (`start`); the VCF writer converts to VCF's 1-based POS.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dnabird.datasets.toy_genome import (
    ELEMENT_CHROMOSOMES,
    MOTIFS,
    ToyGenome,
    decode,
    encode,
    mark_near,
    reverse_complement,
)

DISRUPTED_KINDS = ("TATA", "Inr", "GCbox", "CTCF", "GATA", "FOXA", "YY1")
DISRUPTIVE_PER_KIND, NEUTRAL_SNVS = 4, 30
TATA_DELETIONS, NEUTRAL_INSERTIONS, NEUTRAL_DELETIONS = 2, 2, 2
NEUTRAL_DISTANCE = 2_000
CONTROL_FLANK = (3, 30)  # bp between an in-element control and its element's motif
CHROM_END_VARIANT = "chrX"
TRUTH_COLUMNS = ("chrom", "pos", "id", "ref", "alt", "kind", "label", "element")


@dataclass(frozen=True)
class ToyVariant:
    """A VCF record with its truth: `start` is 0-based; `alts` comma-free alleles."""

    chrom: str
    start: int
    ref: str
    alts: tuple[str, ...]
    kind: str  # snv, deletion, insertion, multiallelic
    label: str  # disruptive, neutral, ref_mismatch
    element: str = "."  # kind:name of the element a disruptive variant breaks


def _bases(genome: ToyGenome, chrom: str, start: int, end: int) -> str:
    return decode(genome.codes[chrom][start:end])


def _reverse_complement(text: str) -> str:
    return decode(reverse_complement(encode(text)))


def neutral_positions(genome: ToyGenome, peaks: list[tuple[str, int, int, str]]) -> dict[str, np.ndarray]:
    """Per element chromosome, whether a base is far from every element, island, peak and gap."""
    allowed = {}
    for chrom in ELEMENT_CHROMOSOMES:
        loci = genome.planted_spans(chrom) + [(start, end) for c, start, end, _ in peaks if c == chrom]
        near = mark_near(np.zeros(len(genome.codes[chrom]), dtype=bool), loci, NEUTRAL_DISTANCE)
        for gap in (g for g in genome.gaps if g.chrom == chrom):  # room for a deletion's REF
            near[max(0, gap.start - 10): gap.end] = True
        near[-1] = True  # the chromosome-end variant has its own record
        allowed[chrom] = ~near & (genome.codes[chrom] != 4)
    return allowed


def build_variants(genome: ToyGenome, peaks: list[tuple[str, int, int, str]],
                   rng: np.random.Generator) -> list[ToyVariant]:
    """All toy variants, sorted by chromosome (FASTA order) and position."""
    variants = []
    targets = []
    for kind in DISRUPTED_KINDS:
        of_kind = [e for e in genome.elements if e.kind == kind]
        targets += [of_kind[int(i)] for i in rng.choice(len(of_kind), size=DISRUPTIVE_PER_KIND, replace=False)]
    for element in targets:
        core = MOTIFS[element.kind][1]
        position = element.start + core if element.strand == "+" else element.end - 1 - core
        ref = _bases(genome, element.chrom, position, position + 1)
        variants.append(ToyVariant(element.chrom, position, ref, (_reverse_complement(ref),), "snv", "disruptive",
                                f"{element.kind}:{element.name}"))
    tata = [e for e in genome.elements if e.kind == "TATA"
            and not any(v.chrom == e.chrom and e.start - 1 <= v.start < e.end for v in variants)]
    for index in rng.choice(len(tata), size=TATA_DELETIONS, replace=False):
        element = tata[int(index)]
        ref = _bases(genome, element.chrom, element.start - 1, element.end)
        variants.append(ToyVariant(element.chrom, element.start - 1, ref, (ref[0],), "deletion", "disruptive",
                                f"TATA:{element.name}"))
    variants += _neutral_variants(genome, neutral_positions(genome, peaks), rng)
    variants += _in_element_controls(genome, [v for v in variants if v.label == "disruptive"], rng)
    return sorted(variants, key=lambda v: (genome.rank(v.chrom), v.start))


def _neutral_variants(genome: ToyGenome, allowed: dict[str, np.ndarray],
                      rng: np.random.Generator) -> list[ToyVariant]:
    chroms = list(allowed)
    offsets = np.cumsum([0] + [int(mask.sum()) for mask in allowed.values()])
    wanted = NEUTRAL_SNVS + NEUTRAL_INSERTIONS + NEUTRAL_DELETIONS + 2  # + multi-allelic + ref mismatch
    picks = np.sort(rng.choice(offsets[-1], size=wanted, replace=False))
    sites = []
    for pick in picks:
        k = int(np.searchsorted(offsets, pick, side="right")) - 1
        sites.append((chroms[k], int(np.flatnonzero(allowed[chroms[k]])[pick - offsets[k]])))
    order = rng.permutation(len(sites))
    kinds = (["snv"] * NEUTRAL_SNVS + ["insertion"] * NEUTRAL_INSERTIONS + ["deletion"] * NEUTRAL_DELETIONS
             + ["multiallelic", "ref_mismatch"])
    variants = []
    for kind, index in zip(kinds, order, strict=True):
        chrom, position = sites[int(index)]
        ref = _bases(genome, chrom, position, position + 1)
        others = [base for base in "ACGT" if base != ref]
        if kind == "snv":
            variants.append(ToyVariant(chrom, position, ref, (str(rng.choice(others)),), kind, "neutral"))
        elif kind == "insertion":
            inserted = "".join(rng.choice(list("ACGT"), size=int(rng.integers(1, 8))))
            variants.append(ToyVariant(chrom, position, ref, (ref + inserted,), kind, "neutral"))
        elif kind == "deletion":
            ref = _bases(genome, chrom, position, position + int(rng.integers(2, 8)))
            variants.append(ToyVariant(chrom, position, ref, (ref[0],), kind, "neutral"))
        elif kind == "multiallelic":
            variants.append(ToyVariant(chrom, position, ref, tuple(others[:2]), kind, "neutral"))
        else:  # REF deliberately not the FASTA base
            variants.append(ToyVariant(chrom, position, others[0], (others[1],), "snv", "ref_mismatch"))
    last = len(genome.codes[CHROM_END_VARIANT]) - 1
    ref = _bases(genome, CHROM_END_VARIANT, last, last + 1)
    variants.append(ToyVariant(CHROM_END_VARIANT, last, ref, (_reverse_complement(ref),), "snv", "neutral"))
    return variants


def _motif_count(text: str) -> int:
    """Occurrences of every motif consensus, on both strands, in `text`."""
    words = [m for m, _ in MOTIFS.values()]
    return sum(text.count(w) for w in words + [_reverse_complement(w) for w in words])


def _in_element_controls(genome: ToyGenome, disruptive: list[ToyVariant],
                         rng: np.random.Generator) -> list[ToyVariant]:
    """One SNV beside each disrupted element: `CONTROL_FLANK` bp from its motif, at least 2 bp from every
    element (so no motif base, nor a TATA deletion's anchor base), creating or breaking no motif."""
    taken = {(v.chrom, v.start) for v in disruptive}
    controls = []
    for variant in disruptive:
        motif_start = variant.start + (variant.kind == "deletion")  # a TATA deletion starts 1 bp before
        element = next(e for e in genome.elements
                       if e.chrom == variant.chrom and e.start <= motif_start < e.end)
        near = [(e.start, e.end) for e in genome.elements if e.chrom == element.chrom]
        codes = genome.codes[element.chrom]
        while True:
            distance = int(rng.integers(CONTROL_FLANK[0], CONTROL_FLANK[1] + 1))
            position = element.end - 1 + distance if rng.random() < 0.5 else element.start - distance
            ref = _bases(genome, element.chrom, position, position + 1)
            alt = str(rng.choice([base for base in "ACGT" if base != ref]))
            context = _bases(genome, element.chrom, position - 25, position + 26)
            if (codes[position] != 4 and (element.chrom, position) not in taken
                    and all(position < start - 2 or position >= end + 2 for start, end in near)
                    and _motif_count(context) == _motif_count(context[:25] + alt + context[26:])):
                break
        taken.add((element.chrom, position))
        controls.append(ToyVariant(element.chrom, position, ref, (alt,), "snv", "neutral",
                                   f"{element.kind}:{element.name}"))
    return controls


def vcf_text(variants: list[ToyVariant], lengths: dict[str, int], source: str) -> str:
    """VCF 4.2: header with contigs and INFO definitions, then sorted 1-based records."""
    header = ["##fileformat=VCFv4.2", f"##source={source}", "##reference=toy_hg19.fa"]
    header += [f"##contig=<ID={chrom},length={length},assembly=toy_hg19>"
               for chrom, length in lengths.items()]
    header += ['##INFO=<ID=KIND,Number=1,Type=String,Description="snv, insertion, deletion or multiallelic">',
               "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO"]
    records = [f"{chrom}\t{pos}\t{name}\t{ref}\t{alt}\t.\tPASS\tKIND={kind}"
               for chrom, pos, name, ref, alt, kind, *_ in truth_rows(variants)]
    return "\n".join(header + records) + "\n"


def truth_rows(variants: list[ToyVariant]) -> list[tuple]:
    """Rows of the truth table, one per VCF record, in `TRUTH_COLUMNS` order (pos 1-based)."""
    return [(v.chrom, v.start + 1, f"toy_var_{n:03d}", v.ref, ",".join(v.alts), v.kind, v.label, v.element)
            for n, v in enumerate(variants, start=1)]
