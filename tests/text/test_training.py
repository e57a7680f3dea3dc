"""Epoch-shuffled examples: every slot once per epoch, a new order each epoch, the same order for the same seed."""

from dnabird.text.training import EpochShuffled


def test_each_epoch_visits_every_example_once():
    examples = EpochShuffled(list(range(10)), seed=4)
    epochs = [[examples[epoch * 10 + i] for i in range(10)] for epoch in range(3)]
    assert all(sorted(epoch) == list(range(10)) for epoch in epochs)
    assert epochs[0] != epochs[1] != epochs[2]
    assert [EpochShuffled(list(range(10)), seed=4)[i] for i in range(10)] == epochs[0]
    assert [EpochShuffled(list(range(10)), shuffle=False)[13 + i] for i in range(3)] == [3, 4, 5]
