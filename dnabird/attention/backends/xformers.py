"""xformers backend: blockify + gather with `xformers.ops.memory_efficient_attention`; CUDA only.

xformers is the optional `gpu` extra. It is imported lazily, only for CUDA calls, with its
warning about extensions it cannot load silenced; it has no CPU kernel, so calls on other
devices are refused with the reason (never a silent fallback).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import warnings

import torch

from dnabird.attention.backends.base import Backend
from dnabird.attention.backends.gather import run_gathered

BIAS_ALIGNMENT = 8  # xformers reads tensor biases in 16-byte rows: pad the key axis to 8 (16-bit) elements


@functools.cache
def xformers_installed() -> bool:
    return importlib.util.find_spec("xformers") is not None


@functools.cache
def import_xformers_ops():
    """`xformers.ops`, imported once and quietly (on CPU-only torch it warns about its extensions)."""
    logger = logging.getLogger("xformers")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import xformers.ops
    finally:
        logger.setLevel(level)
    return xformers.ops


def additive_bias(mask: torch.Tensor, shape: tuple[int, int, int, int], dtype: torch.dtype) -> torch.Tensor:
    """bool mask [B|1, N|1, Lq, Lk] → float bias expanded to `shape` (0 allowed, -inf not), stored with
    the key axis padded to `BIAS_ALIGNMENT` as xformers requires."""
    length = mask.shape[-1]
    aligned = -(-length // BIAS_ALIGNMENT) * BIAS_ALIGNMENT
    bias = torch.zeros(*mask.shape[:-2], shape[2], aligned, dtype=dtype, device=mask.device)[..., :length]
    bias.masked_fill_(~mask, float("-inf"))
    return bias.expand(shape)


def xformers_kernel(q, k, v, mask, scale, dropout_p):
    """Dense attention on gathered blocks in xformers' [batch, length, heads, dim] layout."""
    ops = import_xformers_ops()
    bias = None if mask is None else additive_bias(mask, (*q.shape[:3], k.shape[2]), q.dtype)
    out = ops.memory_efficient_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                         attn_bias=bias, p=dropout_p, scale=scale)
    return out.transpose(1, 2)


class XformersBackend(Backend):
    name = "xformers"

    def refusal_reasons(self, call):
        reasons = []
        device = call.q.device.type
        if device != "cuda":
            reasons.append(f"xformers.ops.memory_efficient_attention has no {device} kernel (CUDA only)")
        if not xformers_installed():
            reasons.append("xformers is not installed (install the 'gpu' extra: pip install 'dnabird[gpu]')")
        elif device == "cuda":
            try:
                import_xformers_ops()
            except Exception as err:  # noqa: BLE001 - a broken install is a reason, whatever it raises
                reasons.append(f"xformers does not import: {type(err).__name__}: {err}")
        return reasons

    def run(self, call):
        return run_gathered(call, xformers_kernel)
