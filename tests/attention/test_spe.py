"""Stochastic positional encoding: empirical code covariances against oracles written here from the paper's
equations (not from the module's own `kernel`), the gate identity, the logit identity, and composition with
softmax + sparse patterns and linear kernels."""

import math

import numpy as np
import pytest
import torch

from dnabird.attention import BigBirdITC, Full, Performer, ReluLinear, attention
from dnabird.attention.spe import ConvSPE, SineSPE, SPESpec
from dnabird.errors import ParameterError


def sine(heads=1, d=4, sines=2, realizations=64, gated=False, seed=0):
    spe = SineSPE(heads, d, num_sines=sines, realizations=realizations, gated=gated)
    spe.reset_parameters(torch.Generator().manual_seed(seed))
    return spe


def sine_oracle(spe, length):
    """√(R/D) · (1/2K) Σ_k softplus(g)² cos(2π σ(f)/2 (m − n) + θ) as [H, D, L, L], in numpy float64."""
    f, theta, g = (p.detach().double().numpy() for p in (spe.frequencies, spe.phases, spe.gains))
    nu, gain = 1 / (1 + np.exp(-f)) / 2, np.log1p(np.exp(g))
    lag = np.arange(length)[:, None] - np.arange(length)[None, :]
    terms = gain[..., None, None] ** 2 * np.cos(2 * np.pi * nu[..., None, None] * lag + theta[..., None, None])
    return math.sqrt(spe.realizations / spe.head_size) * terms.sum(2) / (2 * spe.num_sines)


def covariance(q_bar, k_bar):
    """C[h, d, m, n] = Σ_r Q̄(m, r) K̄(n, r)."""
    return (q_bar.detach().double() @ k_bar.detach().double().transpose(-1, -2)).numpy()


def relative_error(empirical, expected):
    axes = (-2, -1)
    return np.linalg.norm(empirical - expected, axis=axes) / np.linalg.norm(expected, axis=axes)


def test_sine_covariance_converges_to_the_analytic_kernel_like_one_over_root_r():
    errors = {}
    for realizations in (256, 16384):
        spe = sine(realizations=realizations, seed=1)
        expected = sine_oracle(spe, 64)
        errors[realizations] = np.median([relative_error(covariance(*spe.codes(64, seed)), expected)
                                          for seed in range(4)])
    assert errors[16384] < 0.06, errors  # measured 0.016-0.03
    slope = math.log(errors[16384] / errors[256]) / math.log(16384 / 256)
    assert -0.7 < slope < -0.3, (slope, errors)


def test_sine_codes_are_stationary_and_periodic():
    spe = sine(d=2, sines=1, realizations=32768, seed=2)
    period = 16
    with torch.no_grad():
        spe.frequencies.fill_(math.log((2 / period) / (1 - 2 / period)))  # σ(f)/2 = 1/period
    c = covariance(*spe.codes(64, seed=5))[0]  # [D, L, L]
    scale = np.abs(c).max()
    # depends on m − n only: every diagonal is constant up to the sampling noise (~1/√R of the scale)
    diagonal_spread = max(np.diagonal(c, offset=o, axis1=1, axis2=2).std(-1).max() for o in range(-40, 41))
    assert diagonal_spread < 0.05 * scale
    shifted = c[:, 7:50, 3:46] - c[:, 7 + 9:50 + 9, 3 + 9:46 + 9]
    assert np.abs(shifted).max() < 0.1 * scale
    # periodic in the lag with the set period, and asymmetric because θ ≠ 0
    assert np.abs(c[:, 20:40, 10] - c[:, 20 + period:40 + period, 10]).max() < 0.1 * scale
    assert np.abs(c[:, 30, 20] - c[:, 20, 30]).max() > 0.2 * scale
    with torch.no_grad():
        spe.phases.zero_()
    c0 = covariance(*spe.codes(64, seed=5))[0]
    assert np.abs(c0 - c0.transpose(0, 2, 1)).max() < 0.1 * np.abs(c0).max()  # θ = 0: even kernel


