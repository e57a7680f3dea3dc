"""ListOps: generated labels against an independent stack evaluator, the bracket-keeping tokenizer, TSV
errors, and (slow) a tiny sineSPE model that beats the majority class."""

import hashlib
import statistics

import numpy as np
import pytest

from dnabird.datasets import listops
from dnabird.errors import InputFormatError, ParameterError
from dnabird.text.listops import ListOpsConfig, ListOpsData, ListOpsTokenizer, train_listops
from dnabird.train import TrainConfig


def stack_value(source: str) -> int:
    """Evaluate a printed tree from its tokens alone: push operators and digits, reduce at each `]`."""
    ops = {"[MAX": max, "[MIN": min, "[MED": lambda xs: int(statistics.median(xs) // 1),
           "[SM": lambda xs: sum(xs) % 10}
    stack = []
    for token in source.replace("(", " ").replace(")", " ").split():
        if token == "]":
            args = []
            while not isinstance(stack[-1], str):
                args.append(stack.pop())
            stack.append(ops[stack.pop()](args))
        else:
            stack.append(token if token in ops else int(token))
    assert len(stack) == 1
    return stack[0]


def depth(source: str) -> int:
    level = deepest = 0
    for token in source.split():
        level += token.startswith("[")
        deepest = max(deepest, level)
        level -= token == "]"
    return deepest


def test_generated_labels_agree_with_an_independent_evaluator():
    splits = listops.generate({"train": 150, "validation": 20, "test": 30}, seed=3, min_length=60, max_length=400,
                              max_depth=6, max_args=6)
    assert [len(splits[s]) for s in ("train", "validation", "test")] == [150, 20, 30]
    rows = [row for split in splits.values() for row in split]
    assert len({source for source, _ in rows}) == 200  # no duplicates across splits
    tokenizer = ListOpsTokenizer()
    for source, value in rows:
        assert stack_value(source) == value
        length = len(tokenizer.tokens(source))
        assert 60 < length < 400 and depth(source) <= 5  # root at depth 1: operators nest ≤ max_depth − 1
    assert len({v for _, v in rows}) == 10
    again = listops.generate({"train": 150, "validation": 20, "test": 30}, seed=3, min_length=60, max_length=400,
                             max_depth=6, max_args=6)
    assert again == splits
    # a hand-made tree in LRA's printing
    tree = ["[MED", 4, ["[SM", 7, 8], 1, 9]
    assert listops.to_source(tree) == "( ( ( ( ( [MED 4 ) ( ( ( [SM 7 ) 8 ) ] ) ) 1 ) 9 ) ] )"
    assert listops.evaluate(tree) == 4 == stack_value(listops.to_source(tree))  # median of 1 4 5 9 → 4.5 → 4


def test_lra_default_lengths_and_majority_class():
    splits = listops.generate({"train": 40}, seed=0)
    lengths = [len(ListOpsTokenizer().tokens(s)) for s, _ in splits["train"]]
    assert 500 < min(lengths) and max(lengths) < 2000


def test_tokenizer_keeps_brackets_and_drops_parentheses(tmp_path):
    tokenizer = ListOpsTokenizer()
    source = "( ( ( [MAX 2 ) ( ( [SM 3 ) ] ) ) ] )"
    assert tokenizer.decode(tokenizer.encode(source)) == ["[MAX", "2", "[SM", "3", "]", "]"]
    ids = tokenizer.encode_batch([source], 10)
    assert tokenizer.decode(ids[0]) == ["[CLS]", "[MAX", "2", "[SM", "3", "]", "]", "[SEP]", "[PAD]", "[PAD]"]
    with pytest.raises(InputFormatError, match="unknown ListOps token 'MAX'"):
        tokenizer.encode("( ( MAX 2 ) ] )")  # the old alphanumeric-only tokenizer's output
    with pytest.raises(ParameterError, match="max_length=7.*row 1 has 6 tokens"):
        tokenizer.encode_batch([source], 7)
    path = tmp_path / "basic_train.tsv"
    listops.write(tmp_path, {"train": [(source, 3)]})
    assert listops.read(path) == [(source, 3)]
    path.write_text("Source\tTarget\n( [MAX 1 ] )\t12\n")
    with pytest.raises(InputFormatError, match="basic_train.tsv, line 2"):
        listops.read(path)
    path.write_text("a\tb\n")
    with pytest.raises(InputFormatError, match="header"):
        listops.read(path)


@pytest.mark.slow
def test_tiny_sine_spe_model_beats_the_majority_class(tmp_path):
    splits = listops.generate({"train": 2000, "validation": 100, "test": 400}, seed=0, min_length=2, max_length=20,
                              max_depth=2, max_args=5)
    listops.write(tmp_path / "data", splits)
    overrides = {"dropout": 0.0, "pre_norm": True, "init": "fan_in", "num_layers": 2, "hidden_size": 64,
                 "num_heads": 4, "intermediate_size": 128, "attention": {"type": "relu_linear"},
                 "positional": "spe", "spe": {"kind": "sine", "realizations": 16, "num_sines": 5}}
    config = ListOpsConfig(data=ListOpsData(directory=str(tmp_path / "data")), model_overrides=overrides,
                           max_length=24, train=TrainConfig(out_dir=str(tmp_path / "run"), max_steps=200,
                                                            global_batch_size=32, micro_batch_size=32, lr=1e-3,
                                                            warmup_steps=20, checkpoint_every=1000, progress=False))
    report = train_listops(config)
    test = report["test"]
    targets = np.array([v for _, v in splits["test"]])
    majority = np.bincount([v for _, v in splits["train"]], minlength=10).argmax()
    assert test["majority_class"]["accuracy"] == pytest.approx(float((targets == majority).mean()))
    assert test["model"]["accuracy"] >= test["majority_class"]["accuracy"] + 0.10, test


def test_lra_listops_pipeline_runs_its_table(tmp_path):
    from dnabird.pipeline import load_pipeline, run_pipeline

    overrides = [f"out_dir={tmp_path}", "listops_data.train=40", "listops_data.validation=10", "listops_data.test=10",
                 "listops_data.min_length=8", "listops_data.max_length=30", "listops_data.max_depth=3",
                 "compare.base.max_length=32", "compare.base.train.max_steps=2", "compare.base.train.warmup_steps=1"]
    pipeline = load_pipeline("pipelines/lra_listops.yaml", overrides)
    pipeline.stages["compare"].runs = {name: pipeline.stages["compare"].runs[name]
                                       for name in ("relu_learned", "itc_sine")}
    run_pipeline(pipeline)
    table = (tmp_path / "compare" / "results.txt").read_text()
    assert "| itc_sine | sineSPE R=32, gated | bigbird_itc b=16 |" in table
    assert "majority class" in table
    rows = listops.read(tmp_path / "listops_data" / "basic_train.tsv")
    assert len(rows) == 40 and all(stack_value(source) == value for source, value in rows)


def test_tokenizer_hash_is_pinned():
    """The hash stored in ListOps checkpoints' task.json; it is the sha256 of the vocabulary joined by spaces."""
    vocab = "[PAD] [UNK] [CLS] [SEP] [MASK] 0 1 2 3 4 5 6 7 8 9 [MAX [MIN [MED [SM ]"
    tokenizer = ListOpsTokenizer()
    assert tokenizer.hash == "0bb58a0c02c3e3ccd1aabf2c30deb0747909212517151017ba465b6c87d10672"
    assert tokenizer.hash == hashlib.sha256(vocab.encode()).hexdigest() and tokenizer.vocab_size == 20
