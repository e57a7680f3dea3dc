"""File digests (md5, sha256, BSD `sum`) computed in one streaming pass, and published checksum lists."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from dnabird.data.manifests import normalize_digest
from dnabird.errors import InputFormatError
from dnabird.progress import progress_bar

CHUNK = 1 << 20


class BsdSum:
    """The BSD 16-bit rotating checksum printed by Unix `sum` (and used in Ensembl CHECKSUMS files).

    For each byte: rotate the 16-bit sum right by one bit, add the byte, keep 16 bits. The
    digest is "<sum> <size in 1-KiB blocks, rounded up>". Pure Python: about 1 minute per GB.
    """

    def __init__(self):
        self._sum, self._size = 0, 0

    def update(self, data: bytes) -> None:
        s = self._sum
        for byte in data:
            s = (((s >> 1) | ((s & 1) << 15)) + byte) & 0xFFFF
        self._sum, self._size = s, self._size + len(data)

    def hexdigest(self) -> str:
        return f"{self._sum} {(self._size + 1023) // 1024}"


def new_hasher(algorithm: str):
    """A hashlib-style object (update/hexdigest) for md5, sha256 or bsd_sum."""
    if algorithm == "bsd_sum":
        return BsdSum()
    if algorithm in ("md5", "sha256"):
        return hashlib.new(algorithm)
    raise ValueError(f"unknown digest algorithm {algorithm!r}")


def file_digests(path: str | os.PathLike, algorithms: list[str], progress: bool = True) -> dict[str, str]:
    """Digests of a file by algorithm name, reading it once."""
    path = Path(path)
    hashers = {algorithm: new_hasher(algorithm) for algorithm in dict.fromkeys(algorithms)}
    with open(path, "rb") as handle, progress_bar(total=path.stat().st_size, unit="B", unit_scale=True,
                                                  desc=f"checking {path.name}", leave=False,
                                                  enabled=progress) as bar:
        while chunk := handle.read(CHUNK):
            for hasher in hashers.values():
                hasher.update(chunk)
            bar.update(len(chunk))
    return {algorithm: hasher.hexdigest() for algorithm, hasher in hashers.items()}


def file_sha256(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes (what `sha256sum` prints)."""
    return file_digests(path, ["sha256"], progress=False)["sha256"]


def sha256_hex(data: str | bytes) -> str:
    """Hex sha256 of bytes, or of a string's UTF-8."""
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def parse_checksum_list(text: str, filename: str, source: str) -> dict[str, str]:
    """The digest a published list gives for `filename`.

    Understands `md5sum` output (`<md5>  [*]<name>`, as UCSC's md5sum.txt) and Unix `sum`
    output (`<sum> <blocks> <name>`, as Ensembl's CHECKSUMS, space- or tab-separated).
    """
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[-1].lstrip("*") != filename:
            continue
        if len(fields) == 2 and len(fields[0]) == 32:
            return {"md5": normalize_digest("md5", fields[0])}
        if len(fields) == 3 and fields[0].isdigit() and fields[1].isdigit():
            return {"bsd_sum": normalize_digest("bsd_sum", f"{fields[0]} {fields[1]}")}
        raise InputFormatError("expected '<md5> <name>' or '<sum> <blocks> <name>'",
                               path=source, line=number, record=line.strip())
    raise InputFormatError(f"no checksum listed for {filename!r}", path=source)