def conv_oracle(spe, length):
    """√(R/D) Σ_j a_j b_{j+m−n} by numpy's correlate, [H, D, L, L]."""
    a, b = spe.query_filter.detach().double().numpy(), spe.key_filter.detach().double().numpy()
    size = spe.kernel_size
    out = np.zeros(a.shape[:2] + (length, length))
    for h in range(a.shape[0]):
        for d in range(a.shape[1]):
            corr = np.correlate(b[h, d], a[h, d], mode="full")  # corr[size-1+τ] = Σ_j a_j b_{j+τ}
            for m in range(length):
                for n in range(length):
                    tau = m - n
                    out[h, d, m, n] = corr[size - 1 + tau] if abs(tau) < size else 0.0
    return math.sqrt(spe.realizations / spe.head_size) * out


def test_conv_covariance_is_the_filter_cross_correlation_and_vanishes_beyond_p():
    spe = ConvSPE(1, 3, kernel_size=8, realizations=16384, gated=False)
    spe.reset_parameters(torch.Generator().manual_seed(3))
    expected = conv_oracle(spe, 40)
    c = covariance(*spe.codes(40, seed=1))
    assert np.median(relative_error(c, expected)) < 0.08  # measured ~0.03
    lag = np.abs(np.arange(40)[:, None] - np.arange(40)[None, :])
    outside = np.abs(c[..., lag >= 8]).max() / math.sqrt(16384 / 3)
    assert outside < 0.06
    inside = np.abs(c[..., lag == 0]).mean() / math.sqrt(16384 / 3)
    assert inside > 0.2  # the positive initial taps give a clearly non-zero bump inside the support


@pytest.mark.parametrize("logit", [1.0, 30.0, -30.0])
def test_gate_mixes_positional_and_position_free_kernels(logit):
    spe = sine(d=3, realizations=65536, gated=True, seed=4)
    with torch.no_grad():
        spe.gate.fill_(logit)
    gamma = 1 / (1 + math.exp(-logit))
    expected = (1 - gamma) * sine_oracle(spe, 24) + gamma * math.sqrt(65536 / 3)
    c = covariance(*spe.gated_codes(24, seed=2))
    assert relative_error(c, expected).max() < 0.02  # measured ~0.005


def test_projected_logits_match_relative_position_logits_in_expectation():
    spe = sine(heads=2, d=8, realizations=65536, gated=True, seed=5)
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 2, 30, 8, generator=g), torch.randn(1, 2, 30, 8, generator=g)
    with torch.no_grad():
        q_hat, k_hat = spe(q, k, seed=3)
    assert q_hat.shape == (1, 2, 30, 65536)
    logits = (q_hat.double() @ k_hat.double().transpose(-1, -2)).numpy()[0]
    gamma = 1 / (1 + np.exp(-spe.gate.detach().double().numpy()))  # [H, D]
    kernel = (1 - gamma)[..., None, None] * sine_oracle(spe, 30) + gamma[..., None, None] * math.sqrt(65536 / 8)
    expected = np.einsum("hmd,hnd,hdmn->hmn", q[0].double().numpy(), k[0].double().numpy(), kernel)
    assert relative_error(logits, expected).max() < 0.05  # measured ~0.012


def test_codes_shapes_seeds_batch_sharing_and_gradients():
    spe = sine(heads=2, d=4, realizations=16, gated=True)
    q, k = torch.randn(3, 2, 10, 4), torch.randn(3, 2, 10, 4)
    a, b = spe(q, k, seed=7), spe(q, k, seed=7)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert (spe(q, k, seed=8)[0] - a[0]).abs().max() > 1e-3
    # the same codes for every example: example 2 given example 0's input reproduces it
    twin = spe(q[[0, 0]], k[[0, 0]], seed=7)
    torch.testing.assert_close(twin[0][1], a[0][0])
    conv = ConvSPE(2, 4, kernel_size=5, realizations=16)
    conv.reset_parameters(torch.Generator().manual_seed(0))
    for module in (spe, conv):
        q_hat, k_hat = module(q, k, seed=1)
        (q_hat * k_hat).sum().backward()
        for name, param in module.named_parameters():
            assert param.grad is not None and param.grad.abs().max() > 0, name
    # codes formed a window of positions at a time equal the codes of the whole length
    for module in (spe, conv):
        whole = module(q, k, seed=4)
        module.chunk = 3
        torch.testing.assert_close(module(q, k, seed=4), whole, rtol=1e-5, atol=1e-6)
        window = module.codes(4, 9, start=5)
        torch.testing.assert_close(window[0], module.codes(10, 9)[0][:, :, 5:9], rtol=1e-5, atol=1e-6)
    # sineSPE's factored projection (codes never formed) equals the projection on the codes
    spe.chunk = 1024
    assert spe.factored_is_cheaper(1) and not spe.factored_is_cheaper(64)
    spe.factored_is_cheaper = lambda batch: False
    on_codes = spe(q, k, seed=4)
    spe.factored_is_cheaper = lambda batch: True
    torch.testing.assert_close(spe(q, k, seed=4), on_codes, rtol=1e-5, atol=1e-6)
    with pytest.raises(ParameterError, match="SPE q, k shapes"):
        spe(q, k[:, :, :5])
    with pytest.raises(ParameterError, match="spe.kind"):
        SPESpec(kind="cosine")
    with pytest.raises(ParameterError, match="spe.sines.*no such key"):
        SPESpec.from_dict({"sines": 3})


