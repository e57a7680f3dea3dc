"""Transcription start sites from an EPDnew BED8 file, lifted to another assembly with a UCSC chain.

EPDnew items are 60 bp: 49 bp upstream, the TSS and 10 bp downstream; the 11-bp thick part starts at
the TSS on "+" and ends with it on "−", so the 0-based TSS is thickStart on "+" and thickEnd − 1 on "−".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from dnabird.errors import DnabirdError, InputFormatError
from dnabird.genome.bed import read_bed
from dnabird.genome.liftover import STATUSES, Liftover
from dnabird.io import atomic_output


@dataclass(frozen=True)
class Site:
    """A stranded 0-based position, e.g. a TSS; `line` is where it was read from (None once lifted)."""

    name: str
    chrom: str
    position: int
    strand: str
    line: int | None = None


def read_epdnew(path: str | Path) -> list[Site]:
    """The TSS of every record of an EPDnew BED8 file, in file order."""
    sites = []
    for record in read_bed(path):
        if record.thick_end is None:
            raise InputFormatError("expected BED8 columns (chrom, start, end, name, score, strand, thickStart, "
                                   "thickEnd) as EPDnew ships them, got fewer", path=path, line=record.line)
        if record.strand not in ("+", "-"):
            raise InputFormatError(f"strand {record.strand!r}: a promoter needs '+' or '-'", path=path,
                                   line=record.line)
        position = record.thick_start if record.strand == "+" else record.thick_end - 1
        if not record.start <= position < record.end:
            raise InputFormatError(f"the TSS {position} (thick part {record.thick_start}-{record.thick_end}) lies "
                                   f"outside the item {record.start}-{record.end}", path=path, line=record.line)
        sites.append(Site(record.name or f"line{record.line}", record.chrom, position, record.strand, record.line))
    if not sites:
        raise InputFormatError("no promoter records", path=path)
    return sites


@dataclass
class LiftedSites:
    """The sites whose liftover status is "ok", in target coordinates; `counts` by status (every status of
    `dnabird.genome.liftover.STATUSES`); `dropped` as (site, status, targets) rows; `targets` holds every
    target position of every site that mapped at all (for keeping negatives away from annotated sites)."""

    kept: list[Site]
    counts: dict[str, int]
    dropped: list[tuple[Site, str, str]]
    targets: list[Site]


def lift_sites(sites: list[Site], chain: str | Path, *, min_ok_fraction: float = 0.5) -> LiftedSites:
    """Lift every site with `Liftover.convert`; keep the "ok" ones.

    A chain whose source build does not match the sites leaves most of them unmappable: when fewer than
    `min_ok_fraction` lift cleanly this raises, with the counts by status.
    """
    liftover = Liftover(chain)
    kept, dropped, targets = [], [], []
    counts = Counter({status: 0 for status in STATUSES})
    for site in sites:
        result = liftover.convert(site.chrom, site.position, site.strand)
        counts[result.status] += 1
        targets += [Site(site.name, t.chrom, t.pos, t.strand) for t in result.targets]
        if result.ok:
            kept.append(Site(site.name, result.target.chrom, result.target.pos, result.target.strand))
        else:
            shown = ",".join(f"{t.chrom}:{t.pos}:{t.strand}" for t in result.targets) or "."
            dropped.append((site, result.status, shown))
    if len(kept) < min_ok_fraction * len(sites):
        summary = ", ".join(f"{status} {n}" for status, n in counts.items() if n)
        raise DnabirdError(f"{chain}: only {len(kept)} of {len(sites)} sites lift cleanly ({summary}); "
                           f"expected at least {min_ok_fraction:.0%}. Is it the chain from the sites' build "
                           "to the genome's (e.g. hg38ToHg19 for EPDnew hg38 onto GRCh37)?")
    return LiftedSites(kept, dict(counts), dropped, targets)


def write_lifted(lifted: LiftedSites, path: str | Path) -> None:
    """The lifted sites as a BED6 (one base each, strand kept): the TSS BED `dnabird score --tss` reads."""
    lines = [f"{s.chrom}\t{s.position}\t{s.position + 1}\t{s.name}\t0\t{s.strand}" for s in lifted.kept]
    with atomic_output(path) as tmp:
        tmp.write_text("".join(line + "\n" for line in lines))


def write_dropped(lifted: LiftedSites, path: str | Path) -> None:
    """The sites liftover dropped, with their reason, as a TSV (name, chrom, position, strand, status, targets)."""
    lines = ["name\tchrom\tposition\tstrand\tstatus\ttargets"]
    lines += [f"{s.name}\t{s.chrom}\t{s.position}\t{s.strand}\t{status}\t{targets}"
              for s, status, targets in lifted.dropped]
    with atomic_output(path) as tmp:
        tmp.write_text("\n".join(lines) + "\n")
