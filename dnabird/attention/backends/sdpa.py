"""The default backend: blockify + gather with `torch.nn.functional.scaled_dot_product_attention`.

On CPU, when gradients are needed, the gathered blocks run torch's flash forward and a backward of
our own (`RecomputedBackward`): it recomputes the probabilities from the saved log-sum-exp and
forms the gradients with five batched GEMMs over whole chunks of query blocks, where torch's
flash backward works through small tiles. Both are exact (the parity tests hold either way);
`CPU_BACKWARD` says which one runs.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from dnabird.attention.backends.base import Backend
from dnabird.attention.backends.gather import run_gathered

# CPU only: chunks of gathered keys under glibc's largest recycled block (32 MiB) reuse heap pages
CPU_CHUNK_BYTES = 30 * 2**20
CPU_BACKWARD = "gemm"  # "gemm" (RecomputedBackward) or "flash" (torch's); see benchmarks/README.md
GEMM_DTYPES = (torch.float32, torch.float64)  # lower precision keeps torch's backward (fp32 accumulation)


class RecomputedBackward(torch.autograd.Function):
    """softmax(q kᵀ · scale) v with torch's CPU flash forward; the backward recomputes the probabilities
    P = exp(q kᵀ · scale − lse) and takes dV = Pᵀ dO, dS = P ⊙ (dO Vᵀ − rowsum(dO ⊙ O)),
    dQ = dS K · scale, dK = dSᵀ Q · scale as batched matrix products."""

    @staticmethod
    def forward(ctx, q, k, v, mask, scale):
        bias = None if mask is None else torch.zeros(mask.shape, dtype=q.dtype).masked_fill_(~mask, float("-inf"))
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=bias, scale=scale)
        ctx.save_for_backward(q, k, v, out, lse, mask)
        ctx.scale = scale
        return out

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, out, lse, mask = ctx.saved_tensors
        probs = torch.matmul(q, k.transpose(-1, -2)).mul_(ctx.scale).sub_(lse.unsqueeze(-1)).exp_()
        if mask is not None:
            probs.masked_fill_(~mask, 0.0)
        grad_v = torch.matmul(probs.transpose(-1, -2), grad_out)
        grad_scores = torch.matmul(grad_out, v.transpose(-1, -2))
        grad_scores.sub_((grad_out * out).sum(-1, keepdim=True)).mul_(probs)
        del probs
        grad_q = torch.matmul(grad_scores, k).mul_(ctx.scale)
        grad_k = torch.matmul(grad_scores.transpose(-1, -2), q).mul_(ctx.scale)
        return grad_q, grad_k, grad_v, None, None


def sdpa_kernel(q, k, v, mask, scale, dropout_p):
    """Dense attention on gathered blocks; a bool mask is kept 4-D (3-D disables fast CPU kernels)."""
    if (CPU_BACKWARD == "gemm" and q.device.type == "cpu" and q.dtype in GEMM_DTYPES and not dropout_p
            and q.shape[-1] == v.shape[-1]  # torch's flash forward needs one head size
            and torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad)):
        return RecomputedBackward.apply(q, k, v, mask, scale)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, scale=scale)


class SdpaBackend(Backend):
    name = "sdpa"

    def run(self, call):
        return run_gathered(call, sdpa_kernel, CPU_CHUNK_BYTES if call.q.device.type == "cpu" else None)