def softmax_rpe(q, k, v, kernel, mask):
    """Exact softmax attention with relative-position logits Σ_d q k P̃_d(m − n)/√D under `mask`."""
    logits = torch.einsum("bhmd,bhnd,hdmn->bhmn", q, k, kernel) / math.sqrt(q.shape[-1])
    return torch.softmax(logits.masked_fill(~mask, float("-inf")), -1) @ v


def test_spe_composes_with_softmax_and_a_sparse_pattern():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(1, 2, 96, 8, generator=g, dtype=torch.float64) for _ in range(3))
    pattern = BigBirdITC(2, block_size=8, window_blocks=3, num_random_blocks=1)
    mask = pattern.dense_mask(96, seed=4)
    errors = []
    for realizations in (64, 16384):
        spe = sine(heads=2, d=8, realizations=realizations, gated=True, seed=6).double()
        gamma = torch.sigmoid(spe.gate.detach())[..., None, None]
        kernel = (1 - gamma) * torch.from_numpy(sine_oracle(spe, 96)) + gamma * math.sqrt(realizations / 8)
        expected = softmax_rpe(q, k, v, kernel / math.sqrt(realizations / 8), mask)
        with torch.no_grad():
            out = attention(q, k, v, pattern, seed=4, positional=spe.bind(2))
        assert out.shape == v.shape
        errors.append(float((out - expected).abs().max()))
    assert errors[1] < 0.1 and errors[1] < errors[0] / 3, errors


@pytest.mark.parametrize("kernel", [Performer(2, num_features=64), ReluLinear(2)])
def test_spe_feeds_linear_kernels(kernel):
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(2, 2, 40, 8, generator=g) for _ in range(3))
    spe = sine(heads=2, d=8, realizations=16, gated=True)
    with torch.no_grad():
        out = attention(q, k, v, kernel, positional=spe.bind(0), seed=3)
        q_hat, k_hat = spe(q, k, seed=0)
        q_feat, k_feat = kernel.features(q_hat, k_hat, 16 ** -0.5, 3)
    weights = q_feat @ k_feat.transpose(-1, -2)  # the kernel on the SPE-projected q̂, k̂ of size R
    torch.testing.assert_close(out, (weights @ v) / weights.sum(-1, keepdim=True), rtol=1e-4, atol=1e-5)
    assert q_feat.shape[-1] == (64 if isinstance(kernel, Performer) else 16)
    plain = attention(q, k, v, Full(2))
    assert out.shape == plain.shape


def test_modules_are_initialised_from_their_seed_when_constructed_and_need_a_noise_seed_per_call():
    a, b = SineSPE(2, 4, num_sines=3, seed=1), SineSPE(2, 4, num_sines=3, seed=1)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert not torch.equal(a.frequencies, SineSPE(2, 4, num_sines=3, seed=2).frequencies)
    # the reference initialisation: f ~ N(-4, 1) (periods of ~9-550 positions), so the sines differ
    assert a.frequencies.std() > 0.3 and abs(a.frequencies.mean() + 4) < 1.5 and a.gains.abs().min() > 0
    conv = ConvSPE(2, 4, kernel_size=8, seed=1)
    bound = 1 / math.sqrt(8 / 2)
    assert all(((t > 0) & (t < bound)).all() and t.std() > 0 for t in (conv.query_filter, conv.key_filter))
    q, k, v = (torch.randn(1, 2, 32, 4, generator=torch.Generator().manual_seed(i)) for i in range(3))
    with pytest.raises(ParameterError, match=r"spe.bind\(noise_seed\)"):
        attention(q, k, v, Full(2), positional=a)  # the module itself would draw the same codes on every call
    assert attention(q, k, v, Full(2), positional=a.bind(5)).isfinite().all()
