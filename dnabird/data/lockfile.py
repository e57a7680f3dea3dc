"""`dnabird.lock.json`: what `dnabird fetch` recorded beside the data it wrote.

Per downloaded file: its sha256 and size (recorded on first download, verified on later
runs when the publisher gives no checksum) and the files unpacked from it; per generated
source: generator, seed and outputs. Rewritten atomically (temp file + rename).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from dnabird.errors import InputFormatError
from dnabird.io import write_json_atomic

LOCK_NAME = "dnabird.lock.json"


class LockFile:
    """The lock file of one destination directory; `save()` writes it atomically."""

    def __init__(self, directory: str | os.PathLike):
        self.path = Path(directory) / LOCK_NAME
        self.entries: dict[str, dict] = {}
        if self.path.exists():
            try:
                self.entries = json.loads(self.path.read_text(encoding="utf-8"))["entries"]
            except (ValueError, KeyError, TypeError) as err:
                raise InputFormatError(f"not a dnabird lock file ({err}); move it aside to start afresh",
                                       path=self.path) from err

    def get(self, key: str) -> dict:
        return dict(self.entries.get(key, {}))

    def update(self, key: str, **fields) -> None:
        """Merge `fields` into the entry for `key` and save."""
        self.entries[key] = {**self.entries.get(key, {}), **fields}
        self.save()

    def save(self) -> None:
        write_json_atomic(self.path, {"version": 1, "entries": self.entries})
