import json
import os
from pathlib import Path

import pytest

from dnabird.io import atomic_output, write_json_atomic, write_text_atomic


def test_success_renames_onto_the_target(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    with atomic_output(target) as temporary:
        temporary.write_text("partial")
        assert not target.exists()
    assert target.read_text() == "partial"
    assert list(target.parent.iterdir()) == [target]


def test_failure_keeps_the_previous_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_output(target) as temporary:
        temporary.write_text("new")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old"
    assert list(tmp_path.iterdir()) == [target]


def test_text_and_json_helpers(tmp_path):
    write_text_atomic(tmp_path / "a.txt", "héllo")
    write_json_atomic(tmp_path / "b.json", {"z": 1, "a": [1, 2]})
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "héllo"
    assert json.loads((tmp_path / "b.json").read_text()) == {"a": [1, 2], "z": 1}


def test_two_writers_of_one_file_do_not_collide(tmp_path):
    # interleaved like two processes sharing a data folder: the first to finish must not take the
    # second's temporary file away (a shared temporary name fails the second rename)
    target = tmp_path / "lock.json"
    with atomic_output(target) as first, atomic_output(target) as second:
        assert first != second
        first.write_text("one")
        second.write_text("two")
    assert target.read_text() in {"one", "two"}
    assert list(tmp_path.iterdir()) == [target]


def test_outputs_are_checked_before_any_work(tmp_path, monkeypatch):
    from dnabird.errors import OutputPathError
    from dnabird.io import check_outputs

    vcf = tmp_path / "calls.vcf"
    vcf.write_text("input")
    (tmp_path / "link.vcf").symlink_to(vcf)
    with pytest.raises(OutputPathError, match="would overwrite an input"):
        check_outputs([tmp_path / "link.vcf"], inputs=[vcf])  # the same file after resolving the link
    (tmp_path / "folder").mkdir()
    with pytest.raises(OutputPathError, match="is a directory"):
        check_outputs([tmp_path / "folder"])
    with pytest.raises(OutputPathError, match="is a file"):
        check_outputs(folders=[vcf])
    with pytest.raises(OutputPathError, match=f"{vcf} is a file, not a folder"):
        check_outputs([vcf / "deeper" / "out.tsv"])
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != tmp_path / "folder" and real_access(path, mode))
    with pytest.raises(OutputPathError, match="permission denied"):
        check_outputs([tmp_path / "folder" / "new" / "out.tsv"])  # the nearest existing folder is read-only
    check_outputs([tmp_path / "new" / "out.tsv", tmp_path / "calls.tsv"], folders=[tmp_path / "run"], inputs=[vcf])
    assert vcf.read_text() == "input" and not (tmp_path / "new").exists()  # checking writes nothing

