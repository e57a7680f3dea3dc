"""The attention call against the dense reference (plain masked softmax over `dense_mask`)."""

import math

import pytest
import torch

from dnabird.attention import BigBirdETC, BigBirdITC, Full, Longformer, attention
from dnabird.errors import ParameterError

PATTERNS = {
    "full": Full(3),
    "itc": BigBirdITC(3, block_size=16, num_random_blocks=2),
    "itc-w5": BigBirdITC(3, block_size=8, window_blocks=5, num_random_blocks=3),
    "etc": BigBirdETC(3, block_size=16, num_global_tokens=32, num_random_blocks=1),
    "longformer": Longformer(3, window=16, dilation=(1, 2, 3), global_positions=(0, 45, 130), block_size=16),
}
CPU_BACKENDS = ["sdpa"]


def reference(q, k, v, mask_hll, key_padding_mask, scale=None):
    """Independent dense attention: explicit scores, -inf outside the mask, zero rows for padding."""
    scale = scale or q.shape[-1] ** -0.5
    allowed = mask_hll[None] & key_padding_mask[:, None, None, :]
    scores = torch.einsum("bhid,bhjd->bhij", q.double(), k.double()) * scale
    scores = scores.masked_fill(~allowed, -math.inf)
    probs = torch.softmax(scores, -1).nan_to_num(0.0)
    out = torch.einsum("bhij,bhjd->bhid", probs, v.double())
    return (out * key_padding_mask[:, None, :, None]).float()


