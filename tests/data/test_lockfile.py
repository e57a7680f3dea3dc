import json

import pytest

from dnabird.data.lockfile import LOCK_NAME, LockFile
from dnabird.errors import InputFormatError


def test_lock_file_round_trips_and_merges_entries(tmp_path):
    lock = LockFile(tmp_path)
    lock.update("a.gz", sha256="ab" * 32, size=3)
    lock.update("a.gz", unpacked=["a"])
    assert json.loads((tmp_path / LOCK_NAME).read_text())["entries"] == {
        "a.gz": {"sha256": "ab" * 32, "size": 3, "unpacked": ["a"]}}
    assert LockFile(tmp_path).get("a.gz")["unpacked"] == ["a"]
    assert LockFile(tmp_path).get("missing") == {}
    assert [p.name for p in tmp_path.iterdir()] == [LOCK_NAME]


def test_unreadable_lock_file_is_named(tmp_path):
    (tmp_path / LOCK_NAME).write_text("{not json")
    with pytest.raises(InputFormatError, match=LOCK_NAME):
        LockFile(tmp_path)
