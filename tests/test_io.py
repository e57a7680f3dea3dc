import json

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
