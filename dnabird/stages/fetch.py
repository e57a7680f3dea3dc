"""Stage `fetch`: make a data source present (download and verify, or generate the embedded default)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dnabird.data.fetch import FASTA_SUFFIXES, fetch
from dnabird.data.manifests import find_manifest
from dnabird.errors import ConfigError
from dnabird.pipeline import RunContext, Stage


@dataclass
class FetchConfig:
    """Which source to fetch and where to put it."""

    source: str = "toy"  # a manifest name in data_manifests/ (e.g. ucsc_hg19_fa) or a manifest path
    dest: str | None = None  # destination folder; default: fetch's shared data folder (DNABIRD_DATA/NAME)


def inputs(config: FetchConfig, context: RunContext) -> list[Path]:
    """The manifest: editing it (URL, checksum, generator seed) fetches again."""
    manifest = find_manifest(config.source)
    return [manifest.path] if manifest.path is not None else []


def genome_fasta(files: dict[str, Path], source: str) -> Path:
    """The genome among a source's files: the `fasta` key (generated sources), else the one FASTA."""
    if "fasta" in files:
        return Path(files["fasta"])
    candidates = [Path(p) for p in files.values() if Path(p).suffix in FASTA_SUFFIXES]
    if len(candidates) != 1:
        raise ConfigError(f"fetch: source {source!r} yields {len(candidates)} FASTA files "
                          f"({', '.join(p.name for p in candidates) or 'none'}), expected one genome")
    return candidates[0]


def run(config: FetchConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    files = fetch(config.source, config.dest)
    return {**files, "fasta": genome_fasta(files, config.source)}


STAGE = Stage("fetch", FetchConfig, inputs, run)
