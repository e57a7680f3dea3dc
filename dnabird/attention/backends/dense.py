"""The dense reference: a masked softmax over the full score matrix built from `dense_mask`.

Quadratic in memory and time; used by tests and small plots, never chosen by "auto".
"""

from __future__ import annotations

import torch

from dnabird.attention.backends.base import Backend


def masked_softmax_attention(q, k, v, mask, scale, dropout_p):
    """softmax(q kᵀ · scale) v over allowed keys; rows without an allowed key give zeros."""
    scores = (q @ k.transpose(-1, -2)) * scale
    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    probs = torch.softmax(scores, dim=-1) * mask
    if dropout_p:
        probs = torch.nn.functional.dropout(probs, dropout_p)
    return probs @ v


class DenseBackend(Backend):
    name = "dense"

    def run(self, call):
        rows = call.global_tokens
        if call.query_offset is not None:  # query rows apart from the keys (Full pattern): keys, causality only
            mask = torch.ones(1, 1, call.q.shape[2], call.k.shape[2], dtype=torch.bool, device=call.q.device)
            if call.causal:
                mask = mask & (torch.arange(call.k.shape[2], device=mask.device) <= call.query_positions()[:, None])
        else:
            per_example = call.global_token_mask is not None
            is_global = torch.zeros(call.q.shape[0] if per_example else 1, call.padded_length, dtype=torch.bool,
                                    device=call.q.device)
            is_global[:, rows] = call.global_token_mask if per_example else True
            mask = call.pattern.mask_from_layout(call.layout, call.causal, is_global)  # [B|1, H, Lp, Lp]
        if call.key_padding_mask is not None:
            mask = mask & call.key_padding_mask[:, None, None, :]
        out = masked_softmax_attention(call.q, call.k, call.v, mask, call.scale, call.dropout_p)
        if call.global_qkv is not None and rows.numel():
            gq, gk, gv = call.global_qkv
            out_global = masked_softmax_attention(gq[:, :, rows], gk, gv, mask[:, :, rows], call.scale,
                                                  call.dropout_p)
            if call.global_token_mask is not None:  # the global projections serve global rows only
                out_global = torch.where(call.global_token_mask[:, None, :, None], out_global, out[:, :, rows])
            out = out.index_copy(2, rows, out_global)
        return out
