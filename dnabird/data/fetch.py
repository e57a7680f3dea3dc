"""`fetch(NAME)`: make a data source present and verified in a destination folder.

Downloaded files are verified against the publisher's checksum, or, where none is published,
against the sha256 recorded in the lock file on first download. A file already present and
verified is not downloaded again. A mismatch changes nothing the user had: a bad download is
kept aside as `FILE.mismatch`, an existing file that fails is left where it is. A download is
kept beside what is unpacked from it, so later runs verify it without the network. Sources with a
`generator` are written locally by `generator.generate(out_dir, seed=..., **options)`.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import urllib.error
import urllib.request
from pathlib import Path

from dnabird.data.checksums import parse_checksum_list
from dnabird.data.download import download
from dnabird.data.lockfile import LockFile
from dnabird.data.manifests import Manifest, SourceFile, find_manifest
from dnabird.data.unpack import gunzip, index_fasta, untar, unzip
from dnabird.errors import ChecksumError, DnabirdError, DownloadError
from dnabird.io import file_digests

logger = logging.getLogger(__name__)

DATA_ENV = "DNABIRD_DATA"
FASTA_SUFFIXES = (".fa", ".fasta", ".fna")


def data_root() -> Path:
    """Where sources go without `--dest`: `$DNABIRD_DATA`, else `$XDG_CACHE_HOME/dnabird` (~/.cache/dnabird)."""
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dnabird"


def fetch(name_or_path: str | Path, dest: str | Path | None = None, *, progress: bool = True,
          retries: int = 3, retry_wait: float = 2.0) -> dict[str, Path]:
    """Fetch (or generate) a source into `dest` (default `data_root() / NAME`); returns its files by name.

    For downloads the keys are file names (the downloaded file and what was unpacked from it);
    for a generated source they are the generator's own keys.
    """
    manifest = find_manifest(name_or_path)
    dest = Path(dest) if dest is not None else data_root() / manifest.name
    dest.mkdir(parents=True, exist_ok=True)
    if manifest.terms:
        logger.warning("%s: terms of use:\n%s", manifest.name, manifest.terms)
    lock = LockFile(dest)
    if manifest.generator:
        return _generate(manifest, dest, lock)
    outputs: dict[str, Path] = {}
    for source in manifest.files:
        path = _fetch_file(source, dest, lock, progress=progress, retries=retries, retry_wait=retry_wait)
        outputs[source.filename] = path
        for unpacked in _unpack(source, path, dest, lock, manifest.format == "fasta", progress):
            outputs[unpacked.name] = unpacked
    return outputs


def _expected_digests(source: SourceFile, lock: LockFile) -> tuple[dict[str, str], str]:
    """The digests to verify against and where they come from: the manifest's or the published list's, else
    the sha256 in the lock file (recorded on first download; a list is read only before that)."""
    expected = source.checksum.digests()
    recorded = lock.get(source.filename).get("sha256")
    if source.checksum.listed_in and not recorded:
        try:
            with urllib.request.urlopen(source.checksum.listed_in, timeout=60) as response:
                text = response.read().decode("utf-8", errors="replace")
        except (urllib.error.URLError, OSError) as err:
            raise DownloadError(f"checksum list for {source.filename}",
                                [f"{source.checksum.listed_in}: {err}"]) from err
        expected.update(parse_checksum_list(text, source.filename, source.checksum.listed_in))
    if expected:
        return expected, "published"
    return ({"sha256": recorded}, f"recorded in {lock.path.name}") if recorded else ({}, "none")


def _compare(path: Path, source: SourceFile, expected: dict[str, str], origin: str,
             progress: bool) -> tuple[dict[str, str], list[str]]:
    """Digests of `path` (always including sha256) and a description of each mismatch."""
    actual = file_digests(path, [*expected, "sha256"], progress=progress)
    problems = [f"{algorithm} expected {digest} ({origin}), got {actual[algorithm]}"
                for algorithm, digest in expected.items() if actual[algorithm] != digest]
    size = path.stat().st_size
    if source.size is not None and size != source.size:
        problems.append(f"size expected {source.size} bytes, got {size}")
    return actual, problems


def _fetch_file(source: SourceFile, dest: Path, lock: LockFile, *, progress: bool, retries: int,
                retry_wait: float) -> Path:
    target = dest / source.filename
    expected, origin = _expected_digests(source, lock)
    if target.exists():
        if not expected:
            raise DnabirdError(f"{target} exists but nothing records what it should contain (no published "
                               f"checksum, no entry in {lock.path}); move it aside to download afresh")
        actual, problems = _compare(target, source, expected, origin, progress)
        if problems:
            raise ChecksumError(f"{target}: {'; '.join(problems)}. The file was left untouched; "
                                "move it aside and run again to download afresh")
        logger.info("%s: present and verified", target)
        lock.update(source.filename, sha256=actual["sha256"], size=target.stat().st_size)
        return target
    part = dest / f"{source.filename}.part"
    url = download(source.urls, part, retries=retries, retry_wait=retry_wait, progress=progress)
    actual, problems = _compare(part, source, expected, origin, progress)
    if problems:
        aside = dest / f"{source.filename}.mismatch"
        os.replace(part, aside)
        raise ChecksumError(f"{target}: download from {url} does not match: {'; '.join(problems)}. "
                            f"The download is kept as {aside}; nothing else was changed")
    os.replace(part, target)
    if not expected:
        logger.warning("%s: the publisher gives no checksum; recorded sha256 %s in %s for later runs",
                       target, actual["sha256"], lock.path)
    lock.update(source.filename, sha256=actual["sha256"], size=target.stat().st_size, url=url,
                checksum="published" if origin == "published" else "recorded on first download")
    return target


def _unpack(source: SourceFile, path: Path, dest: Path, lock: LockFile, is_fasta: bool,
            progress: bool) -> list[Path]:
    """Unpack a verified download unless its recorded outputs are already there; index FASTA outputs."""
    entry = lock.get(source.filename)
    recorded = entry.get("unpacked", [])
    if source.unpack == "none":
        outputs = [path]
    elif recorded and entry.get("unpacked_from") == entry["sha256"] and all((dest / n).exists() for n in recorded):
        outputs = [dest / name for name in recorded]
    else:
        outputs = _unpack_now(source, path, dest, set(recorded), progress)
        lock.update(source.filename, unpacked=[p.name for p in outputs], unpacked_from=entry["sha256"])
    if is_fasta:
        for output in outputs:
            if output.suffix in FASTA_SUFFIXES:
                index_fasta(output)
    return [p for p in outputs if p != path]


def _unpack_now(source: SourceFile, path: Path, dest: Path, replaceable: set[str],
                progress: bool) -> list[Path]:
    if source.unpack in ("untar", "unzip"):
        extract = untar if source.unpack == "untar" else unzip
        return [dest / name for name in extract(path, dest, replaceable)]
    target = dest / source.filename.removesuffix(".gz")
    if target.exists() and target.name not in replaceable:
        raise DnabirdError(f"{target} exists and dnabird did not write it; move it aside to unpack "
                           f"{source.filename}")
    gunzip(path, target, progress=progress)
    return [target]


def _generate(manifest: Manifest, dest: Path, lock: LockFile) -> dict[str, Path]:
    """Run the manifest's generator (which reuses its own verified outputs) and record what it wrote."""
    try:
        generate = importlib.import_module(manifest.generator).generate
    except (ImportError, AttributeError) as err:
        raise DnabirdError(f"{manifest.path or manifest.name}: generator {manifest.generator!r} has no "
                           f"importable generate(out_dir, seed) function: {err}") from err
    try:
        written = generate(dest, seed=manifest.seed, **manifest.options)
    except TypeError as err:
        raise DnabirdError(f"{manifest.path or manifest.name}: options {manifest.options} do not fit "
                           f"{manifest.generator}.generate: {err}") from err
    outputs = {key: Path(p) for key, p in written.items()}
    options = {"options": manifest.options} if manifest.options else {}
    lock.update(manifest.name, generator=manifest.generator, seed=manifest.seed, **options,
                outputs={key: os.path.relpath(p, dest) for key, p in outputs.items()})
    return outputs
