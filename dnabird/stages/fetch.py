"""Stage `fetch`: make the data sources present (download and verify, or generate the embedded default).

`source` is the genome's source; `extra_sources` names more sources by the role their one file plays for
later stages (e.g. `promoters_bed: epdnew_hs006_hg38`, `chain: ucsc_hg38_to_hg19`), each recorded as an
output under its role. A generated source such as `toy` already yields its files by role.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dnabird.data.fetch import FASTA_SUFFIXES, fetch
from dnabird.data.manifests import find_manifest
from dnabird.datasets import generator_sources
from dnabird.errors import ConfigError
from dnabird.pipeline import RunContext, Stage


@dataclass
class FetchConfig:
    """Which source to fetch and where to put it."""

    source: str = "toy"  # a manifest name in data_manifests/ (e.g. ucsc_hg19_fa) or a manifest path
    dest: str | None = None  # destination folder; default: fetch's shared data folder (DNABIRD_DATA/NAME)
    extra_sources: dict = field(default_factory=dict)  # role -> manifest; each into DEST/NAME (or DNABIRD_DATA/NAME)


def inputs(config: FetchConfig, context: RunContext) -> list[Path]:
    """The manifests, and every module of a generator's package: editing a manifest (URL, checksum, generator
    seed) or any module a generator draws on fetches again."""
    manifests = [find_manifest(name) for name in (config.source, *config.extra_sources.values())]
    modules = [path for m in manifests if m.generator for path in generator_sources(m.generator)]
    return [m.path for m in manifests if m.path is not None] + modules


def genome_fasta(files: dict[str, Path], source: str) -> Path:
    """The genome among a source's files: the `fasta` key (generated sources), else the one FASTA."""
    if "fasta" in files:
        return Path(files["fasta"])
    candidates = [Path(p) for p in files.values() if Path(p).suffix in FASTA_SUFFIXES]
    return _only(candidates, f"source {source!r} yields {len(candidates)} FASTA files", "one genome")


def single_file(files: dict[str, Path], source: str, role: str) -> Path:
    """The one file a downloaded source yields for `role`: what was unpacked from it, else the download."""
    downloads = {f.filename for f in find_manifest(source).files}
    candidates = [Path(p) for name, p in files.items() if name not in downloads] or [Path(p) for p in files.values()]
    return _only(candidates, f"extra source {source!r} for {role!r} yields {len(candidates)} files", "one")


def _only(candidates: list[Path], found: str, expected: str) -> Path:
    """The one candidate, else an error naming what was `found` (and the candidates) and what was `expected`."""
    if len(candidates) != 1:
        raise ConfigError(f"fetch: {found} ({', '.join(p.name for p in candidates) or 'none'}), expected {expected}")
    return candidates[0]


def run(config: FetchConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    files = fetch(config.source, config.dest)
    outputs = {**files, "fasta": genome_fasta(files, config.source)}
    for role, name in config.extra_sources.items():
        dest = None if config.dest is None else Path(config.dest) / find_manifest(name).name
        outputs[role] = single_file(fetch(name, dest), name, role)
    if "feature_names" in outputs:     # the chromatin label table, built and validated at fetch time
        from dnabird.tasks.deepsea import table_from_names

        outputs["feature_table"] = table_from_names(outputs["feature_names"]).write(stage_dir / "feature_table.tsv")
    return outputs


STAGE = Stage("fetch", FetchConfig, inputs, run)
