"""Classification inputs, labels and metrics against hand-made cases."""

import numpy as np
import pytest

from dnabird.data.text_tokenizer import TextTokenizer
from dnabird.errors import ParameterError
from dnabird.text.classify import (
    classification_metrics,
    encode_documents,
    label_spec,
    label_targets,
)

WORDS = "one two three four five six seven eight nine ten".split()


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(WORDS, size=12)) for _ in range(200)]
    return TextTokenizer.train(lines, tmp_path_factory.mktemp("cls") / "w.model", vocab_size=20, model_type="word",
                               byte_fallback=False, num_threads=1)


def test_documents_keep_their_head_or_their_tail(tokenizer):
    text = " ".join(WORDS)  # ten words, one token each
    word = {w: tokenizer.encode(w)[0] for w in WORDS}
    head = encode_documents(tokenizer, [text, "two"], max_length=6, keep="head")
    tail = encode_documents(tokenizer, [text], max_length=6, keep="tail")
    cls, sep, pad = tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id
    assert head[0].tolist() == [cls, *(word[w] for w in WORDS[:4]), sep]
    assert tail[0].tolist() == [cls, *(word[w] for w in WORDS[-4:]), sep]
    assert head[1].tolist() == [cls, word["two"], sep, pad, pad, pad]


def test_label_sets_become_binary_or_multiclass_specs():
    binary = label_spec(["neg", "pos", "pos"], max_length=64, positive=None, tokenizer_hash="0" * 64)
    assert binary.problem == "binary" and binary.labels == ("pos",)
    assert label_targets(binary, ["pos", "neg", "pos"], "test").tolist() == [1, 0, 1]
    assert label_spec(["a", "b"], max_length=64, positive="a", tokenizer_hash="0" * 64).labels == ("a",)
    multi = label_spec(["c", "a", "b"], max_length=64, positive=None, tokenizer_hash="0" * 64)
    assert multi.problem == "multiclass" and multi.labels == ("a", "b", "c")
    assert label_targets(multi, ["b", "c"], "test").tolist() == [1, 2]
    with pytest.raises(ParameterError, match="test labels"):
        label_targets(multi, ["d"], "test")
    with pytest.raises(ParameterError, match="at least two"):
        label_spec(["a", "a"], max_length=64, positive=None, tokenizer_hash="0" * 64)
    with pytest.raises(ParameterError, match="positive_label"):
        label_spec(["a", "b"], max_length=64, positive="c", tokenizer_hash="0" * 64)


def test_metrics_by_hand():
    targets, predicted = np.array([1, 1, 0, 0, 1]), np.array([1, 0, 0, 1, 1])
    binary = classification_metrics(targets, predicted, "binary")
    assert binary["accuracy"] == pytest.approx(3 / 5) and binary["f1"] == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))
    multi = classification_metrics(np.array([0, 1, 2, 2]), np.array([0, 2, 2, 2]), "multiclass")
    # per class F1: 1, 0, 2·2/(2·2 + 1) = 0.8 → macro 0.6
    assert multi["f1"] == pytest.approx(0.6) and multi["accuracy"] == pytest.approx(0.75)

