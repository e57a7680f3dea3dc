"""The interface every attention backend implements."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from dnabird.attention.core import AttentionCall


class Backend:
    """A way of computing an `AttentionCall`; stateless apart from caches."""

    name: str = ""

    def refusal_reasons(self, call: AttentionCall) -> list[str]:
        """Why this backend cannot run `call` (empty when it can)."""
        return []

    def run(self, call: AttentionCall) -> torch.Tensor:
        """Output [B, H, Lp, Dv]; rows of padded queries may hold anything (the core zeroes them)."""
        raise NotImplementedError
