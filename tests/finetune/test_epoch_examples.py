"""Epoch-addressed examples: every slot once per epoch, a new order each epoch, the same order for the same seed."""

import numpy as np

from dnabird.finetune.data import TokenExamples


def examples(**options) -> TokenExamples:
    return TokenExamples(np.arange(10)[:, None], np.arange(10), **options)


def test_each_epoch_visits_every_example_once():
    stream = examples(seed=4, shuffle=True)
    epochs = [[int(stream[epoch * 10 + i]["labels"]) for i in range(10)] for epoch in range(3)]
    assert all(sorted(epoch) == list(range(10)) for epoch in epochs)
    assert epochs[0] != epochs[1] != epochs[2]
    assert [int(examples(seed=4, shuffle=True)[i]["labels"]) for i in range(10)] == epochs[0]
    assert [int(examples(seed=5, shuffle=True)[i]["labels"]) for i in range(10)] != epochs[0]
    assert [examples()[13 + i]["input_ids"].tolist() for i in range(3)] == [[3], [4], [5]]
