"""Rotary positions against an independent complex-number form, and through the attention call."""

import pytest
import torch

from dnabird.attention import Longformer, attention
from dnabird.attention.positional import Rotary
from dnabird.errors import ParameterError
from tests.attention.test_core import inputs, reference


def complex_rotation(x, base, offset=0):
    """Channel pairs (i, i + d/2) as complex numbers times exp(i · position · base^(-2i/d)), in float64."""
    half = x.shape[-1] // 2
    z = torch.complex(x[..., :half].double(), x[..., half:].double())
    positions = torch.arange(offset, offset + x.shape[-2], dtype=torch.float64)
    frequencies = torch.tensor([base ** (-i / half) for i in range(half)], dtype=torch.float64)
    z = z * torch.exp(1j * torch.outer(positions, frequencies))
    return torch.cat([z.real, z.imag], -1)


@pytest.mark.parametrize("offset", [0, 2, 100_000])
def test_matches_the_complex_number_form(offset):
    x = torch.randn(2, 3, 40, 16, generator=torch.Generator().manual_seed(0))
    rotated = Rotary(16, base=500.0, offset=offset).rotate(x)
    expected = complex_rotation(x, 500.0, offset)
    # positions near 1e5 stay exact: the angles are formed in float64
    torch.testing.assert_close(rotated.double(), expected, rtol=0, atol=2e-5)


def test_scores_depend_on_the_offset_between_positions_only():
    q, k = torch.randn(2, 1, 1, 30, 8, generator=torch.Generator().manual_seed(1))
    near, far = Rotary(8, offset=0), Rotary(8, offset=777)
    scores_near = torch.einsum("bhid,bhjd->bhij", *near(q, k))
    scores_far = torch.einsum("bhid,bhjd->bhij", *far(q, k))
    torch.testing.assert_close(scores_far, scores_near, rtol=0, atol=1e-4)
    plain = torch.einsum("bhid,bhjd->bhij", q, k)
    assert (scores_near - plain).abs().max() > 0.1  # the rotation does change the scores


def test_bad_sizes_fail_clearly():
    with pytest.raises(ParameterError, match="head_size=7"):
        Rotary(7)
    with pytest.raises(ParameterError, match="rotary base"):
        Rotary(8, base=1.0)
    with pytest.raises(ParameterError, match="head size=6"):
        Rotary(8).rotate(torch.zeros(1, 4, 6))


def test_attention_rotates_local_and_global_queries_and_keys():
    pattern = Longformer(3, window=16, dilation=(1, 2, 3), global_positions=(0, 45, 130), block_size=16)
    q, k, v, kpm = inputs(160)
    gq, gk, gv, _ = inputs(160, seed=5)
    rotary = Rotary(16, base=100.0)
    out = attention(q, k, v, pattern, key_padding_mask=kpm, global_qkv=(gq, gk, gv), positional=rotary)
    mask = pattern.dense_mask(160)
    rq, rk, rgq, rgk = (complex_rotation(t, 100.0).float() for t in (q, k, gq, gk))
    expected = reference(rq, rk, v, mask, kpm)
    expected[:, :, [0, 45, 130]] = reference(rgq, rgk, gv, mask, kpm)[:, :, [0, 45, 130]]
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-5)
