"""Stage `fetch`: make a data source present (download and verify, or generate the embedded default)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dnabird.errors import ConfigError
from dnabird.pipeline import RunContext, Stage

FASTA_NAMES = (".fa", ".fasta", ".fna", ".fa.gz", ".fasta.gz", ".fna.gz")


@dataclass
class FetchConfig:
    """Which source to fetch and where to put it."""

    source: str = "toy"  # a manifest name in data_manifests/ (e.g. ucsc_hg19_fa) or a manifest path
    dest: str | None = None  # destination folder; default: fetch's shared data folder (DNABIRD_DATA/NAME)


def inputs(config: FetchConfig, context: RunContext) -> list[Path]:
    return []


def genome_fasta(files: dict[str, Path], source: str) -> Path:
    """The FASTA among a source's files: the `fasta` key, else the one file named like a FASTA."""
    if "fasta" in files:
        return Path(files["fasta"])
    candidates = [Path(p) for p in files.values() if str(p).endswith(FASTA_NAMES)]
    indexed = [p for p in candidates if Path(f"{p}.fai").exists()] or candidates
    if len(indexed) != 1:
        raise ConfigError(f"fetch: source {source!r} yields {len(indexed)} FASTA files, expected one")
    return indexed[0]


def run(config: FetchConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    from dnabird.data.fetch import fetch

    files = fetch(config.source, config.dest)
    return {**files, "fasta": genome_fasta(files, config.source)}


STAGE = Stage("fetch", FetchConfig, inputs, run)
