"""Blockify and gather (BigBird Appendix D): the exact sparse computation shared by gather backends.

Query blocks are grouped by how many key blocks they read; for each group the key/value
blocks are gathered into one dense tensor and one batched dense attention call runs on it.
Global rows (blocks that attend to everything, and Longformer's global tokens) take one
dense call against all keys. Memory is linear in length: no L×L matrix is ever built.
The dense kernel is a parameter, so SDPA and xformers share this one implementation.

A group may be cut into chunks of query blocks whose gathered keys stay under a byte budget. On CPU
this matters: glibc's malloc returns blocks above 32 MiB to the kernel on free, so every call would
touch (page-fault and zero) hundreds of MB of fresh pages for the gathered K/V and their gradients;
chunks under that size are recycled from the heap instead (ITC f+b at 4096: ~99k → ~4k faults per call).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from dnabird.attention.core import AttentionCall

# kernel(q [B, N, Lq, Dqk], k [B, N, Lk, Dqk], v [B, N, Lk, Dv], mask bool [B|1, N, Lq, Lk] | None,
#        scale, dropout_p) -> [B, N, Lq, Dv]
Kernel = Callable[..., torch.Tensor]


@dataclass(frozen=True)
class Group:
    """Query blocks (flat index head·nb + block) that read the same number of key blocks."""

    rows: torch.Tensor  # long [n]
    key_blocks: torch.Tensor  # long [n, c], flat index head·nb + block
    token_mask: torch.Tensor | None  # bool [n, b, b·c + G] pattern rule incl. global-token keys
    local_extras: torch.Tensor | None = None  # bool [n, b, G]: global-token keys under the local rule, used
    # in examples where that token is not global (per-example global tokens only)

# Gathered keys are ordered token-major, (token within block, key block): position t·c + slot. Order within a
# softmax is irrelevant, and this order lets the gathered tensors sit in the [B, keys, rows, D] memory layout
# the CPU SDPA kernel works in, so neither the gather nor its gradient needs a transposing copy.


def plan(call: AttentionCall) -> tuple[torch.Tensor, list[Group]]:
    """The global query blocks (long [g]) and the groups of sparse query blocks of `call`'s layout."""
    layout, pattern = call.layout, call.pattern
    H, nb, _ = layout.key_blocks.shape
    b = layout.block_size
    counts = (layout.key_blocks >= 0).sum(-1)  # [H, nb]
    sparse = ~layout.global_rows[None, :].expand(H, nb)
    globals_ = call.global_tokens.cpu()
    is_global_key = torch.zeros(nb * b, dtype=torch.bool)
    is_global_key[globals_] = True
    groups = []
    for c in counts[sparse].unique().tolist():
        heads, blocks = ((counts == c) & sparse).nonzero(as_tuple=True)
        key_blocks = layout.key_blocks[heads, blocks, :c]  # [n, c]
        query_pos = blocks[:, None] * b + torch.arange(b)  # [n, b]
        key_pos = (key_blocks[:, None, :] * b + torch.arange(b)[None, :, None]).flatten(1)  # [n, b·c]
        rule = pattern.token_rule(layout, query_pos, key_pos, heads, call.causal)
        token_mask = None
        if rule is not None or globals_.numel():
            if rule is None:
                rule = torch.ones(len(heads), b, b * c, dtype=torch.bool)
            local = rule
            rule = rule & ~is_global_key[key_pos][:, None, :]  # global keys come once, as extras
            extras = torch.ones(len(heads), b, globals_.numel(), dtype=torch.bool)
            if call.causal:
                extras = globals_[None, None, :] <= query_pos[:, :, None]
            token_mask = torch.cat([rule, extras], dim=2)
        local_extras = None
        if call.global_token_mask is not None:  # where a global token is local: the rule at its key position
            present = key_blocks[:, None, :] == (globals_ // b)[None, :, None]  # [n, G, c]
            index = (globals_ % b)[None, :] * c + present.to(torch.int8).argmax(-1)  # [n, G], token-major
            local_extras = local.gather(2, index[:, None, :].expand(-1, b, -1)) & present.any(-1)[:, None, :]
        groups.append(Group(heads * nb + blocks, heads[:, None] * nb + key_blocks, token_mask, local_extras))
    return layout.global_rows.nonzero().flatten(), groups


def dense_rows(q_rows, k, v, key_padding_mask, query_pos, call, kernel):
    """Rows that attend to every key (subject to padding and causality): one dense call."""
    mask = None if key_padding_mask is None else key_padding_mask[:, None, None, :]
    if call.causal:
        causal = torch.arange(k.shape[2], device=k.device)[None, :] <= query_pos[:, None]
        mask = causal[None, None] if mask is None else mask & causal
    return _masked_kernel(kernel, q_rows, k, v, mask, call)


def _masked_kernel(kernel, q, k, v, mask, call):
    """Run `kernel`; rows whose mask allows no key return zeros instead of NaN."""
    if mask is None:
        return kernel(q, k, v, None, call.scale, call.dropout_p)
    has_key = mask.any(-1, keepdim=True)
    if bool(has_key.all()):
        return kernel(q, k, v, mask, call.scale, call.dropout_p)
    out = kernel(q, k, v, mask | ~has_key, call.scale, call.dropout_p)
    return out * has_key.to(out.dtype)


def _token_major(x: torch.Tensor, num_blocks: int, block: int) -> torch.Tensor:
    """[B, H, nb·b, D] → [B, b, H·nb, D]: the position within a block outermost, then (head, block)."""
    B, H, _, D = x.shape
    return x.view(B, H, num_blocks, block, D).permute(0, 3, 1, 2, 4).reshape(B, block, H * num_blocks, D)


def _chunks(groups: list[Group], bytes_per_key_block: int, max_chunk_bytes: int | None) -> list[Group]:
    """`groups` cut into runs of query blocks whose gathered keys take at most `max_chunk_bytes`."""
    if max_chunk_bytes is None:
        return groups
    chunked = []
    for group in groups:
        n = len(group.rows)
        cap = max(1, max_chunk_bytes // (bytes_per_key_block * group.key_blocks.shape[1]))
        pieces = -(-n // cap)
        size = -(-n // pieces)  # even chunks: 700 rows under a 240 cap → 3 × 234, not 240 + 240 + 220
        fields = (group.rows, group.key_blocks, group.token_mask, group.local_extras)
        chunked += [Group(*(None if x is None else x[s:s + size] for x in fields)) for s in range(0, n, size)]
    return chunked


def run_gathered(call: AttentionCall, kernel: Kernel, max_chunk_bytes: int | None = None) -> torch.Tensor:
    """Compute `call` exactly with gathered key/value blocks and `kernel`; returns [B, H, Lp, Dv].

    `max_chunk_bytes` caps the gathered keys of one kernel call (None: one call per group).
    """
    q, k, v, kpm = call.q, call.k, call.v, call.key_padding_mask
    B, H, Lp, Dv = v.shape
    layout = call.layout
    nb, b, device = layout.num_blocks, layout.block_size, q.device
    if bool(layout.global_rows.all()):  # full attention (short sequences, the Full pattern)
        return dense_rows(q, k, v, kpm, call.query_positions(), call, kernel)
    global_blocks, groups = plan(call)
    q_t, k_t, v_t = (_token_major(x, nb, b) for x in (q, k, v))  # [B, b, H·nb, D]
    globals_ = call.global_tokens
    outputs, rows = [], []
    bytes_per_key_block = B * b * max(k.shape[-1], Dv) * k.element_size()
    for group in _chunks(groups, bytes_per_key_block, max_chunk_bytes):
        n, c = group.key_blocks.shape
        index = group.key_blocks.t().to(device).flatten()  # slot-major: [c·n]; gathered k, v: [B, n, b·c, D]
        k_g, v_g = (x.index_select(2, index).view(B, b * c, n, -1).transpose(1, 2) for x in (k_t, v_t))
        if globals_.numel():  # every global token's key and value after the gathered ones
            heads = (group.rows // nb).to(device)
            k_g, v_g = (torch.cat([g, x[:, :, globals_].index_select(1, heads)], 2) for g, x in ((k_g, k), (v_g, v)))
        mask = None if group.token_mask is None else group.token_mask.to(device)[None]  # [1, n, b, b·c + G]
        if group.local_extras is not None:  # per example: a global-token key is global, or local
            g = globals_.numel()
            extras = torch.where(call.global_token_mask[:, None, None, :], mask[..., -g:],
                                 group.local_extras.to(device)[None])  # [B, n, b, G]
            mask = torch.cat([mask[..., :-g].expand(B, -1, -1, -1), extras], dim=3)
        if kpm is not None:
            key_real = kpm.view(B, nb, b)[:, group.key_blocks % nb].transpose(2, 3).reshape(B, n, b * c)
            key_real = torch.cat([key_real, kpm[:, globals_].unsqueeze(1).expand(B, n, -1)], dim=2)
            mask = key_real[:, :, None, :] if mask is None else mask & key_real[:, :, None, :]
        q_g = q_t.index_select(2, group.rows.to(device)).transpose(1, 2)  # [B, n, b, Dqk]
        outputs.append(_masked_kernel(kernel, q_g, k_g, v_g, mask, call))
        rows.append(group.rows)
    if global_blocks.numel():
        g = global_blocks.numel()
        query_pos = (global_blocks[:, None] * b + torch.arange(b)).flatten().to(device)
        out_g = dense_rows(q[:, :, query_pos], k, v, kpm, query_pos, call, kernel)  # [B, H, g·b, Dv]
        outputs.append(out_g.reshape(B, H * g, b, Dv))
        rows.append((torch.arange(H)[:, None] * nb + global_blocks[None, :]).flatten())
    order = torch.cat(rows).argsort().to(device)
    out = torch.cat(outputs, dim=1).index_select(1, order).view(B, H, Lp, Dv)
    if globals_.numel():
        out = global_token_rows(out, call, *(call.global_qkv or (q, k, v)), kernel)
    return out


def global_token_rows(out, call, q, k, v, kernel):
    """`out` [B, H, Lp, Dv] with the rows of `call`'s global tokens recomputed from (q, k, v) against every key
    (one dense call); examples where a token is not global (`global_token_mask`) keep its local row."""
    globals_ = call.global_tokens
    out_tokens = dense_rows(q[:, :, globals_], k, v, call.key_padding_mask, globals_, call, kernel)
    if call.global_token_mask is not None:
        out_tokens = torch.where(call.global_token_mask[:, None, :, None], out_tokens, out[:, :, globals_])
    return out.index_copy(2, globals_, out_tokens)
