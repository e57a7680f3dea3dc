"""Data manifests: one YAML file per data source, validated into frozen dataclasses.

A manifest names a source, its terms, and either the files to download (URL, mirrors,
size, checksum, how to unpack) or the local generator that writes it. Shipped manifests
live in the project's top-level `data_manifests/NAME.yaml` (another folder can be named by
the `DNABIRD_MANIFESTS` environment variable); `find_manifest` accepts such a name or a path.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from dnabird.errors import ConfigError, ParameterError

MANIFEST_DIR = Path(os.environ.get("DNABIRD_MANIFESTS", Path(__file__).resolve().parents[2] / "data_manifests"))
UNPACK_MODES = ("none", "gunzip", "untar", "unzip")
NO_CHECKSUM = "none"

_DIGEST_PATTERNS = {
    "md5": re.compile(r"[0-9a-f]{32}"),
    "sha256": re.compile(r"[0-9a-f]{64}"),
    "bsd_sum": re.compile(r"\d{1,5}\s+\d+"),
}
_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*")


@dataclass(frozen=True)
class Checksum:
    """Digests a publisher gives for a file; all None means none is published.

    `bsd_sum` is the output of Unix `sum` ("<16-bit sum> <1-KiB blocks>"), as in Ensembl's
    CHECKSUMS files; `listed_in` is the URL of a checksum list (`md5sum.txt` or Ensembl
    `CHECKSUMS`) read at fetch time.
    """

    md5: str | None = None
    sha256: str | None = None
    bsd_sum: str | None = None
    listed_in: str | None = None

    @property
    def published(self) -> bool:
        return bool(self.digests() or self.listed_in)

    def digests(self) -> dict[str, str]:
        """The digests known now, by algorithm name."""
        return {algorithm: getattr(self, algorithm) for algorithm in _DIGEST_PATTERNS if getattr(self, algorithm)}


@dataclass(frozen=True)
class SourceFile:
    """One file of a source: where to get it, how to check it, how to unpack it."""

    filename: str
    url: str
    mirrors: tuple[str, ...] = ()
    size: int | None = None
    checksum: Checksum = Checksum()
    unpack: str = "none"

    @property
    def urls(self) -> tuple[str, ...]:
        return (self.url, *self.mirrors)


@dataclass(frozen=True)
class Manifest:
    """A data source: downloaded `files`, or written locally by `generator.generate(out_dir, seed, **options)`."""

    name: str
    description: str
    build: str
    format: str
    license: str
    terms: str | None = None
    files: tuple[SourceFile, ...] = ()
    generator: str | None = None
    seed: int = 0
    options: dict = field(default_factory=dict)
    path: Path | None = None


_MANIFEST_KEYS = {"name": True, "description": True, "build": True, "format": True, "license": True,
                  "terms": False, "files": False, "generator": False, "seed": False, "options": False}
_FILE_KEYS = {"filename": True, "url": True, "mirrors": False, "size": False, "checksum": True,
              "unpack": False}
_CHECKSUM_KEYS = {"md5": False, "sha256": False, "bsd_sum": False, "listed_in": False}


def normalize_digest(algorithm: str, digest: str) -> str:
    """Lower-case hex, or for `bsd_sum` the two integers without padding ("01234   56" -> "1234 56")."""
    digest = digest.strip().lower()
    return " ".join(str(int(part)) for part in digest.split()) if algorithm == "bsd_sum" else digest


def _refuse(invalid: bool, message: str) -> None:
    """Raise `ConfigError(message)` when `invalid` (`reject` for manifest fields)."""
    if invalid:
        raise ConfigError(message)


def _check_keys(mapping: object, keys: dict[str, bool], where: str) -> dict:
    _refuse(not isinstance(mapping, dict), f"{where}: expected a mapping, got {type(mapping).__name__}")
    unknown = sorted(set(mapping) - set(keys))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(keys)})")
    missing = [key for key, required in keys.items() if required and key not in mapping]
    if missing:
        raise ConfigError(f"{where}: missing required key {missing[0]!r}")
    return mapping


def _text(value: object, where: str) -> str:
    _refuse(not isinstance(value, str) or not value.strip(), f"{where}: expected a non-empty string, got {value!r}")
    return value.strip()


def _url(value: object, where: str) -> str:
    url = _text(value, where)
    _refuse(not url.startswith(("https://", "http://")), f"{where}: expected an http(s) URL, got {url!r}")
    return url


def _checksum(value: object, where: str) -> Checksum:
    if value == NO_CHECKSUM:
        return Checksum()
    mapping = _check_keys(value, _CHECKSUM_KEYS, where)
    fields = {}
    for algorithm, pattern in _DIGEST_PATTERNS.items():
        if mapping.get(algorithm) is not None:
            digest = str(mapping[algorithm]).strip().lower()
            _refuse(not pattern.fullmatch(digest), f"{where}.{algorithm}: {digest!r} is not a valid {algorithm} digest")
            fields[algorithm] = normalize_digest(algorithm, digest)
    if mapping.get("listed_in") is not None:
        _refuse(bool(fields), f"{where}: give either digests or listed_in, not both")
        fields["listed_in"] = _url(mapping["listed_in"], f"{where}.listed_in")
    if not fields:
        raise ConfigError(f"{where}: give md5, sha256, bsd_sum or listed_in, "
                          f"or write `checksum: {NO_CHECKSUM}` when the publisher gives none")
    return Checksum(**fields)


def _source_file(value: object, where: str) -> SourceFile:
    mapping = _check_keys(value, _FILE_KEYS, where)
    filename = _text(mapping["filename"], f"{where}.filename")
    _refuse("/" in filename or "\\" in filename or filename in (".", ".."),
            f"{where}.filename: expected a plain file name, got {filename!r}")
    mirrors = mapping.get("mirrors") or []
    _refuse(not isinstance(mirrors, list), f"{where}.mirrors: expected a list of URLs, got {mirrors!r}")
    size = mapping.get("size")
    _refuse(size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0),
            f"{where}.size: expected a byte count or null, got {size!r}")
    unpack = mapping.get("unpack", "none")
    _refuse(unpack not in UNPACK_MODES, f"{where}.unpack: expected one of {', '.join(UNPACK_MODES)}, got {unpack!r}")
    _refuse(unpack == "gunzip" and not filename.endswith(".gz"),
            f"{where}.unpack: gunzip needs a file name ending in .gz, got {filename!r}")
    return SourceFile(filename, _url(mapping["url"], f"{where}.url"),
                      tuple(_url(m, f"{where}.mirrors[{i}]") for i, m in enumerate(mirrors)), size,
                      _checksum(mapping["checksum"], f"{where}.checksum"), unpack)


def manifest_from_dict(data: object, source: str = "<manifest>", path: Path | None = None) -> Manifest:
    """Validate a parsed YAML mapping into a `Manifest`; errors name `source` and the key."""
    mapping = _check_keys(data, _MANIFEST_KEYS, source)
    name = _text(mapping["name"], f"{source}: name")
    _refuse(not _NAME.fullmatch(name),
            f"{source}: name: expected lower-case letters, digits, '_', '-', '.', got {name!r}")
    has_files, has_generator = "files" in mapping, "generator" in mapping
    _refuse(has_files == has_generator,
            f"{source}: give exactly one of 'files' (downloaded) or 'generator' (made locally)")
    files: tuple[SourceFile, ...] = ()
    if has_files:
        _refuse(not isinstance(mapping["files"], list) or not mapping["files"],
                f"{source}: files: expected a non-empty list")
        files = tuple(_source_file(f, f"{source}: files[{i}]") for i, f in enumerate(mapping["files"]))
        names = [f.filename for f in files]
        _refuse(len(set(names)) != len(names), f"{source}: files: duplicate filename in {names}")
    seed = mapping.get("seed", 0)
    _refuse(not isinstance(seed, int) or isinstance(seed, bool), f"{source}: seed: expected an integer, got {seed!r}")
    _refuse("seed" in mapping and not has_generator, f"{source}: seed: only a generator manifest takes a seed")
    options = mapping.get("options", {})
    if not isinstance(options, dict) or not all(isinstance(key, str) for key in options):
        raise ConfigError(f"{source}: options: expected a mapping of the generator's keyword arguments, "
                          f"got {options!r}")
    _refuse("options" in mapping and not has_generator, f"{source}: options: only a generator manifest takes options")
    texts = {key: _text(mapping[key], f"{source}: {key}") for key in ("description", "build", "format", "license")}
    terms = mapping.get("terms")
    return Manifest(name=name, **texts, terms=None if terms is None else _text(terms, f"{source}: terms"), files=files,
                    generator=_text(mapping["generator"], f"{source}: generator") if has_generator else None,
                    seed=seed, options=dict(options), path=path)


def load_manifest(path: str | Path) -> Manifest:
    """Read and validate one manifest YAML file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigError(f"{path}: cannot read manifest: {err}") from err
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from err
    return manifest_from_dict(data, source=str(path), path=path)


def shipped_manifest_paths() -> list[Path]:
    """The manifests shipped with dnabird, sorted by name."""
    return sorted(MANIFEST_DIR.glob("*.yaml"))


def find_manifest(name_or_path: str | Path) -> Manifest:
    """A shipped manifest by name (e.g. "ucsc_hg19_fa"), or any manifest by path (ending .yaml/.yml)."""
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml"):
        return load_manifest(candidate)
    path = MANIFEST_DIR / f"{name_or_path}.yaml"
    if not path.is_file():
        names = ", ".join(p.stem for p in shipped_manifest_paths())
        raise ParameterError("manifest", str(name_or_path), f"a manifest file or one of: {names}")
    return load_manifest(path)