def inputs(length, batch=2, heads=3, d_qk=16, d_v=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(batch, heads, length, d_qk, generator=g) for _ in range(2))
    v = torch.randn(batch, heads, length, d_v, generator=g)
    kpm = torch.ones(batch, length, dtype=torch.bool)
    kpm[-1, length - length // 3:] = False  # right padding in the last sequence
    return q, k, v, kpm


@pytest.mark.parametrize("length", [100, 157, 256, 333])
@pytest.mark.parametrize("name", sorted(PATTERNS))
@pytest.mark.parametrize("backend", CPU_BACKENDS + ["dense"])
def test_parity_with_dense_reference(backend, name, length):
    pattern = PATTERNS[name]
    if isinstance(pattern, Longformer) and max(pattern.global_positions) >= length:
        pattern = Longformer(3, window=16, dilation=(1, 2, 3), global_positions=(0, 45), block_size=16)
    q, k, v, kpm = inputs(length)
    out = attention(q, k, v, pattern, key_padding_mask=kpm, seed=4, backend=backend)
    expected = reference(q, k, v, pattern.dense_mask(length, seed=4), kpm)
    assert out.shape == (2, 3, length, 12)
    assert (out - expected).abs().max() <= 1e-5


@pytest.mark.parametrize("name", ["full", "longformer"])
def test_causal_parity(name):
    pattern = PATTERNS[name]
    q, k, v, kpm = inputs(200)
    out = attention(q, k, v, pattern, key_padding_mask=kpm, causal=True, backend="sdpa")
    expected = reference(q, k, v, pattern.dense_mask(200, causal=True), kpm)
    assert (out - expected).abs().max() <= 1e-5


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_gradients_match_dense_backend(name):
    pattern = PATTERNS[name]
    grads = {}
    for backend in ("sdpa", "dense"):
        q, k, v, kpm = inputs(176, seed=1)
        for t in (q, k, v):
            t.requires_grad_(True)
        out = attention(q, k, v, pattern, key_padding_mask=kpm, seed=2, backend=backend)
        (out * torch.linspace(-1, 1, out.numel()).view_as(out)).sum().backward()
        grads[backend] = (q.grad, k.grad, v.grad)
    for got, want in zip(grads["sdpa"], grads["dense"], strict=True):
        assert (got - want).abs().max() <= 1e-5


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_one_head_size_gradients_match_dense_reference(name):
    """q, k and v of one head size, where CPU SDPA runs its flash kernels (other sizes take its math path)."""
    pattern = PATTERNS[name]
    q, k, v, kpm = inputs(176, d_v=16, seed=6)
    for t in (q, k, v):
        t.requires_grad_(True)
    out = attention(q, k, v, pattern, key_padding_mask=kpm, seed=3, backend="sdpa")
    weights = torch.linspace(-1, 1, out.numel()).view_as(out)
    (out * weights).sum().backward()
    got = (q.grad, k.grad, v.grad)
    for t in (q, k, v):
        t.grad = None
    expected = reference(q, k, v, pattern.dense_mask(176, seed=3), kpm)
    (expected * weights).sum().backward()
    assert (out - expected).abs().max() <= 1e-5
    for g, want in zip(got, (q.grad, k.grad, v.grad), strict=True):
        assert (g - want).abs().max() <= 1e-4


BF16_CASES = {  # name: (pattern, causal); every pattern of PATTERNS, and Longformer causal and with a global tail
    **{name: (pattern, False) for name, pattern in PATTERNS.items()},
    "longformer-causal": (Longformer(3, window=16, global_positions=(0, 45), block_size=16), True),
    "longformer-global-tail": (Longformer(3, window=32, global_positions=(0, *range(144, 176)), block_size=16), False),
}
BF16_BOUND = 1e-2  # relative (Frobenius) error: bf16 keeps 8 bits, unit roundoff 2^-8 = 3.9e-3; measured 2-5e-3


def _relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    got, want = got.detach().double(), want.detach().double()
    return float((got - want).norm() / want.norm())


@pytest.mark.parametrize("name, padding", [*((name, "tail") for name in sorted(BF16_CASES)),
                                           ("longformer-causal", "head")])
def test_bf16_outputs_and_gradients_stay_within_bf16_roundoff_of_the_fp64_reference(name, padding):
    """bf16 q, k, v through the gather backend against the dense reference in fp64 on the same rounded inputs.
    Tail padding: padded keys; head padding with causal attention: rows that see no key at all."""
    pattern, causal = BF16_CASES[name]
    q, k, v, kpm = inputs(176, d_v=16, seed=5)
    if padding == "head":
        kpm[:] = True
        kpm[0, :40] = False
    low = [t.bfloat16().requires_grad_(True) for t in (q, k, v)]
    exact = [t.detach().double().requires_grad_(True) for t in low]
    weights = torch.randn(2, 3, 176, 16, generator=torch.Generator().manual_seed(7))
    out = attention(*low, pattern, key_padding_mask=kpm, seed=2, causal=causal, backend="sdpa")
    assert out.dtype == torch.bfloat16
    (out.float() * weights).sum().backward()
    expected = reference(*exact, pattern.dense_mask(176, seed=2, causal=causal), kpm)
    (expected * weights).sum().backward()
    assert _relative_error(out, expected) <= BF16_BOUND
    for got, want in zip(low, exact, strict=True):
        assert _relative_error(got.grad, want.grad) <= BF16_BOUND


@pytest.mark.parametrize("name", sorted(set(PATTERNS) - {"full"}))
def test_groups_cut_into_chunks_match_dense_reference(monkeypatch, name):
    """A tiny byte budget cuts every group into chunks of a few query blocks: outputs and gradients hold."""
    from dnabird.attention.backends import sdpa

    monkeypatch.setattr(sdpa, "CPU_CHUNK_BYTES", 40_000)  # 2-6 query blocks per kernel call here
    pattern = PATTERNS[name]
    q, k, v, kpm = inputs(333, seed=3)
    for t in (q, k, v):
        t.requires_grad_(True)
    out = attention(q, k, v, pattern, key_padding_mask=kpm, seed=5, backend="sdpa")
    weights = torch.linspace(-1, 1, out.numel()).view_as(out)
    (out * weights).sum().backward()
    got = (q.grad, k.grad, v.grad)
    for t in (q, k, v):
        t.grad = None
    expected = reference(q, k, v, pattern.dense_mask(333, seed=5), kpm)
    assert (out - expected).abs().max() <= 1e-5
    (expected * weights).sum().backward()
    for g, want in zip(got, (q.grad, k.grad, v.grad), strict=True):
        assert (g - want).abs().max() <= 1e-4


def test_padding_keys_never_receive_weight():
    pattern = PATTERNS["itc"]
    q, k, v, kpm = inputs(300)
    out = attention(q, k, v, pattern, key_padding_mask=kpm, seed=1)
    k2, v2 = k.clone(), v.clone()
    k2[~kpm[:, None, :].expand(-1, 3, -1)] = 1e4
    v2[~kpm[:, None, :].expand(-1, 3, -1)] = -1e4
    assert torch.equal(out, attention(q, k2, v2, pattern, key_padding_mask=kpm, seed=1))
    assert torch.all(out[-1, :, kpm[-1].logical_not()] == 0)


def test_rows_without_any_allowed_key_are_zero_not_nan():
    q, k, v, kpm = inputs(64, batch=1)
    kpm[:] = False
    kpm[0, 40:] = True  # causal rows 0..39 see only padding
    pattern = Longformer(3, window=8, block_size=16)
    out = attention(q, k, v, pattern, key_padding_mask=kpm, causal=True)
    assert torch.isfinite(out).all()
    assert torch.all(out[0, :, 40:42].abs().sum(-1) > 0)
    full = attention(q, k, v, Full(3), key_padding_mask=kpm, causal=True)
    assert torch.isfinite(full).all() and torch.all(full[0, :, :40] == 0)


def test_longformer_global_projections_drive_the_global_rows():
    pattern = Longformer(2, window=8, global_positions=(3, 50), block_size=16)
    q, k, v, kpm = inputs(96, heads=2)
    gq, gk, gv = (t + 0.5 for t in (q, k, v))
    out = attention(q, k, v, pattern, key_padding_mask=kpm, global_qkv=(gq, gk, gv))
    mask = pattern.dense_mask(96)
    expected = reference(q, k, v, mask, kpm)
    expected[:, :, [3, 50]] = reference(gq, gk, gv, mask, kpm)[:, :, [3, 50]]
    assert (out - expected).abs().max() <= 1e-5
    dense = attention(q, k, v, pattern, key_padding_mask=kpm, global_qkv=(gq, gk, gv), backend="dense")
    assert (dense - expected).abs().max() <= 1e-5


def test_positional_hook_and_custom_scale():
    pattern = PATTERNS["itc"]
    q, k, v, kpm = inputs(128)

    def hook(q, k):
        return q * 2, torch.cat([k, k], -1)[..., :16]

    out = attention(q, k, v, pattern, key_padding_mask=kpm, positional=hook, scale=0.1, seed=3)
    expected = reference(q * 2, k, v, pattern.dense_mask(128, seed=3), kpm, scale=0.1)
    assert (out - expected).abs().max() <= 1e-5


def test_random_blocks_are_shared_across_the_batch_and_change_with_seed():
    pattern = BigBirdITC(3, block_size=16, num_random_blocks=2)
    q, k, v, _ = inputs(400, batch=1)
    both = attention(torch.cat([q, q]), torch.cat([k, k]), torch.cat([v, v]), pattern, seed=9)
    assert torch.equal(both[0], both[1])
    assert not torch.allclose(attention(q, k, v, pattern, seed=9), attention(q, k, v, pattern, seed=10))


def test_unknown_backend_fails_clearly():
    q, k, v, _ = inputs(64)
    with pytest.raises(ParameterError, match="backend"):
        attention(q, k, v, PATTERNS["itc"], backend="magic")


@pytest.mark.parametrize("call, name", [
    (lambda q: attention(q, q, q, BigBirdITC(2)), "num_heads"),
    (lambda q: attention(q, q, q[:, :, :5], Full(3)), "shapes"),
    (lambda q: attention(q, q, q, Full(3), key_padding_mask=torch.ones(2, 3)), "key_padding_mask"),
    (lambda q: attention(q, q, q, BigBirdITC(3), causal=True), "causal"),
    (lambda q: attention(q, q, q, Full(3), dropout_p=1.5), "dropout_p"),
])
def test_bad_arguments_are_named(call, name):
    q, *_ = inputs(64)
    with pytest.raises(ParameterError, match=name):
        call(q)


def test_dropout_keeps_expectation_and_is_off_at_zero():
    pattern = PATTERNS["itc"]
    q, k, v, _ = inputs(128, batch=1)
    clean = attention(q, k, v, pattern)
    torch.manual_seed(0)
    noisy = torch.stack([attention(q, k, v, pattern, dropout_p=0.3) for _ in range(300)]).mean(0)
    assert not torch.equal(attention(q, k, v, pattern, dropout_p=0.3), clean)
    assert (noisy - clean).abs().mean() < 0.05


PER_EXAMPLE_GLOBALS = [(0, 5, 6, 7, 90), (0,), (0, 33, 34, 140)]  # example 3's 140 is padding (length 150)


def alone_reference(q, k, v, kpm, gqkv, positions, causal):
    """Each example attended alone with a pattern whose shared global positions are that example's, by the
    dense reference; global rows from the global projections."""
    rows = []
    for index, own in enumerate(positions):
        pattern = Longformer(3, window=10, dilation=(1, 2, 1), global_positions=own, block_size=16)
        mask = pattern.dense_mask(q.shape[2], causal=causal)
        one = [t[index:index + 1] for t in (q, k, v)]
        out = reference(*one, mask, kpm[index:index + 1])
        out[:, :, list(own)] = reference(*(t[index:index + 1] for t in gqkv), mask,
                                         kpm[index:index + 1])[:, :, list(own)]
        rows.append(out)
    return torch.cat(rows)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("backend", CPU_BACKENDS + ["dense"])
def test_per_example_global_tokens_equal_a_batch_of_one(backend, causal):
    q, k, v, kpm = inputs(150, batch=3)
    gqkv = tuple(t * 0.7 + 0.3 for t in (q, k, v))
    global_mask = torch.zeros(3, 150, dtype=torch.bool)
    for index, own in enumerate(PER_EXAMPLE_GLOBALS):
        global_mask[index, [p for p in own if p != 0]] = True
    pattern = Longformer(3, window=10, dilation=(1, 2, 1), global_positions=(0,), block_size=16)  # 0: shared
    out = attention(q, k, v, pattern, key_padding_mask=kpm, causal=causal, global_qkv=gqkv,
                    global_mask=global_mask, backend=backend)
    expected = alone_reference(q, k, v, kpm, gqkv, PER_EXAMPLE_GLOBALS, causal)
    assert (out - expected).abs().max() <= 1e-5
    # the same tokens global in every example take the shared path and agree with it
    same = torch.zeros(3, 150, dtype=torch.bool)
    same[:, [5, 90]] = True
    shared = Longformer(3, window=10, dilation=(1, 2, 1), global_positions=(0, 5, 90), block_size=16)
    assert (attention(q, k, v, pattern, key_padding_mask=kpm, global_qkv=gqkv, global_mask=same, backend=backend)
            - attention(q, k, v, shared, key_padding_mask=kpm, global_qkv=gqkv, backend=backend)).abs().max() <= 1e-6


def test_per_example_global_gradients_match_dense_backend():
    global_mask = torch.zeros(2, 176, dtype=torch.bool)
    global_mask[0, [3, 4, 100]] = True
    global_mask[1, [50]] = True
    pattern = Longformer(3, window=12, dilation=(1, 1, 2), block_size=16)
    grads = {}
    for backend in ("sdpa", "dense"):
        q, k, v, kpm = inputs(176, seed=3)
        gqkv = tuple((t * 0.5).requires_grad_(True) for t in (q, k, v))
        for t in (q, k, v):
            t.requires_grad_(True)
        out = attention(q, k, v, pattern, key_padding_mask=kpm, global_qkv=gqkv, global_mask=global_mask,
                        backend=backend)
        (out * torch.linspace(-1, 1, out.numel()).view_as(out)).sum().backward()
        grads[backend] = [t.grad for t in (q, k, v, *gqkv)]
    for got, want in zip(grads["sdpa"], grads["dense"], strict=True):
        assert (got - want).abs().max() <= 1e-5


def test_per_example_globals_are_refused_where_they_do_not_apply():
    q, k, v, _ = inputs(64)
    with pytest.raises(ParameterError, match="global_mask"):
        attention(q, k, v, PATTERNS["itc"], global_mask=torch.ones(2, 64, dtype=torch.bool))
    longformer = Longformer(3, window=16, block_size=16)
    with pytest.raises(ParameterError, match=r"global_mask.*\(2, 64\)"):
        attention(q, k, v, longformer, global_mask=torch.ones(2, 60, dtype=torch.bool))
    from dnabird.errors import BackendUnavailableError

    global_mask = torch.zeros(2, 64, dtype=torch.bool)
    global_mask[0, 3] = True
    with pytest.raises(BackendUnavailableError, match="per-example global tokens"), torch.no_grad():
        attention(q, k, v, longformer, global_mask=global_mask, backend="flex")


def separate_queries_reference(q, k, v, key_padding_mask, offset, causal):
    """Dense attention of query rows at key positions offset, offset + 1, … (explicit scores, float64)."""
    allowed = key_padding_mask[:, None, None, :].expand(-1, 1, q.shape[2], -1)
    if causal:
        allowed = allowed & (torch.arange(k.shape[2])[None, :] <= torch.arange(q.shape[2])[:, None] + offset)
    scores = torch.einsum("bhid,bhjd->bhij", q.double(), k.double()) * q.shape[-1] ** -0.5
    probs = torch.softmax(scores.masked_fill(~allowed, -math.inf), -1).nan_to_num(0.0)
    return torch.einsum("bhij,bhjd->bhid", probs, v.double()).float()


@pytest.mark.parametrize("backend", CPU_BACKENDS + ["dense"])
@pytest.mark.parametrize("queries", [1, 7, 300])
def test_cross_attention_queries_of_another_length(backend, queries):
    """Cross-attention: q of any length over padded keys; query rows are never zeroed by the key mask."""
    _, k, v, kpm = inputs(150)
    q = torch.randn(2, 3, queries, 16, generator=torch.Generator().manual_seed(9))
    out = attention(q, k, v, Full(3), key_padding_mask=kpm, query_offset=0, backend=backend)
    expected = separate_queries_reference(q, k, v, kpm, 0, causal=False)
    assert out.shape == (2, 3, queries, 12)
    assert (out - expected).abs().max() <= 1e-5
    assert bool((out[1, :, -10:].abs().sum(-1) > 0).all())  # rows past the keys' padding are real rows


@pytest.mark.parametrize("backend", CPU_BACKENDS + ["dense"])
def test_cached_decoding_steps_equal_causal_self_attention(backend):
    """A decoder's steps against cached keys (query_offset = cache length) give the rows of causal
    self-attention over the whole sequence, one, then several rows at a time."""
    q, k, v, _ = inputs(40)
    whole = attention(q, k, v, Full(3), causal=True, backend=backend)
    steps, start = [], 0
    for size in (1, 1, 5, 13, 20):
        end = start + size
        steps.append(attention(q[:, :, start:end], k[:, :, :end], v[:, :, :end], Full(3), causal=True,
                               query_offset=start, backend=backend))
        start = end
    torch.testing.assert_close(torch.cat(steps, dim=2), whole, rtol=0, atol=1e-5)
    expected = separate_queries_reference(q[:, :, 20:], k, v, torch.ones(2, 40, dtype=torch.bool), 20, causal=True)
    torch.testing.assert_close(steps[-1], expected, rtol=0, atol=1e-5)


def test_separate_queries_are_refused_where_they_do_not_apply():
    q, k, v, kpm = inputs(64)
    with pytest.raises(ParameterError, match="query_offset"):
        attention(q[:, :, :3], k, v, BigBirdITC(3, block_size=16), query_offset=0)
    with pytest.raises(ParameterError, match="query_offset"):
        attention(q[:, :, :8], k[:, :, :4], v[:, :, :4], Full(3), causal=True, query_offset=0)
    with pytest.raises(ParameterError, match="key_padding_mask"):
        attention(q[:, :, :3], k, v, Full(3), key_padding_mask=kpm[:, :3], query_offset=0)
    with pytest.raises(ParameterError, match="q, k, v shapes"):
        attention(q[:, :, :3], k, v, Full(3))  # without query_offset q and k are one sequence
