"""Random blocks: per head, never window/global, never repeated, seeded, uniform, no global RNG use."""

import numpy as np
import pytest
import torch
from scipy.stats import chisquare

from dnabird.attention import BigBirdITC, attention
from dnabird.errors import ParameterError


def random_sets(layout, window_blocks=3):
    """Per (head, block) the key blocks that are neither window nor global: the random ones."""
    nb = layout.num_blocks
    out = {}
    for h in range(layout.num_heads):
        for i in range(1, nb - 1):
            keys = [int(j) for j in layout.key_blocks[h, i] if j >= 0]
            assert len(keys) == len(set(keys)), f"repeated key block in head {h} row {i}: {keys}"
            window = set(range(i - window_blocks // 2, i + window_blocks // 2 + 1))
            out[h, i] = set(keys) - window - {0, nb - 1}
    return out


def test_random_blocks_per_head_exclude_window_and_globals_and_never_repeat():
    pattern = BigBirdITC(num_heads=6, block_size=64, num_random_blocks=3)
    layout = pattern.layout(32, seed=7)
    sets = random_sets(layout)
    for (h, i), random in sets.items():
        assert len(random) == 3, (h, i, random)
        assert all(1 <= j <= 30 for j in random)
        assert len([int(j) for j in layout.key_blocks[h, i] if j >= 0]) == 3 + len({i - 1, i, i + 1} | {0, 31})
    # heads draw independently
    assert any(sets[0, i] != sets[1, i] for i in range(1, 31))


def test_same_seed_same_layout_other_seed_other_layout():
    pattern = BigBirdITC(num_heads=4, num_random_blocks=3)
    a, b, c = (pattern.layout(40, seed=s).key_blocks for s in (11, 11, 12))
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_fewer_eligible_blocks_than_r_uses_all_of_them():
    pattern = BigBirdITC(num_heads=2, block_size=4, num_random_blocks=3)
    layout = pattern.layout(7, seed=0)  # row 3: window {2,3,4}, globals {0,6}: eligible {1,5}
    assert random_sets(layout)[0, 3] == {1, 5}
    assert pattern.dense_mask(28).all()  # with r = 3 every row reaches every block here


def test_uniform_mode_is_uniform_over_eligible_blocks_at_8192():
    pattern = BigBirdITC(num_heads=12, block_size=64, num_random_blocks=3)
    nb, row = 8192 // 64, 40
    counts = np.zeros(nb, dtype=np.int64)
    fixed = {0, nb - 1, row - 1, row, row + 1}
    for seed in range(150):
        keys = pattern.layout(nb, seed=seed).key_blocks[:, row]  # [heads, K]
        for j in keys[keys >= 0].tolist():
            counts[j] += j not in fixed
    eligible = [j for j in range(nb) if j not in {0, nb - 1, row - 1, row, row + 1}]
    assert counts.sum() == counts[eligible].sum() == 150 * 12 * 3
    assert chisquare(counts[eligible]).pvalue > 1e-3


def test_forward_leaves_global_rng_untouched():
    q = torch.randn(1, 2, 640, 8)
    torch_state, np_state = torch.get_rng_state(), np.random.get_state()
    attention(q, q, q, BigBirdITC(num_heads=2), seed=5)
    assert torch.equal(torch.get_rng_state(), torch_state)
    after = np.random.get_state()
    assert after[0] == np_state[0] and np.array_equal(after[1], np_state[1]) and after[2:] == np_state[2:]


@pytest.mark.parametrize("bad, where", [
    ({"row": 4, "value": 4}, "window"),   # its own block
    ({"row": 4, "value": 0}, "global"),   # the first (global) block
    ({"row": 4, "value": 99}, "below"),   # out of range
])
def test_explicit_tables_are_validated(bad, where):
    pattern = BigBirdITC(num_heads=1, block_size=4, num_random_blocks=1)
    tables = torch.full((1, 10, 1), -1)
    tables[0, 2:8, 0] = torch.tensor([6, 7, 8, 1, 2, 3])
    pattern.layout(10, random_blocks=tables)  # valid
    tables[0, bad["row"], 0] = bad["value"]
    with pytest.raises(ParameterError, match="random_blocks"):
        pattern.layout(10, random_blocks=tables)


def test_repeated_explicit_block_is_rejected():
    pattern = BigBirdITC(num_heads=1, block_size=4, num_random_blocks=2)
    tables = torch.full((1, 10, 2), -1)
    tables[0, 5, :] = torch.tensor([2, 2])
    with pytest.raises(ParameterError, match="distinct"):
        pattern.layout(10, random_blocks=tables)


def test_negative_seed_is_rejected():
    with pytest.raises(ParameterError, match="seed"):
        BigBirdITC(num_heads=1).layout(20, seed=-1)
