"""Hugging Face BigBird as an independent reference for tests (needs `transformers`).

Everything here runs transformers' own code: `BigBirdBlockSparseAttention` in training mode, which seeds
numpy's global RNG with the layer's seed and draws its random-block plan. numpy's global state is saved
and restored around each call, so tests stay independent of each other.
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch

transformers = __import__("pytest").importorskip("transformers")
from transformers.models.big_bird.modeling_big_bird import (  # noqa: E402
    BigBirdBlockSparseAttention,
    BigBirdConfig,
    BigBirdModel,
)


@contextlib.contextmanager
def numpy_global_state_restored():
    """Run a block that reseeds numpy's global RNG (as Hugging Face does) without leaking the change."""
    state = np.random.get_state()
    try:
        yield
    finally:
        np.random.set_state(state)


def _sparse_module(num_heads: int, head_size: int, block_size: int, num_random_blocks: int, seed: int,
                   max_seqlen: int) -> BigBirdBlockSparseAttention:
    config = BigBirdConfig(hidden_size=num_heads * head_size, num_attention_heads=num_heads,
                           block_size=block_size, num_random_blocks=num_random_blocks,
                           max_position_embeddings=max_seqlen)
    return BigBirdBlockSparseAttention(config, seed=seed).train()


def hf_block_sparse_attention(q, k, v, key_padding_mask, *, block_size: int, num_random_blocks: int,
                              seed: int, max_seqlen: int = 4096):
    """Transformers' block-sparse attention on given q/k/v `[B, H, L, D]` (L a multiple of `block_size`).

    Returns `(out [B, H, L, D], random_blocks [H, L // block_size, r])`, where `random_blocks` is the
    plan Hugging Face drew, laid out as dnabird's explicit tables (rows 0 and nb - 1 are zero, unused).
    """
    batch, heads, length, head_size = q.shape
    module = _sparse_module(heads, head_size, block_size, num_random_blocks, seed, max_seqlen)
    blocked, band, from_mask, to_mask = BigBirdModel.create_masks_for_block_sparse_attn(
        key_padding_mask.to(q.dtype), block_size)
    captured = []
    gather = BigBirdBlockSparseAttention.torch_gather_b2

    def recording_gather(params, indices):
        captured.append(indices)
        return gather(params, indices)

    module.torch_gather_b2 = recording_gather
    with numpy_global_state_restored(), torch.no_grad():
        out, _ = module.bigbird_block_sparse_attention(
            q, k, v, band, from_mask, to_mask, blocked, blocked, heads, num_random_blocks, head_size,
            block_size, block_size, batch, length, length, seed=seed, plan_from_length=None,
            plan_num_rand_blocks=None)
    plan = captured[0][0]  # [H, nb - 2, r], shared across the batch
    tables = torch.zeros(heads, length // block_size, num_random_blocks, dtype=torch.long)
    tables[:, 1:-1] = plan
    return out.view(batch, length, heads, head_size).transpose(1, 2), tables


def hf_random_blocks(length: int, *, num_heads: int, block_size: int = 64, num_random_blocks: int = 3,
                     seed: int = 0, max_seqlen: int = 4096) -> torch.Tensor:
    """The random-block tables `[H, L // block_size, r]` Hugging Face draws in training for this length."""
    q = torch.zeros(1, num_heads, length, 2)
    mask = torch.ones(1, length)
    return hf_block_sparse_attention(q, q, q, mask, block_size=block_size,
                                     num_random_blocks=num_random_blocks, seed=seed, max_seqlen=max_seqlen)[1]
