import json

import pytest

from dnabird.errors import CheckpointError, ConfigError
from dnabird.model.task_spec import TaskSpec, parse_anchor

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
    ({"problem": "ordinal"}, "problem"),
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


def test_tss_anchor_windows_on_both_strands_by_hand():
    anchor = parse_anchor("tss:-5000:+3000")
    assert (anchor.kind, anchor.upstream, anchor.downstream, anchor.length) == ("tss", 5000, 3000, 8000)
    assert str(anchor) == "tss:-5000:+3000"
    assert anchor.interval(10_000, "+") == (5_000, 13_000)        # TSS at index 5000 of [5000, 13000)
    # "−": the reverse complement of [t − 2999, t + 5001): its index 5000 is genomic 13001 − 1 − 5000 = t
    assert anchor.interval(10_000, "-") == (7_001, 15_001)
    small = parse_anchor("tss:-2:+1")                              # bases u u T (+); T u u reversed (−)
    assert small.interval(5, "+") == (3, 6) and small.interval(5, "-") == (5, 8)


def test_centre_anchor_and_spec_windows():
    assert parse_anchor("centre").interval(100, length=10) == (95, 105)
    assert parse_anchor("centre").interval(100, length=5) == (98, 103)
    spec = TaskSpec(task="promoter", problem="binary", labels=["promoter"], eval_length=64,
                    window_length=3, anchor="tss:-2:+1", strand_rule="feature")
    assert spec.window(5, "-") == (5, 8)
    assert TaskSpec(**CHROMATIN).window(1000) == (-3000, 5000)


@pytest.mark.parametrize("text", ["tss:5000:3000", "tss:-5000:+", "center", "tss:-0:+0", "tss:-1.5:+2"])
def test_malformed_anchors_are_rejected(text):
    with pytest.raises(ConfigError, match="tss:-U:"):
        parse_anchor(text)


def test_anchor_and_window_length_must_agree():
    with pytest.raises(ConfigError, match="window_length"):
        TaskSpec(**{**CHROMATIN, "anchor": "tss:-5000:+3000", "window_length": 1000})
    with pytest.raises(ConfigError, match="window_length"):
        TaskSpec(**{**CHROMATIN, "window_length": None})
