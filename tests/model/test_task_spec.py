import json

import pytest

from dnabird.errors import CheckpointError, ConfigError
from dnabird.model.task_spec import TaskSpec

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
])
def test_invalid_fields_are_named(change, culprit):
    with pytest.raises(ConfigError, match=culprit):
        TaskSpec(**{**CHROMATIN, **change})


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
