"""FlexAttention backend: the layout becomes a `BlockMask` (no gather); opt-in only.

The BlockMask tiles are the pattern's blocks: tiles where every query may read every key
are "full" (no per-token work), the others are "partial" and consult a `mask_mod` built
from the same rules as `Pattern.mask_from_layout` (token rule, global tokens, causality,
key padding). `flex_attention` is compiled once per process (`dynamic=False`). In torch
2.13 its backward does not run on CPU, so on CPU this backend serves inference only.
"""

from __future__ import annotations

import functools
import math
import shutil

import torch

from dnabird.attention.backends.base import Backend
from dnabird.attention.backends.gather import dense_rows
from dnabird.attention.backends.sdpa import sdpa_kernel

FULL_TILE = 128  # tile of full-attention layouts (their block size may be 1 token)
CUDA_TILE_MULTIPLE = 16  # Triton's smallest matrix tile


@functools.cache
def compiled_flex_attention():
    """`flex_attention` compiled once per process; eager FlexAttention materialises all scores."""
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
    mask_mod, only_padding = _mask_mod(call)
    kwargs = {"BLOCK_SIZE": tile, "seq_lengths": (length, length), "mask_mod": mask_mod,
              "compute_q_blocks": _needs_grad(call)}  # the transposed tables serve only the backward
    if mask_mod is None or only_padding:
        full = tiles
        if mask_mod is not None:  # tiles whose keys are all real need no per-token check
            padded = torch.nn.functional.pad(kpm, (0, n * tile - length), value=False)
            full = tiles & padded.view(kpm.shape[0], 1, 1, n, tile).all(-1)
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
        if call.q.device.type == "cuda" and not call.layout.global_rows.all() \
                and call.layout.block_size % CUDA_TILE_MULTIPLE:
            reasons.append(f"FlexAttention on CUDA needs a block size that is a multiple of {CUDA_TILE_MULTIPLE} "
                           f"(got {call.layout.block_size})")
        if call.q.device.type == "cpu":
            if _needs_grad(call):
                reasons.append("FlexAttention's backward does not run on CPU in torch 2.13: use it for "
                               "inference (under torch.no_grad()) or use backend='sdpa' to train")
            if _cpu_compiler_missing():
                reasons.append("torch.compile found no C++ compiler to build FlexAttention's CPU kernel")
        return reasons

    def run(self, call):
        q, k, v = call.q, call.k, call.v
        if not torch.is_grad_enabled():  # flex refuses CPU inputs that require grad even under no_grad
            q, k, v = q.detach(), k.detach(), v.detach()
        block_mask = build_block_mask(call)
        out = compiled_flex_attention()(q, k, v, block_mask=block_mask, scale=call.scale,
                                        kernel_options=kernel_options(call, block_mask))
        globals_ = call.global_tokens
        if call.global_qkv is not None and globals_.numel():  # separate projections for global rows
            gq, gk, gv = call.global_qkv
            rows = dense_rows(gq[:, :, globals_], gk, gv, call.key_padding_mask, globals_, call, sdpa_kernel)
            out = out.index_copy(2, globals_, rows)
        return out
