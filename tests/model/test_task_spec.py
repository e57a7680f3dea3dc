import json

import pytest

from dnabird.errors import CheckpointError, ConfigError
from dnabird.model.task_spec import TaskSpec, WindowAnchor

CHROMATIN = dict(task="chromatin", problem="multilabel", labels=["DNase_a", "CTCF_b", "H3K4me3_c"],
                 label_groups={"DNase": ["DNase_a"], "TF": ["CTCF_b"], "HM": ["H3K4me3_c"]}, eval_length=1024,
                 window_length=8000, anchor="centre", strand_rule="both", tokenizer_hash="ab" * 32)


def test_round_trip(tmp_path):
    spec = TaskSpec(**CHROMATIN)
    spec.save(tmp_path / "task.json")
    assert json.loads((tmp_path / "task.json").read_text())["labels"] == CHROMATIN["labels"]
    assert TaskSpec.load(tmp_path / "task.json") == spec
    assert spec.num_outputs == 3


@pytest.mark.parametrize("change, culprit", [
    ({"problem": "regression"}, "problem"),
    ({"problem": "binary"}, "labels"),  # binary needs exactly one label
    ({"labels": ["a", "a", "b"], "label_groups": {}}, "labels"),
    ({"eval_length": 0}, "eval_length"),
    ({"strand_rule": "reverse"}, "strand_rule"),
    ({"tokenizer_hash": "xyz"}, "tokenizer_hash"),
    ({"label_groups": {"TF": ["nope"]}}, "nope"),
    ({"anchor": "center"}, "anchor"),
    ({"anchor": "tss:5000:3000"}, "anchor"),
    ({"anchor": "tss:-5000:+2000"}, "window_length"),  # a 7000-bp anchor on an 8000-bp window
    ({"anchor": "tss:-5000:+0", "window_length": 5000}, "anchor"),
])
def test_invalid_fields_are_named(change, culprit):
    with pytest.raises(ConfigError, match=culprit):
        TaskSpec(**{**CHROMATIN, **change})


def test_anchor_grammar():
    assert TaskSpec(**CHROMATIN).window_anchor() == WindowAnchor("centre")
    assert WindowAnchor("centre").index(8000) == 4000 and WindowAnchor("centre").index(7) == 3
    promoter = TaskSpec(**{**CHROMATIN, "anchor": "tss:-5000:+3000", "strand_rule": "feature"})
    assert promoter.window_anchor() == WindowAnchor("tss", 5000, 3000)
    assert promoter.window_anchor().index(8000) == 5000 and str(promoter.window_anchor()) == "tss:-5000:+3000"
    assert TaskSpec(**{**CHROMATIN, "anchor": None, "window_length": None}).window_anchor() is None


def test_unknown_and_missing_keys(tmp_path):
    (tmp_path / "task.json").write_text(json.dumps({**CHROMATIN, "windw": 3}))
    with pytest.raises(ConfigError, match="windw"):
        TaskSpec.load(tmp_path / "task.json")
    data = dict(CHROMATIN)
    del data["eval_length"]
    (tmp_path / "task.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="eval_length"):
        TaskSpec.load(tmp_path / "task.json")
    (tmp_path / "task.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="task.json"):
        TaskSpec.load(tmp_path / "task.json")
