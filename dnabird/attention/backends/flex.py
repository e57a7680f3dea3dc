"""FlexAttention backend: the layout becomes a `BlockMask` (no gather); opt-in only.

The BlockMask tiles are the pattern's blocks: tiles where every query may read every key
are "full" (no per-token work), the others are "partial" and consult a `mask_mod` built
from the same rules as `Pattern.mask_from_layout` (token rule, global tokens, causality,
key padding). `flex_attention` is compiled once per shape, so a call runs at a bucket length
(the layout's blocks rounded up to a power of two; the extra blocks are empty, and skipped):
compiled per length, torch would give up recompiling after 8 shapes and fall back to eager
FlexAttention, which builds the full L×L score matrix. Where even the buckets exhaust its cache
the call fails with `BackendUnavailableError` instead. (A dynamic length would need one kernel,
but torch 2.13's CPU template miscompiles mask_mods that read buffers of a dynamic size.)
In torch 2.13 its backward does not run on CPU, so on CPU this backend serves inference only,
in the dtypes of its CPU kernel (float32, float16, bfloat16).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import shutil

import torch
import torch.nn.functional as F

from dnabird.attention.backends.base import Backend
from dnabird.attention.backends.gather import global_token_rows
from dnabird.attention.backends.sdpa import sdpa_kernel
from dnabird.attention.patterns import BlockLayout
from dnabird.errors import BackendUnavailableError

FULL_TILE = 128  # tile of full-attention layouts (their block size may be 1 token)
CUDA_TILE_MULTIPLE = 16  # Triton's smallest matrix tile
CPU_DTYPES = (torch.float32, torch.float16, torch.bfloat16)  # FlexAttention's CPU kernel (torch 2.13)
COMPILED_SHAPES = 64  # kernels kept per process (torch's default, 8, is soon spent by buckets x batch sizes)


@functools.cache
def compiled_flex_attention():
    """`flex_attention` compiled (once per shape; eager FlexAttention materialises all scores)."""
    from torch.nn.attention.flex_attention import flex_attention

    return torch.compile(flex_attention, dynamic=False)


@functools.cache
def _cpu_compiler_missing() -> bool:
    """torch.compile on CPU writes C++; without a compiler it cannot build the kernel."""
    try:
        from torch._inductor.cpp_builder import get_cpp_compiler

        return shutil.which(get_cpp_compiler()) is None
    except Exception:  # noqa: BLE001 - any failure to find one means there is none to use
        return True


def bucket_length(call) -> int:
    """The length `call` runs at: its tiles (blocks, or `FULL_TILE` for full layouts) rounded up to a
    power of two, so a process meets few shapes."""
    tile = FULL_TILE if bool(call.layout.global_rows.all()) else call.layout.block_size
    tiles = -(-call.padded_length // tile)
    return tile * (1 << (tiles - 1).bit_length())


def to_bucket(call):
    """`call` padded to `bucket_length(call)`: padding keys (masked), and for sparse layouts empty
    query and key blocks (no key block is read by or from them)."""
    length, bucket = call.padded_length, bucket_length(call)
    if bucket == length:
        return call
    extra = bucket - length
    kpm = call.key_padding_mask
    if kpm is None:
        kpm = torch.ones(call.q.shape[0], length, dtype=torch.bool, device=call.q.device)
    layout = call.layout
    if not bool(layout.global_rows.all()):
        blocks = extra // layout.block_size
        layout = BlockLayout(layout.block_size, layout.num_blocks + blocks,
                             F.pad(layout.global_rows, (0, blocks), value=False),
                             F.pad(layout.key_blocks, (0, 0, 0, blocks), value=-1))

    def pad(x):
        return F.pad(x, (0, 0, 0, extra))

    return dataclasses.replace(call, q=pad(call.q), k=pad(call.k), v=pad(call.v), layout=layout,
                               key_padding_mask=F.pad(kpm, (0, extra), value=False),
                               global_qkv=None if call.global_qkv is None else tuple(map(pad, call.global_qkv)))


def _needs_grad(call) -> bool:
    tensors = (call.q, call.k, call.v) + tuple(call.global_qkv or ())
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


def block_tables(tiles: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """bool [..., nq, nk] tiles → counts int32 [..., nq] and key-tile indices int32 [..., nq, nk]
    (the selected tiles first), the two tables `BlockMask.from_kv_blocks` takes."""
    counts = tiles.sum(-1, dtype=torch.int32)
    indices = tiles.to(torch.int8).argsort(dim=-1, descending=True, stable=True).to(torch.int32)
    return counts, indices


def _token_rule_table(call):
    """The pattern's token rule inside the layout's key blocks, as lookup tables for a mask_mod
    (FlexAttention's mask_mod must stay pointwise): bool [H, nb, K, b, b] and the slot of key block
    j among query block i's key blocks, long [H, nb, nb] (-1 = not a key block); None without a rule."""
    layout = call.layout
    H, nb, K = layout.key_blocks.shape
    b = layout.block_size
    heads = torch.arange(H).repeat_interleave(nb)  # [H·nb]
    query_pos = torch.arange(nb * b).view(nb, b).repeat(H, 1)  # [H·nb, b]
    key_blocks = layout.key_blocks.clamp(min=0).view(H * nb, K)
    key_pos = (key_blocks[:, :, None] * b + torch.arange(b)).flatten(1)  # [H·nb, K·b]
    rule = call.pattern.token_rule(layout, query_pos, key_pos, heads, False)
    if rule is None:
        return None
    rule = rule.view(H, nb, b, K, b).transpose(2, 3).contiguous()  # [H, nb, K, b (query), b (key)]
    slot = torch.full((H, nb, nb + 1), -1, dtype=torch.long)
    listed = torch.where(layout.key_blocks < 0, nb, layout.key_blocks)
    slot.scatter_(2, listed, torch.arange(K).expand(H, nb, K).contiguous())
    return rule, slot[:, :, :nb]


def _mask_mod(call):
    """mask_mod(b, h, q, kv) → bool equal to the dense mask of `call` and its key padding inside
    the tiles, or None when whole tiles decide; and whether key padding is the only token-level rule."""
    layout, kpm, device = call.layout, call.key_padding_mask, call.q.device
    globals_ = call.global_tokens
    full_layout = bool(layout.global_rows.all())
    table = None if full_layout else _token_rule_table(call)
    checks = []
    if not full_layout and (table is not None or globals_.numel()):
        block_mask = layout.block_mask().to(device)  # [H, nb, nb]: tiles alone may be wider (global tokens)
        global_rows = layout.global_rows.to(device)
        b = layout.block_size
        rule, slot = (None, None) if table is None else (t.to(device) for t in table)

        def in_layout(batch, head, q_idx, kv_idx):
            q_block, kv_block = q_idx // b, kv_idx // b
            if rule is None:
                return block_mask[head, q_block, kv_block]
            position = slot[head, q_block, kv_block]
            inside = rule[head, q_block, position.clamp(min=0), q_idx % b, kv_idx % b]
            return global_rows[q_block] | ((position >= 0) & inside)

        checks.append(in_layout)
    if globals_.numel():
        is_global = torch.zeros(call.padded_length, dtype=torch.bool, device=device)
        is_global[globals_] = True
        local = checks.pop() if checks else None

        def global_or_local(batch, head, q_idx, kv_idx):
            allowed = is_global[q_idx] | is_global[kv_idx]
            return allowed if local is None else allowed | local(batch, head, q_idx, kv_idx)

        checks.append(global_or_local)
    if call.causal:
        checks.append(lambda batch, head, q_idx, kv_idx: kv_idx <= q_idx)
    only_padding = not checks
    if kpm is not None:
        checks.append(lambda batch, head, q_idx, kv_idx: kpm[batch, kv_idx])
    if not checks:
        return None, False

    def mask_mod(batch, head, q_idx, kv_idx):
        allowed = checks[0](batch, head, q_idx, kv_idx)
        for check in checks[1:]:
            allowed = allowed & check(batch, head, q_idx, kv_idx)
        return allowed

    return mask_mod, only_padding


def kernel_options(call, block_mask) -> dict | None:
    """On CUDA, Triton tiles that divide the BlockMask's tiles (the default 128 rows would not divide 64)."""
    if call.q.device.type != "cuda":
        return None
    tile = math.gcd(block_mask.BLOCK_SIZE[0], 64)
    return {"BLOCK_M": tile, "BLOCK_N": tile}


def build_block_mask(call):
    """The `BlockMask` of `call`: the layout's key blocks (plus global-token tiles) as flex tiles."""
    from torch.nn.attention.flex_attention import BlockMask

    layout, kpm, length = call.layout, call.key_padding_mask, call.padded_length
    if bool(layout.global_rows.all()):
        tile = FULL_TILE
        n = -(-length // tile)
        tiles = torch.ones(1, 1, n, n, dtype=torch.bool)
    else:
        tile, n = layout.block_size, layout.num_blocks
        tiles = layout.block_mask()[None].clone()  # [1, H, nb, nb]
        global_tiles = call.global_tokens.cpu() // tile
        tiles[:, :, global_tiles, :] = True
        tiles[:, :, :, global_tiles] = True
    if call.causal:
        tiles &= torch.ones(n, n, dtype=torch.bool).tril()
    tiles = tiles.to(call.q.device)
    if kpm is not None:  # skip tiles of padding only (padded query rows come back as zeros anyway)
        padded = F.pad(kpm, (0, n * tile - length), value=False).view(kpm.shape[0], n, tile)
        real = padded.any(-1)
        tiles = tiles & real[:, None, :, None] & real[:, None, None, :]
    mask_mod, only_padding = _mask_mod(call)
    kwargs = {"BLOCK_SIZE": tile, "seq_lengths": (length, length), "mask_mod": mask_mod,
              "compute_q_blocks": _needs_grad(call)}  # the transposed tables serve only the backward
    if mask_mod is None or only_padding:
        full = tiles
        if mask_mod is not None:  # tiles whose keys are all real need no per-token check
            full = tiles & padded.all(-1)[:, None, None, :]
        counts, indices = block_tables(tiles & ~full)
        full_counts, full_indices = block_tables(full)
        return BlockMask.from_kv_blocks(counts, indices, full_counts, full_indices, **kwargs)
    counts, indices = block_tables(tiles)
    return BlockMask.from_kv_blocks(counts, indices, **kwargs)


class FlexBackend(Backend):
    name = "flex"

    def refusal_reasons(self, call):
        reasons = []
        if call.dropout_p:
            reasons.append(f"FlexAttention has no attention dropout (dropout_p={call.dropout_p})")
        if call.global_token_mask is not None:
            reasons.append("per-example global tokens (global_mask) are not implemented for FlexAttention")
        if call.query_offset is not None:
            reasons.append("query rows apart from the keys (query_offset: cross-attention, cached decoding) are "
                           "not implemented for FlexAttention")
        if call.q.device.type == "cuda" and not call.layout.global_rows.all() \
                and call.layout.block_size % CUDA_TILE_MULTIPLE:
            reasons.append(f"FlexAttention on CUDA needs a block size that is a multiple of {CUDA_TILE_MULTIPLE} "
                           f"(got {call.layout.block_size})")
        if call.q.device.type == "cpu":
            if call.q.dtype not in CPU_DTYPES:
                reasons.append(f"FlexAttention's CPU kernel takes {', '.join(map(str, CPU_DTYPES))}, "
                               f"not {call.q.dtype}")
            if _needs_grad(call):
                reasons.append("FlexAttention's backward does not run on CPU in torch 2.13: use it for "
                               "inference (under torch.no_grad()) or use backend='sdpa' to train")
            if _cpu_compiler_missing():
                reasons.append("torch.compile found no C++ compiler to build FlexAttention's CPU kernel")
        return reasons

    def run(self, call):
        length = call.padded_length
        call = to_bucket(call)
        q, k, v = call.q, call.k, call.v
        if not torch.is_grad_enabled():  # flex refuses CPU inputs that require grad even under no_grad
            q, k, v = q.detach(), k.detach(), v.detach()
        block_mask = build_block_mask(call)
        try:
            with torch._dynamo.config.patch(recompile_limit=COMPILED_SHAPES, fail_on_recompile_limit_hit=True):
                out = compiled_flex_attention()(q, k, v, block_mask=block_mask, scale=call.scale,
                                                kernel_options=kernel_options(call, block_mask))
        except torch._dynamo.exc.FailOnRecompileLimitHit:
            raise BackendUnavailableError("flex", [
                f"this process compiled FlexAttention for {COMPILED_SHAPES} shapes already; eager FlexAttention "
                "would build the L×L score matrix (use backend='sdpa', or fewer batch sizes and lengths)"]) from None
        if call.global_qkv is not None and call.global_tokens.numel():  # separate projections for global rows
            out = global_token_rows(out, call, *call.global_qkv, sdpa_kernel)
        return out[:, :, :length]
