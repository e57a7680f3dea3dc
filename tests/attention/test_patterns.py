"""Hand-written masks: expected key sets are written out here, not derived from the code under test."""

import numpy as np
import pytest
import torch

from dnabird.attention import BigBirdETC, BigBirdITC, Full, Longformer, pattern_from_dict
from dnabird.errors import ParameterError


def rows_to_mask(rows: list[set[int]], n: int) -> np.ndarray:
    mask = np.zeros((len(rows), n), dtype=bool)
    for i, keys in enumerate(rows):
        mask[i, sorted(keys)] = True
    return mask


def expand_blocks(block_mask: np.ndarray, b: int) -> np.ndarray:
    return np.kron(block_mask, np.ones((b, b), dtype=bool)).astype(bool)


def test_itc_eight_blocks_with_explicit_random_blocks():
    random = torch.full((1, 8, 1), -1)
    random[0, 1:7, 0] = torch.tensor([5, 5, 6, 1, 2, 3])
    everything = set(range(8))
    expected_blocks = rows_to_mask([
        everything,  # first block: global row
        {0, 1, 2, 5, 7},
        {0, 1, 2, 3, 5, 7},
        {0, 2, 3, 4, 6, 7},
        {0, 1, 3, 4, 5, 7},
        {0, 2, 4, 5, 6, 7},
        {0, 3, 5, 6, 7},
        everything,  # last block: global row
    ], 8)
    pattern = BigBirdITC(num_heads=1, block_size=2, window_blocks=3, num_random_blocks=1)
    mask = pattern.dense_mask(16, seed=0, random_blocks=random)
    np.testing.assert_array_equal(mask[0].numpy(), expand_blocks(expected_blocks, 2))


def test_itc_without_random_blocks_and_non_multiple_length():
    pattern = BigBirdITC(num_heads=1, block_size=2, num_random_blocks=0)
    expected_blocks = rows_to_mask([set(range(7)), {0, 1, 2, 6}, {0, 1, 2, 3, 6}, {0, 2, 3, 4, 6},
                                    {0, 3, 4, 5, 6}, {0, 4, 5, 6}, set(range(7))], 7)
    mask = pattern.dense_mask(13, seed=0)
    np.testing.assert_array_equal(mask[0].numpy(), expand_blocks(expected_blocks, 2)[:13, :13])


@pytest.mark.parametrize("num_blocks", [1, 2, 3, 4, 5])
def test_itc_five_blocks_or_fewer_is_full_attention(num_blocks):
    pattern = BigBirdITC(num_heads=3, block_size=4, num_random_blocks=0)
    assert pattern.dense_mask(4 * num_blocks, seed=1).all()


def test_itc_short_sequence_is_decided_per_call():
    pattern = BigBirdITC(num_heads=2, block_size=4, num_random_blocks=1)
    assert pattern.dense_mask(20, seed=0).all()
    long_mask = pattern.dense_mask(4 * 12, seed=0)
    assert not long_mask.all()
    assert pattern.dense_mask(20, seed=0).all()


def test_etc_global_tokens_window_and_no_random():
    pattern = BigBirdETC(num_heads=1, block_size=2, num_global_tokens=4, window_blocks=3)
    everything = set(range(6))
    expected_blocks = rows_to_mask([everything, everything, {0, 1, 2, 3}, {0, 1, 2, 3, 4},
                                    {0, 1, 3, 4, 5}, {0, 1, 4, 5}], 6)
    np.testing.assert_array_equal(pattern.dense_mask(12)[0].numpy(), expand_blocks(expected_blocks, 2))


LONGFORMER_HEAD0 = [{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3, 4}, set(range(10)), {2, 3, 4, 5, 6},
                    {3, 4, 5, 6, 7}, {3, 4, 5, 6, 7, 8}, {3, 5, 6, 7, 8, 9}, {3, 6, 7, 8, 9}, {3, 7, 8, 9}]
LONGFORMER_HEAD1 = [{0, 2, 3, 4}, {1, 3, 5}, {0, 2, 3, 4, 6}, set(range(10)), {0, 2, 3, 4, 6, 8},
                    {1, 3, 5, 7, 9}, {2, 3, 4, 6, 8}, {3, 5, 7, 9}, {3, 4, 6, 8}, {3, 5, 7, 9}]


@pytest.mark.parametrize("block_size", [1, 3, 4, 16])
def test_longformer_dilation_two_and_a_global_token(block_size):
    pattern = Longformer(num_heads=2, window=4, dilation=(1, 2), global_positions=(3,), block_size=block_size)
    mask = pattern.dense_mask(10)
    np.testing.assert_array_equal(mask[0].numpy(), rows_to_mask(LONGFORMER_HEAD0, 10))
    np.testing.assert_array_equal(mask[1].numpy(), rows_to_mask(LONGFORMER_HEAD1, 10))


def test_causal_longformer():
    pattern = Longformer(num_heads=1, window=4, global_positions=(1,), block_size=2)
    expected = [{0}, {0, 1}, {0, 1, 2}, {1, 2, 3}, {1, 2, 3, 4}, {1, 3, 4, 5}]
    np.testing.assert_array_equal(pattern.dense_mask(6, causal=True)[0].numpy(), rows_to_mask(expected, 6))


def test_full_and_causal_full():
    assert Full(2).dense_mask(7).all()
    np.testing.assert_array_equal(Full(1).dense_mask(5, causal=True)[0].numpy(), np.tril(np.ones((5, 5), bool)))


def test_bigbird_has_no_causal_form():
    with pytest.raises(ParameterError, match="causal"):
        BigBirdITC(num_heads=1, block_size=2).dense_mask(32, causal=True)


@pytest.mark.parametrize("make, name", [
    (lambda: BigBirdITC(num_heads=0), "num_heads"),
    (lambda: BigBirdITC(num_heads=2, block_size=-1), "block_size"),
    (lambda: BigBirdITC(num_heads=2, window_blocks=2), "window_blocks"),
    (lambda: BigBirdITC(num_heads=2, random_mode="zipf"), "random_mode"),
    (lambda: BigBirdETC(num_heads=2, block_size=64, num_global_tokens=100), "num_global_tokens"),
    (lambda: Longformer(num_heads=2, window=5), "window"),
    (lambda: Longformer(num_heads=2, dilation=(1, 2, 3)), "dilation"),
])
def test_invalid_parameters_are_named(make, name):
    with pytest.raises(ParameterError, match=name):
        make()


def test_longformer_global_position_beyond_length_is_rejected():
    with pytest.raises(ParameterError, match="global_positions"):
        Longformer(num_heads=1, window=4, global_positions=(50,), block_size=4).dense_mask(20)


@pytest.mark.parametrize("pattern", [
    Full(4), BigBirdITC(4, block_size=32, num_random_blocks=2, window_blocks=5),
    BigBirdETC(4, block_size=16, num_global_tokens=32, num_random_blocks=1),
    Longformer(4, window=8, dilation=(1, 1, 2, 3), global_positions=(0, 5), block_size=8),
])
def test_pattern_dict_round_trip(pattern):
    assert pattern_from_dict(pattern.to_dict()) == pattern


def test_pattern_from_dict_names_unknown_type_and_key():
    with pytest.raises(ParameterError, match="type"):
        pattern_from_dict({"type": "reformer"})
    with pytest.raises(ParameterError, match="bigbird_itc"):
        pattern_from_dict({"type": "bigbird_itc", "num_heads": 2, "blocksize": 64})
