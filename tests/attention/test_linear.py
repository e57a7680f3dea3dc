"""Linear kernels against explicit quadratic forms and exact softmax."""

import pytest
import torch

from dnabird.attention import Full, Performer, ReluLinear, attention, pattern_from_dict
from dnabird.errors import ParameterError


def qkv(length=50, heads=2, d=8, dv=6, batch=2, seed=0, spread=1.0):
    g = torch.Generator().manual_seed(seed)
    q, k = (spread * torch.randn(batch, heads, length, d, generator=g, dtype=torch.float64) for _ in range(2))
    v = torch.randn(batch, heads, length, dv, generator=g, dtype=torch.float64)
    return q, k, v


def quadratic(weights, v, mask):
    """Explicit normalised attention from a weight matrix [B, H, L, L] and a boolean mask."""
    weights = weights * mask
    return (weights @ v) / weights.sum(-1, keepdim=True)


def test_relu_linear_equals_its_explicit_quadratic_form():
    q, k, v = qkv()
    out = attention(q, k, v, ReluLinear(2))
    w = (torch.relu(q) + 1e-3) @ (torch.relu(k) + 1e-3).transpose(-1, -2)
    torch.testing.assert_close(out, quadratic(w, v, torch.ones(50, 50, dtype=torch.bool)), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kernel", [ReluLinear(2, epsilon=0.01), Performer(2, num_features=32, redraw=0)])
def test_causal_equals_the_masked_quadratic_computation(kernel):
    q, k, v = qkv(length=150)  # three causal chunks, the last one partial
    q_feat, k_feat = kernel.features(q, k, 8 ** -0.5, seed=3)
    w = q_feat @ k_feat.transpose(-1, -2)
    expected = quadratic(w, v, torch.ones(150, 150, dtype=torch.bool).tril())
    out = attention(q, k, v, kernel, causal=True, seed=3)
    torch.testing.assert_close(out, expected, rtol=1e-8, atol=1e-8)
    # and the non-causal call differs from it
    assert (attention(q, k, v, kernel, seed=3) - out).abs().max() > 1e-2


def test_key_padding_is_honoured():
    q, k, v = qkv()
    real = torch.ones(2, 50, dtype=torch.bool)
    real[1, 30:] = False
    out = attention(q, k, v, ReluLinear(2), key_padding_mask=real)
    w = (torch.relu(q) + 1e-3) @ (torch.relu(k) + 1e-3).transpose(-1, -2)
    expected = quadratic(w, v, real[:, None, None, :]) * real[:, None, :, None]
    torch.testing.assert_close(out, expected, rtol=1e-9, atol=1e-9)
    # a padded example equals its own unpadded call
    alone = attention(q[1:, :, :30], k[1:, :, :30], v[1:, :, :30], ReluLinear(2))
    torch.testing.assert_close(out[1:, :, :30], alone, rtol=1e-9, atol=1e-9)
    causal = attention(q, k, v, Performer(2, num_features=16), key_padding_mask=real, causal=True, seed=1)
    causal_alone = attention(q[1:, :, :30], k[1:, :, :30], v[1:, :, :30], Performer(2, num_features=16),
                             causal=True, seed=1)
    torch.testing.assert_close(causal[1:, :, :30], causal_alone, rtol=1e-7, atol=1e-7)


def exact_softmax(q, k, v, scale):
    return torch.softmax(q @ k.transpose(-1, -2) * scale, -1) @ v


def test_performer_error_to_exact_softmax_shrinks_as_features_grow():
    q, k, v = qkv(length=64, d=16, spread=0.3, seed=1)
    exact = exact_softmax(q, k, v, 16 ** -0.5)
    errors = {}
    for features in (16, 256, 4096):
        runs = [attention(q, k, v, Performer(2, num_features=features), seed=s) for s in range(4)]
        errors[features] = sum(float((r - exact).pow(2).mean().sqrt()) for r in runs) / len(runs)
    # ~1/√F: a factor 4 per 16× features (measured 3.0-3.9×); a biased draw would stall at a floor
    assert errors[256] < errors[16] / 2.5 and errors[4096] < errors[256] / 2.5, errors
    assert errors[4096] < 0.003, errors


def test_performer_features_are_a_pure_function_of_the_seed():
    kernel = Performer(3, num_features=20)
    a, b, c = kernel.projection(8, 11), kernel.projection(8, 11), kernel.projection(8, 12)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert (a - c).abs().max() > 0.1
    assert (a[0] - a[1]).abs().max() > 0.1  # heads draw their own features
    # orthogonal within each block of d rows, rows marginally Gaussian (norms ≈ √d on average)
    block = a[0, :8]
    gram = block @ block.T
    off_diagonal = gram - torch.diag(torch.diagonal(gram))
    assert off_diagonal.abs().max() < 1e-4
    assert Performer(1, num_features=4000).projection(8, 0).norm(dim=-1).pow(2).mean().sub(8).abs() < 0.5
    assert [Performer(1, redraw=r).seed_step(25) for r in (1, 10, 0)] == [25, 2, 0]


def test_specs_validate_and_build_from_dicts():
    assert pattern_from_dict({"type": "performer", "num_heads": 2, "num_features": 64}) == Performer(2, 64)
    assert pattern_from_dict({"type": "relu_linear", "num_heads": 2}) == ReluLinear(2)
    with pytest.raises(ParameterError, match="num_features=3.*no such key"):
        pattern_from_dict({"type": "relu_linear", "num_heads": 2, "num_features": 3})
    with pytest.raises(ParameterError, match="num_features=0"):
        Performer(2, num_features=0)
    with pytest.raises(ParameterError, match="redraw=-1"):
        Performer(2, redraw=-1)
    with pytest.raises(ParameterError, match="epsilon"):
        ReluLinear(2, epsilon=0)
    q, k, v = qkv()
    with pytest.raises(ParameterError, match="dropout_p"):
        attention(q, k, v, ReluLinear(2), dropout_p=0.1)
    with pytest.raises(ParameterError, match="global_qkv"):
        attention(q, k, v, ReluLinear(2), global_qkv=(q, k, v))
    # the full layout: every key is allowed (the kernel's dense mask is Full's)
    torch.testing.assert_close(ReluLinear(2).dense_mask(10, causal=True), Full(2).dense_mask(10, causal=True))
