"""Transcription start sites (read by `dnabird.genome.bed.read_tss`, e.g. from EPDnew's BED8: 60-bp items,
49 bp upstream, the TSS and 10 bp downstream) lifted to another assembly with a UCSC chain."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from dnabird.errors import DnabirdError
from dnabird.genome.bed import Tss
from dnabird.genome.liftover import STATUSES, Liftover
from dnabird.io import write_text_atomic


@dataclass
class LiftedSites:
    """The sites whose liftover status is "ok", in target coordinates; `counts` by status (every status of
    `dnabird.genome.liftover.STATUSES`); `dropped` as (site, status, targets) rows; `targets` holds every
    target position of every site that mapped at all (for keeping negatives away from annotated sites)."""

    kept: list[Tss]
    counts: dict[str, int]
    dropped: list[tuple[Tss, str, str]]
    targets: list[Tss]


def lift_sites(sites: list[Tss], chain: str | Path, *, min_ok_fraction: float = 0.5) -> LiftedSites:
    """Lift every site with `Liftover.convert`, keeping the "ok" ones; raises `DnabirdError` (counts by
    status) when fewer than `min_ok_fraction` lift cleanly, the sign of a chain from another build."""
    liftover = Liftover(chain)
    kept, dropped, targets = [], [], []
    counts = Counter({status: 0 for status in STATUSES})
    for site in sites:
        result = liftover.convert(site.chrom, site.position, site.strand)
        counts[result.status] += 1
        targets += [Tss(t.chrom, t.pos, t.strand, site.name) for t in result.targets]
        if result.ok:
            kept.append(Tss(result.target.chrom, result.target.pos, result.target.strand, site.name))
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
    write_text_atomic(path, "".join(line + "\n" for line in lines))


def write_dropped(lifted: LiftedSites, path: str | Path) -> None:
    """The sites liftover dropped, with their reason, as a TSV (name, chrom, position, strand, status, targets)."""
    lines = ["name\tchrom\tposition\tstrand\tstatus\ttargets"]
    lines += [f"{s.name}\t{s.chrom}\t{s.position}\t{s.strand}\t{status}\t{targets}"
              for s, status, targets in lifted.dropped]
    write_text_atomic(path, "\n".join(lines) + "\n")
