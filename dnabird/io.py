"""Atomic file output: write beside the target, rename onto it only when complete.

A reader never sees a half-written file under its final name, and an interrupted writer
leaves nothing but (at most) nothing: the temporary file is removed on failure. Each writer has its
own temporary name, so two processes writing the same file (two runs sharing a data folder) never
rename each other's temporary away: the last complete write wins.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

FINGERPRINT_BLOCK = 1 << 20


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
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        if stat.st_size <= 2 * FINGERPRINT_BLOCK:
            digest.update(handle.read())
            return {"size": stat.st_size, "sha256": digest.hexdigest()}
        digest.update(handle.read(FINGERPRINT_BLOCK))
        handle.seek(stat.st_size - FINGERPRINT_BLOCK)
        digest.update(handle.read())
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256_head_tail": digest.hexdigest()}


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write `text` (UTF-8) to `path` atomically."""
    with atomic_output(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def write_json_atomic(path: str | os.PathLike, data: Mapping, *, indent: int = 2) -> None:
    """Write `data` as JSON to `path` atomically (non-JSON values as strings)."""
    write_text_atomic(path, json.dumps(data, indent=indent, sort_keys=True, default=str) + "\n")
