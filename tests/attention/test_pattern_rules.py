"""`dense_mask` at realistic sizes against the papers' rules, built here independently of the pattern code.

The parity tests take their expected mask from `pattern.dense_mask`; these tests are what ties that
mask to the patterns as published. Global and window parts are constructed from positions alone
(BigBird, Zaheer et al. 2020, App. D; Longformer, Beltagy et al. 2020, §3.1); the random blocks, which
no rule fixes, are checked against theirs: exactly r per query block and head, whole blocks, never in
the block's window or a global block, and uniform over the remaining blocks (chi-square over seeds).
"""

import numpy as np
import pytest
from scipy.stats import chisquare

from dnabird.attention import BigBirdETC, BigBirdITC, Longformer


def blocks_of(mask: np.ndarray, b: int) -> np.ndarray:
    """bool [H, nb, nb] of a block-structured token mask; fails unless every b×b tile is all or nothing."""
    H, L, _ = mask.shape
    tiles = mask.reshape(H, L // b, b, L // b, b)
    every, some = tiles.all(axis=(2, 4)), tiles.any(axis=(2, 4))
    assert (every == some).all(), "a block is only partly allowed"
    return every


def itc_fixed(nb: int, window_blocks: int) -> np.ndarray:
    """bool [nb, nb]: ITC's global part (first and last block, as rows and columns) and its window."""
    i, j = np.arange(nb)[:, None], np.arange(nb)[None, :]
    global_ = np.isin(i, [0, nb - 1]) | np.isin(j, [0, nb - 1])
    return global_ | (np.abs(i - j) <= window_blocks // 2)


def etc_fixed(nb: int, global_blocks: int, window_blocks: int) -> np.ndarray:
    """bool [nb, nb]: ETC's global part (the leading global tokens, as rows and columns) and its window."""
    i, j = np.arange(nb)[:, None], np.arange(nb)[None, :]
    return (i < global_blocks) | (j < global_blocks) | (np.abs(i - j) <= window_blocks // 2)


def check_random_blocks(blocks: np.ndarray, fixed: np.ndarray, global_rows: np.ndarray, r: int) -> np.ndarray:
    """The random part of block masks [H, nb, nb]: r blocks in every non-global row (all the eligible
    ones where fewer remain), none in a global row; returns it."""
    assert (blocks >= fixed).all(), "a global or window block is missing"
    extra = blocks & ~fixed
    assert not extra[:, global_rows].any(), "a global row has random blocks on top of everything"
    eligible = (~fixed[~global_rows]).sum(-1)
    np.testing.assert_array_equal(extra[:, ~global_rows].sum(-1), np.minimum(r, eligible)[None].repeat(len(blocks), 0))
    return extra


@pytest.mark.parametrize("length, block, window, r", [(4096, 64, 3, 3), (512, 16, 3, 3), (4096, 64, 5, 2),
                                                      (3000, 64, 3, 3)])
def test_itc_mask_follows_the_rules(length, block, window, r):
    pattern = BigBirdITC(num_heads=2, block_size=block, window_blocks=window, num_random_blocks=r)
    nb = -(-length // block)
    mask = pattern.dense_mask(length, seed=11).numpy()
    extra = nb * block - length  # a cut last block: its missing tokens repeat its last one
    blocks = blocks_of(np.pad(mask, ((0, 0), (0, extra), (0, extra)), mode="edge"), block)
    global_rows = np.isin(np.arange(nb), [0, nb - 1])
    fixed = itc_fixed(nb, window)
    check_random_blocks(blocks, fixed, global_rows, r)
    assert blocks[:, global_rows].all()


def test_etc_mask_follows_the_rules():
    pattern = BigBirdETC(num_heads=2, block_size=64, num_global_tokens=128, window_blocks=3, num_random_blocks=2)
    blocks = blocks_of(pattern.dense_mask(4096, seed=3).numpy(), 64)
    global_rows = np.arange(64) < 2
    check_random_blocks(blocks, etc_fixed(64, 2, 3), global_rows, 2)


def test_etc_without_random_blocks_is_exactly_global_plus_window():
    pattern = BigBirdETC(num_heads=1, block_size=16, num_global_tokens=32, window_blocks=5)
    expected = np.kron(etc_fixed(32, 2, 5), np.ones((16, 16), dtype=bool))
    np.testing.assert_array_equal(pattern.dense_mask(512).numpy()[0], expected)


def longformer_mask(length: int, window: int, dilation: int, global_positions, causal: bool) -> np.ndarray:
    """bool [L, L]: key j is in query i's dilated window (|i − j| ≤ d·w/2, i − j a multiple of d, j ≤ i
    if causal), or either of them is a global token."""
    offset = np.arange(length, dtype=np.int32)[:, None] - np.arange(length, dtype=np.int32)[None, :]
    allowed = (np.abs(offset) <= dilation * (window // 2)) & (offset % dilation == 0)
    allowed[list(global_positions), :] = True
    allowed[:, list(global_positions)] = True
    if causal:
        allowed &= offset >= 0
    return allowed


@pytest.mark.parametrize("window, dilations, causal", [(512, (1, 2, 4), False), (512, (1, 2, 4), True),
                                                     (500, (1, 3, 5), False)])  # reach not a block multiple
def test_longformer_mask_follows_the_rules(window, dilations, causal):
    globals_ = (0, 1, 700, 2047)
    pattern = Longformer(num_heads=3, window=window, dilation=dilations, global_positions=globals_, block_size=64)
    mask = pattern.dense_mask(2048, causal=causal).numpy()
    for head, dilation in enumerate(dilations):
        np.testing.assert_array_equal(mask[head], longformer_mask(2048, window, dilation, globals_, causal))


def test_uniform_random_blocks_are_uniform_over_the_eligible_blocks():
    """Per query block, how often each key block is drawn (over 12 heads × 120 seeds) is uniform over
    the blocks outside its window and the global blocks, and zero elsewhere."""
    pattern = BigBirdITC(num_heads=12, block_size=16, num_random_blocks=3)
    nb, seeds = 32, 80
    fixed = itc_fixed(nb, 3)
    counts = np.zeros((nb, nb), dtype=np.int64)
    for seed in range(seeds):
        counts += (blocks_of(pattern.dense_mask(512, seed=seed).numpy(), 16) & ~fixed).sum(0)
    for row in (1, 2, 10, 29, 30):  # first and last rows next to the global blocks, and the middle
        assert counts[row, fixed[row]].sum() == 0 and counts[row].sum() == seeds * 12 * 3
        assert chisquare(counts[row, ~fixed[row]]).pvalue > 1e-3, (row, counts[row])
