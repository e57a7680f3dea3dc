"""Files: digests (sha256, md5, BSD `sum`) in one streaming pass, cheap fingerprints, and atomic output:
write beside the target under a temporary name of the writer's own (removed on failure), rename onto it only
when complete, so no reader sees a half-written file and of two concurrent writers the last complete one wins.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from dnabird.errors import OutputPathError
from dnabird.progress import progress_bar

FINGERPRINT_BLOCK = 1 << 20
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


HASHERS = {"md5": hashlib.md5, "sha256": hashlib.sha256, "bsd_sum": BsdSum}  # hashlib-style: update, hexdigest


def file_digests(path: str | os.PathLike, algorithms: list[str], progress: bool = True) -> dict[str, str]:
    """Digests of a file by algorithm name (md5, sha256, bsd_sum), reading it once."""
    path = Path(path)
    unknown = [algorithm for algorithm in algorithms if algorithm not in HASHERS]
    if unknown:
        raise ValueError(f"unknown digest algorithm {unknown[0]!r}")
    hashers = {algorithm: HASHERS[algorithm]() for algorithm in dict.fromkeys(algorithms)}
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


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def file_fingerprint(path: str | os.PathLike) -> dict:
    """Cheap content fingerprint of a file: the sha256 of a file up to 2 MiB; of a larger one its size,
    modification time and the sha256 of its first and last MiB (cheap on multi-GB genomes; a same-size
    edit in the middle is caught by the modification time)."""
    path = Path(path)
    stat = path.stat()
    with path.open("rb") as handle:
        if stat.st_size <= 2 * FINGERPRINT_BLOCK:
            return {"size": stat.st_size, "sha256": sha256_hex(handle.read())}
        head = handle.read(FINGERPRINT_BLOCK)
        handle.seek(stat.st_size - FINGERPRINT_BLOCK)
        tail = handle.read()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256_head_tail": sha256_hex(head + tail)}


def follow_umask(path: str | os.PathLike) -> None:
    """Give `path`, and everything below it if it is a folder, the permissions the user's umask gives new
    files and folders (safetensors writes files 0600 and `tempfile.mkdtemp` makes folders 0700)."""
    mask = os.umask(0)
    os.umask(mask)
    path = Path(path)
    for entry in [path, *path.rglob("*")] if path.is_dir() else [path]:
        entry.chmod((0o777 if entry.is_dir() else 0o666) & ~mask)


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write `text` (UTF-8) to `path` atomically; returns `path` as a `Path`."""
    with atomic_output(path) as temporary:
        temporary.write_text(text, encoding="utf-8")
    return Path(path)


def write_json_atomic(path: str | os.PathLike, data: Mapping, *, indent: int = 2) -> None:
    """Write `data` as JSON to `path` atomically (non-JSON values as strings)."""
    write_text_atomic(path, json.dumps(data, indent=indent, sort_keys=True, default=str) + "\n")


def check_outputs(files: Iterable[str | os.PathLike] = (), *, folders: Iterable[str | os.PathLike] = (),
                  inputs: Iterable[str | os.PathLike | None] = ()) -> None:
    """Check, before any work, that each output file and folder can be written, so a long run never ends
    in a traceback: no output is one of `inputs` (after resolving links), an output file is not an existing
    folder (nor an output folder an existing file), and the nearest existing folder above each is a folder
    this process may write in. Raises `OutputPathError` naming the path and what is wrong."""
    read = {os.path.realpath(p) for p in inputs if p is not None}
    for path, is_folder in [*((Path(f), True) for f in folders), *((Path(f), False) for f in files)]:
        if os.path.realpath(path) in read:
            raise OutputPathError(f"{path}: the output would overwrite an input; choose another output path")
        if path.exists() and path.is_dir() != is_folder:
            raise OutputPathError(f"{path}: is {'a file' if is_folder else 'a directory'}; the output must be "
                                  f"{'a folder' if is_folder else 'a file'}")
        folder = path if is_folder and path.is_dir() else path.parent
        while not folder.exists() and not folder.is_symlink() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            raise OutputPathError(f"{path}: cannot be created: {folder} is a file, not a folder")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise OutputPathError(f"{path}: cannot write in {folder} (permission denied)")
