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
    assert 0.4 < Counter(e["label"] for e in examples)["match"] / 400 < 0.6
    for example in examples:
        tokens = ["[CLS]", *example["text"].split(), "[SEP]"]  # one token per word (a word tokenizer)
        assert len(tokens) == length
        assert "secret" in tokens[:EDGE] and tokens.index("secret") + 1 < EDGE
        assert "query" in tokens[-EDGE:]
        assert "secret" not in tokens[-TRUNCATED:]  # the truncated view never holds the key
        assert sum(t in VALUES for t in tokens) > 4  # distractor values between


def test_the_last_128_tokens_alone_predict_at_chance():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(1)
    filler = pseudo_words(300, 0)
    vocabulary = {word: i for i, word in enumerate([*filler, *VALUES, "secret", "query"])}

    def features(examples, window):
        rows = np.zeros((len(examples), 2 * len(vocabulary)))
        for row, example in enumerate(examples):
            words = example["text"].split()[-window:]
            for word in words:
                rows[row, vocabulary[word]] += 1
            query = words.index("query")  # the queried value as its own feature
            rows[row, len(vocabulary) + vocabulary[words[query + 1]]] = 1
        return rows

    train = [long_range_example(256, rng, filler) for _ in range(1500)]
    test = [long_range_example(256, rng, filler) for _ in range(1000)]
    y_train, y_test = ([e["label"] for e in split] for split in (train, test))
    tail = LogisticRegression(max_iter=3000).fit(features(train, TRUNCATED - 2), y_train)
    assert abs(tail.score(features(test, TRUNCATED - 2), y_test) - 0.5) < 0.06
    # a view that includes the key makes the same features informative once the pair is known
    whole = [(e["text"].split()[e["text"].split().index("secret") + 1], e["text"].split()[-EDGE:]) for e in test]
    assert all((key in tail_words[tail_words.index("query") + 1]) == (e["label"] == "match")
               for (key, tail_words), e in zip(whole, test, strict=True))


def test_solver_rejects_malformed_documents():
    rng = np.random.default_rng(2)
    text = long_range_example(256, rng, pseudo_words(300, 0))["text"]
    with pytest.raises(InputFormatError, match="secret"):
        solve_long_range(text + " secret red")
    words = text.split()
    key = words.index("secret")
    moved = words[:key] + words[key + 2:]
    moved[150:150] = words[key:key + 2]
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
