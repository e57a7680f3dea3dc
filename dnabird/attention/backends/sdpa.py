"""The default backend: blockify + gather with `torch.nn.functional.scaled_dot_product_attention`."""

from __future__ import annotations

import torch.nn.functional as F

from dnabird.attention.backends.base import Backend
from dnabird.attention.backends.gather import run_gathered

# CPU only: chunks of gathered keys under glibc's largest recycled block (32 MiB) reuse heap pages
CPU_CHUNK_BYTES = 30 * 2**20


def sdpa_kernel(q, k, v, mask, scale, dropout_p):
    """Dense attention on gathered blocks; a bool mask is kept 4-D (3-D disables fast CPU kernels)."""
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, scale=scale)


class SdpaBackend(Backend):
    name = "sdpa"

    def run(self, call):
        return run_gathered(call, sdpa_kernel, CPU_CHUNK_BYTES if call.q.device.type == "cpu" else None)
