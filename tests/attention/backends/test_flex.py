"""The flex backend: forward parity with an independent dense reference, its CPU refusals, and one
compiled kernel for every length (no fall-back to eager FlexAttention's L×L score matrix)."""

import subprocess
import sys

import pytest
import torch

from dnabird.attention import BigBirdETC, BigBirdITC, Full, Longformer, attention
from dnabird.errors import BackendUnavailableError

LENGTH = 333  # not a block multiple: the core pads, flex must ignore the padding


def reference(q, k, v, allowed_hll, key_padding_mask):
    """float64 SDPA over `dense_mask` and the padding; empty rows and padded queries give zeros."""
    allowed = allowed_hll[None] & key_padding_mask[:, None, None, :]
    out = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=allowed)
    return (out.nan_to_num(0.0) * key_padding_mask[:, None, :, None]).float()


def inputs(batch=2, heads=3, length=LENGTH, seed=0):
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(batch, heads, length, 16, generator=g) for _ in range(2))
    v = torch.randn(batch, heads, length, 12, generator=g)
    kpm = torch.ones(batch, length, dtype=torch.bool)
    kpm[-1, length - length // 3:] = False
    return q, k, v, kpm


def check_forward(pattern, causal=False, global_qkv=False):
    q, k, v, kpm = inputs()
    q.requires_grad_(True)  # inference on tensors that require grad (e.g. a model's eval pass) must run
    extra = {}
    if global_qkv:
        gq, gk, gv = inputs(seed=1)[:3]
        extra = {"global_qkv": (gq, gk, gv)}
    with torch.no_grad():
        out = attention(q, k, v, pattern, key_padding_mask=kpm, seed=4, causal=causal, backend="flex", **extra)
    expected = reference(q.detach(), k, v, pattern.dense_mask(LENGTH, seed=4, causal=causal), kpm)
    if global_qkv:
        rows = list(pattern.global_positions)
        expected[:, :, rows] = reference(gq, gk, gv, torch.ones(3, LENGTH, LENGTH, dtype=torch.bool), kpm)[:, :, rows]
    assert out.shape == expected.shape
    assert (out - expected).abs().max() <= 1e-5


def test_itc_forward_matches_dense_reference():
    check_forward(BigBirdITC(3, block_size=16, num_random_blocks=2))


@pytest.mark.slow
@pytest.mark.parametrize("pattern, causal", [
    (Full(3), False),
    (Full(3), True),
    (BigBirdITC(3, block_size=8, window_blocks=5, num_random_blocks=3), False),
    (BigBirdETC(3, block_size=16, num_global_tokens=32, num_random_blocks=1), False),
    (Longformer(3, window=16, dilation=(1, 2, 3), global_positions=(0, 45, 130), block_size=16), False),
    (Longformer(3, window=16, dilation=(1, 2, 3), global_positions=(0, 45, 130), block_size=16), True),
], ids=["full", "full-causal", "itc-w5", "etc", "longformer", "longformer-causal"])
def test_forward_matches_dense_reference(pattern, causal):
    check_forward(pattern, causal)


@pytest.mark.slow
def test_longformer_global_projections():
    check_forward(Longformer(3, window=16, global_positions=(0, 45, 130), block_size=16), global_qkv=True)


def test_backward_on_cpu_is_refused_with_the_reason():
    q, k, v, _ = inputs()
    q.requires_grad_(True)
    with pytest.raises(BackendUnavailableError) as err:
        attention(q, k, v, BigBirdITC(3, block_size=16), backend="flex")
    assert "backward does not run on CPU" in str(err.value)


def test_float64_on_cpu_is_refused_with_the_reason():
    q, k, v, _ = inputs()
    with torch.no_grad(), pytest.raises(BackendUnavailableError, match="not torch.float64"):
        attention(q.double(), k.double(), v.double(), BigBirdITC(3, block_size=16), backend="flex")


def test_dropout_is_refused():
    q, k, v, _ = inputs()
    with torch.no_grad(), pytest.raises(BackendUnavailableError, match="dropout"):
        attention(q, k, v, BigBirdITC(3, block_size=16), backend="flex", dropout_p=0.1)


def test_auto_never_chooses_flex():
    from dnabird.attention.backends import AUTO_ORDER

    assert all("flex" not in order for order in AUTO_ORDER.values())


LENGTHS_PROBE = """
import sys, torch
from dnabird.attention import BigBirdITC, attention
torch.set_num_threads(1)
def mapped(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith(field + ":"))
pattern = BigBirdITC(4, block_size=64, num_random_blocks=3)
g = torch.Generator().manual_seed(0)
with torch.no_grad():
    for length in range(1000, 1000 + 9 * 100, 100):  # nine new lengths: torch recompiles a static kernel 8 times
        q = torch.randn(1, 4, length, 16, generator=g)
        attention(q, q, q, pattern, backend="flex")
    q, k, v = (torch.randn(1, 4, 8192, 16, generator=g) for _ in range(3))
    before = mapped("VmSize")
    attention(q, k, v, pattern, backend="flex")
    print(mapped("VmPeak") - before)
"""


@pytest.mark.slow
def test_ten_lengths_keep_memory_linear():
    """The tenth new length still runs the compiled kernel: its peak memory stays far below L×L scores."""
    done = subprocess.run([sys.executable, "-c", LENGTHS_PROBE], capture_output=True, text=True, check=True)
    growth = int(done.stdout.strip().splitlines()[-1])
    scores = 4 * 8192 * 8192 * 4  # fp32 scores of the 4 heads
    assert growth < scores / 10, f"{growth / 2**20:.0f} MiB at L 8192 after nine other lengths"


@pytest.mark.slow
def test_a_full_kernel_cache_is_refused_not_run_eagerly(monkeypatch):
    """Past its compiled shapes the backend says so instead of running eager FlexAttention (L×L scores)."""
    from dnabird.attention.backends import flex

    monkeypatch.setattr(flex, "COMPILED_SHAPES", 1)
    pattern = BigBirdITC(3, block_size=16)
    with torch.no_grad(), pytest.raises(BackendUnavailableError, match="compiled FlexAttention for 1 shapes"):
        for length in (300, 700):  # two buckets: 512 and 1024 tokens
            q, k, v, _ = inputs(length=length)
            attention(q, k, v, pattern, backend="flex")
