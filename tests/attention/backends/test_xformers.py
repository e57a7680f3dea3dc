"""The xformers backend: refusals on CPU, lazy import, and its adapter to xformers' layout and bias rules."""

import subprocess
import sys
import types

import pytest
import torch

from dnabird.attention import BigBirdITC, attention
from dnabird.attention.backends import xformers as backend
from dnabird.errors import BackendUnavailableError


def test_forcing_xformers_on_cpu_lists_why():
    q = torch.randn(1, 2, 64, 8)
    with pytest.raises(BackendUnavailableError) as err:
        attention(q, q, q, BigBirdITC(2, block_size=8), backend="xformers")
    assert "no cpu kernel (CUDA only)" in str(err.value)
    if not backend.xformers_installed():
        assert any("not installed" in reason for reason in err.value.reasons)


def test_importing_dnabird_does_not_import_xformers():
    code = ("import sys, torch; from dnabird.attention import attention, Full; q = torch.randn(1, 1, 8, 4); "
            "attention(q, q, q, Full(1)); print('xformers' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def reference_memory_efficient_attention(query, key, value, attn_bias=None, p=0.0, scale=None):
    """xformers' documented contract ([batch, length, heads, dim] inputs, additive bias [B, H, Mq, Mk]
    whose rows are 16-byte aligned), checked as xformers checks it, then computed explicitly."""
    assert query.stride(-1) == key.stride(-1) == value.stride(-1) == 1
    B, Mq, H, _ = query.shape
    if attn_bias is not None:
        assert attn_bias.shape == (B, H, Mq, key.shape[1]) and attn_bias.dtype == query.dtype
        assert attn_bias.stride(-1) == 1 and all(s % 8 == 0 for s in attn_bias.stride()[:-1])
    scores = torch.einsum("bqhd,bkhd->bhqk", query.double(), key.double()) * scale
    if attn_bias is not None:
        scores = scores + attn_bias.double()
    return torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), value.double()).to(query.dtype)


@pytest.mark.parametrize("mask_shape", [None, (2, 5, 16, 37), (1, 5, 16, 37), (2, 1, 1, 37)])
def test_kernel_adapter_matches_sdpa(monkeypatch, mask_shape):
    fake = types.SimpleNamespace(memory_efficient_attention=reference_memory_efficient_attention)
    monkeypatch.setattr(backend, "import_xformers_ops", lambda: fake)
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 5, 16, 8, generator=g)
    k = torch.randn(2, 5, 37, 8, generator=g)
    v = torch.randn(2, 5, 37, 6, generator=g)
    mask = None
    if mask_shape is not None:
        mask = torch.rand(mask_shape, generator=g) < 0.6
        mask[..., 0] = True  # the gather path guarantees every row one allowed key
    got = backend.xformers_kernel(q, k, v, mask, 0.3, 0.0)
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.3)
    assert got.shape == want.shape
    assert (got - want).abs().max() <= 1e-5


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available() or not backend.xformers_installed(),
                    reason="needs CUDA and xformers")
def test_cuda_parity_with_dense_backend():
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(2, 4, 1000, 64, device="cuda", generator=g) for _ in range(3))
    kpm = torch.ones(2, 1000, dtype=torch.bool, device="cuda")
    kpm[1, 700:] = False
    pattern = BigBirdITC(4)
    got = attention(q, k, v, pattern, key_padding_mask=kpm, seed=3, backend="xformers")
    want = attention(q, k, v, pattern, key_padding_mask=kpm, seed=3, backend="dense")
    assert (got - want).abs().max() <= 1e-4


@pytest.mark.skipif(not backend.xformers_installed(), reason="xformers is not installed")
def test_import_is_quiet():
    code = ("import logging; logging.basicConfig(); "
            "from dnabird.attention.backends.xformers import import_xformers_ops; import_xformers_ops()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "XFORMERS" not in done.stderr
