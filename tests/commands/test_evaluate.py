"""`dnabird evaluate CHECKPOINT` alone repeats the evaluation of the pretraining run that wrote the checkpoint."""

import json
import math

from dnabird.cli import main


def leaves(tree, prefix=""):
    """{dotted key: value} of a nested report."""
    if isinstance(tree, dict):
        return {k: v for key, sub in tree.items() for k, v in leaves(sub, f"{prefix}{key}.").items()}
    return {prefix.rstrip("."): tree}


def test_evaluate_alone_reproduces_the_pretraining_report_from_any_folder(embedded_default, tmp_path,
                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["-q", "evaluate", str(embedded_default.checkpoint), "--out", "again.json"]) == 0
    original = leaves(json.loads((embedded_default.pretrain / "report.json").read_text()))
    again = leaves(json.loads((tmp_path / "again.json").read_text()))
    assert (again["examples"], again["max_length"]) == (32, 128)  # the fixture's, not evaluate's 256 and 4096
    assert again.keys() == original.keys()
    for key, value in original.items():
        if isinstance(value, float):
            assert math.isclose(again[key], value, rel_tol=1e-6, abs_tol=1e-9), key
        else:
            assert again[key] == value, key
    assert main(["-q", "evaluate", str(embedded_default.checkpoint), "--examples", "4", "--out", "four.json"]) == 0
    assert json.loads((tmp_path / "four.json").read_text())["examples"] == 4  # a given option wins
