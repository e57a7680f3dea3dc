"""Peer parity with Hugging Face transformers' BigBird block-sparse attention (random mode "hf")."""

import numpy as np
import pytest
import torch

from dnabird.attention import BigBirdITC, attention
from tests.hf_reference import hf_block_sparse_attention, hf_random_blocks


@pytest.mark.parametrize("length, block, r", [(768, 64, 3), (1024, 64, 3), (1536, 64, 3), (2048, 64, 3),
                                              (4096, 64, 3), (5120, 64, 3), (640, 32, 2), (3072, 32, 3)])
@pytest.mark.parametrize("seed", [0, 7])
def test_hf_mode_tables_equal_transformers(length, block, r, seed):
    pattern = BigBirdITC(num_heads=3, block_size=block, num_random_blocks=r, random_mode="hf")
    ours = pattern.layout(length // block, seed)
    theirs = hf_random_blocks(length, num_heads=3, block_size=block, num_random_blocks=r, seed=seed)
    nb = length // block
    for head in range(3):
        for row in range(1, nb - 1):
            window = {row - 1, row, row + 1, 0, nb - 1}
            expected = set(theirs[head, row].tolist()) | window
            assert set(ours.key_blocks[head, row].tolist()) - {-1} == expected, (head, row)


def test_hf_mode_confines_random_blocks_to_early_tokens():
    layout = BigBirdITC(num_heads=4, random_mode="hf").layout(40, seed=3)  # 2560 tokens: first 11 blocks
    blocks = layout.key_blocks[:, 15:-1]
    rows = torch.arange(15, 39)[None, :, None]
    random = torch.where((blocks - rows).abs() <= 1, -1, blocks)
    random = random[(random > 0) & (random < 39)]
    assert random.numel() and int(random.max()) <= 9


def test_hf_mode_leaves_global_numpy_rng_alone():
    np.random.seed(123)
    expected = np.random.random_sample(3)
    np.random.seed(123)
    BigBirdITC(num_heads=2, random_mode="hf").layout(24, seed=5)
    assert np.array_equal(np.random.random_sample(3), expected)


def test_itc_attention_matches_transformers_block_sparse():
    """Identical q/k/v at L = 1536 (> 704, not a multiple of 1024), batch 2 with padding."""
    g = torch.Generator().manual_seed(0)
    batch, heads, length, dim = 2, 4, 1536, 32
    q, k, v = (torch.randn(batch, heads, length, dim, generator=g) for _ in range(3))
    mask = torch.ones(batch, length, dtype=torch.bool)
    mask[1, 1300:] = False
    theirs, tables = hf_block_sparse_attention(q, k, v, mask, block_size=64, num_random_blocks=3, seed=2)
    pattern = BigBirdITC(num_heads=heads, block_size=64, num_random_blocks=3, random_mode="hf")
    with_tables = attention(q, k, v, pattern, key_padding_mask=mask, random_blocks=tables)
    from_seed = attention(q, k, v, pattern, key_padding_mask=mask, seed=2)
    real = mask[:, None, :, None].expand_as(theirs)
    torch.testing.assert_close(with_tables[real], theirs[real], rtol=0, atol=1e-5)
    torch.testing.assert_close(from_seed, with_tables, rtol=0, atol=0)
    # different random blocks give a different output, so the match is not vacuous
    other = attention(q, k, v, pattern, key_padding_mask=mask, seed=3)
    assert (other - theirs).abs().max() > 1e-3
