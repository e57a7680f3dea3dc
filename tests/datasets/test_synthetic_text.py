"""Generated text: the long-range task's labels against an independent solver, its truncated view at chance,
and the text8 / SQuAD-format files' formats."""

import json
import re
from collections import Counter

import numpy as np
import pytest

from dnabird.data.squad import read_squad
from dnabird.datasets.synthetic_text import (
    EDGE,
    TRUNCATED,
    VALUES,
    long_range_example,
    pseudo_words,
    solve_long_range,
    write_documents,
    write_long_range,
    write_squad,
    write_text8,
)
from dnabird.errors import InputFormatError, ParameterError


@pytest.mark.parametrize("length", [256, 1024])
def test_labels_agree_with_the_solver_and_evidence_sits_at_both_ends(length):
    rng = np.random.default_rng(0)
    filler = pseudo_words(300, 0)
    examples = [long_range_example(length, rng, filler) for _ in range(400)]
    assert all(solve_long_range(e["text"]) == e["label"] for e in examples)
    assert 0.4 < Counter(e["label"] for e in examples)["warm"] / 400 < 0.6
    for example in examples:
        tokens = ["[CLS]", *example["text"].split(), "[SEP]"]  # one token per word (a word tokenizer)
        assert len(tokens) == length
        keys = [i for i, t in enumerate(tokens) if t.startswith("secret-")]
        queries = [i for i, t in enumerate(tokens) if t.startswith("query-")]
        assert len(keys) == 16 and len(queries) == 16 and max(keys) < EDGE and min(queries) >= length - EDGE
        assert max(keys) < length - TRUNCATED  # the truncated view never holds a key
        assert sum(t in VALUES for t in tokens) > 4  # distractor values between


def bag_of_words_accuracy(view):
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(1)
    filler = pseudo_words(300, 0)
    train = [long_range_example(256, rng, filler) for _ in range(1000)]
    test = [long_range_example(256, rng, filler) for _ in range(600)]

    def texts(examples):
        keep = TRUNCATED - 1 if view == "last 128 tokens" else None  # the last 127 words and [SEP]
        return [" ".join(e["text"].split()[-keep:] if keep else e["text"].split()) for e in examples]

    vectorizer = CountVectorizer(token_pattern=r"\S+").fit(texts(train))
    model = LogisticRegression(max_iter=3000).fit(vectorizer.transform(texts(train)), [e["label"] for e in train])
    assert all(solve_long_range(e["text"]) == e["label"] for e in test)  # while the whole text decides it
    return model.score(vectorizer.transform(texts(test)), [e["label"] for e in test])


def test_the_last_128_tokens_predict_at_chance():
    assert abs(bag_of_words_accuracy("last 128 tokens") - 0.5) < 0.07  # 3.5 standard errors at 600 examples


def test_a_bag_of_words_cannot_tell_which_key_is_queried():
    # one stored value is warm, the other cool: only the query says which one counts
    assert abs(bag_of_words_accuracy("whole document") - 0.5) < 0.07


def test_a_perceptron_on_the_word_counts_reads_the_exclusive_or_of_key_and_query():
    """What the docstring claims: the label is an exclusive-or of two count features, which the baselines'
    one-hidden-layer perceptron reads from the whole document's counts (given enough documents)."""
    from sklearn.feature_extraction.text import CountVectorizer

    from dnabird.finetune.baselines import multilabel_mlp_scores

    rng = np.random.default_rng(1)
    filler = pseudo_words(300, 0)
    train = [long_range_example(256, rng, filler) for _ in range(4000)]
    test = [long_range_example(256, rng, filler) for _ in range(600)]
    vectorizer = CountVectorizer(token_pattern=r"\S+").fit([e["text"] for e in train])

    def counts(examples):
        return np.log1p(vectorizer.transform([e["text"] for e in examples]).toarray())

    labels = np.array([[e["label"] == "warm"] for e in train])
    scores = multilabel_mlp_scores(counts(train), labels, counts(test), seed=0)[:, 0]
    assert ((scores > 0.5) == np.array([e["label"] == "warm" for e in test])).mean() > 0.9


def test_every_document_stores_one_warm_and_one_cool_value():
    rng = np.random.default_rng(3)
    filler = pseudo_words(300, 0)
    warm = {"red", "amber", "coral", "orange"}  # the class words, restated here
    for _ in range(200):
        stored = {w.split("-")[1]: w.split("-")[2] for w in long_range_example(256, rng, filler)["text"].split()
                  if w.startswith("secret-")}
        assert sorted(stored) == ["a", "b"] and (stored["a"] in warm) != (stored["b"] in warm)


def test_solver_rejects_malformed_documents():
    rng = np.random.default_rng(2)
    text = long_range_example(256, rng, pseudo_words(300, 0))["text"]
    with pytest.raises(InputFormatError, match="queries of one stored key"):
        solve_long_range(text + " query-a query-b")
    words = text.split()
    key = next(i for i, w in enumerate(words) if w.startswith("secret-"))
    other = next(v for v in VALUES if not words[key].endswith("-" + v))
    contradicting = words[key].rsplit("-", 1)[0] + "-" + other
    with pytest.raises(InputFormatError, match="contradicts"):
        solve_long_range(" ".join(words[:key + 1] + [contradicting] + words[key + 2:]))
    moved = words[:key] + words[key + 1:]
    moved.insert(150, words[key])
    with pytest.raises(InputFormatError, match="out of place"):
        solve_long_range(" ".join(moved))
    with pytest.raises(ParameterError, match="length"):
        long_range_example(200, rng, pseudo_words(300, 0))


def test_splits_are_reproducible_files(tmp_path):
    sizes = {"train": 20, "validation": 5, "test": 5}
    first = write_long_range(tmp_path / "a", length=256, sizes=sizes, seed=3)
    second = write_long_range(tmp_path / "b", length=256, sizes=sizes, seed=3)
    for split in sizes:
        assert first[split].read_bytes() == second[split].read_bytes()
        records = [json.loads(line) for line in first[split].read_text().splitlines()]
        assert len(records) == sizes[split] and all(solve_long_range(r["text"]) == r["label"] for r in records)
    assert first["train"].read_text() != first["test"].read_text()


def test_text8_format(tmp_path):
    data = write_text8(tmp_path / "text8", 5000, seed=0).read_bytes()
    assert len(data) == 5000
    assert re.fullmatch(rb"[a-z]+( [a-z]+)* ?[a-z]*", data)


def test_documents_and_squad_files(tmp_path):
    text = write_documents(tmp_path / "docs.txt", 5, seed=0, words=30).read_text()
    assert len(text.strip().split("\n\n")) == 5
    squad = read_squad(write_squad(tmp_path / "squad.json", 3, seed=0, facts=2))
    assert len(squad.examples) == 6 and squad.mismatched == 0
    for example in squad.examples:
        (answer,) = example.answers
        name = example.question.split()[-2]
        assert f"the home of {name} is {answer.text} ." in example.context
