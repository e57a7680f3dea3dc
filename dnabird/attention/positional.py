"""Relative position schemes applied inside the attention call, as `positional` hooks `(q, k) -> (q, k)`.

`Rotary` (RoFormer, Su et al. 2021): each pair of channels (i, i + d/2) of q and k at position m is
rotated by the angle m · base^(-2i/d), so a query–key score depends on their contents and on the offset
between them, never on where they sit. Channels are paired by halves, as in GPT-NeoX and Llama.
"""

from __future__ import annotations

import torch

from dnabird.errors import ParameterError, reject


class Rotary:
    """Rotary position embedding for q, k of shape [..., L, d] (d even); positions start at `offset`."""

    def __init__(self, head_size: int, *, base: float = 10000.0, offset: int = 0):
        reject(head_size % 2, "head_size", head_size, "an even number (rotary pairs channels)")
        reject(base <= 1.0, "rotary base", base, "a number above 1")
        self.head_size, self.base, self.offset = head_size, base, offset
        self._cached: tuple = (None, None, None)  # (length, device, dtype), cos, sin

    def _cos_sin(self, length: int, device, dtype) -> tuple[torch.Tensor, torch.Tensor]:
        key = (length, device, dtype)
        if self._cached[0] != key:
            half = self.head_size // 2
            frequencies = self.base ** (-torch.arange(half, dtype=torch.float64) / half)  # [d/2]
            positions = torch.arange(self.offset, self.offset + length, dtype=torch.float64)
            angles = torch.outer(positions, frequencies)  # [L, d/2], in float64: exact at long lengths
            self._cached = (key, angles.cos().to(device, dtype), angles.sin().to(device, dtype))
        return self._cached[1], self._cached[2]

    def rotate(self, x: torch.Tensor) -> torch.Tensor:
        """x [..., L, d] with each channel pair turned by its position's angles."""
        if x.shape[-1] != self.head_size:
            raise ParameterError("head size", x.shape[-1], f"{self.head_size}, the rotary head size")
        cos, sin = self._cos_sin(x.shape[-2], x.device, x.dtype)
        first, second = x.chunk(2, dim=-1)
        return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)

    def __call__(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.rotate(q), self.rotate(k)
