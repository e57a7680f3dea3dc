"""Linear attention kernels: frozen specs passed where a pattern goes, `attention(q, k, v, Performer(...))`.

Both replace softmax(q·kᵀ) by a feature map φ: out_m = Σ_n φ(q_m)·φ(k_n) v_n / Σ_n φ(q_m)·φ(k_n), computed
as φ(q) (φ(k)ᵀ v) in time and memory linear in the length.

- `Performer` (FAVOR+, Choromanski et al. 2021): positive orthogonal random features for the softmax kernel,
  φ(x) = m^(-1/2) (exp(wᵢ·x − ‖x‖²/2 − c) + ε) on inputs scaled by √scale per side, so that
  E[φ(q)·φ(k)] ∝ exp(scale · q·k). The stabiliser c (row max for queries, max over the sequence for keys)
  cancels in the normalisation. Features are drawn per head from the call's `seed` alone: a pure function
  of (base seed, layer, step) in the encoder; `redraw` sets how many training steps share one draw.
- `ReluLinear` (the LRA "linear ReLU" transformer): φ(x) = ReLU(x) + ε, deterministic, no scaling.

Causal calls use prefix sums over chunks (exact within a chunk, a running φ(k)ᵀv state across chunks).
Key padding masks zero the padded keys' features. Sparse patterns do not apply: the kernel itself is the
attention's whole "pattern" (every key, or every earlier key when causal).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from dnabird.attention.patterns import BlockLayout, Pattern
from dnabird.errors import ParameterError, check_int, reject

CAUSAL_CHUNK = 64
FEATURE_SALT = 0x5EA7  # the random features' stream (`seeded_generator`)


class LinearKernel(Pattern):
    """Base of the linear kernels: attends to every key (a full layout), computed through a feature map."""

    block_size = 1

    def supports_causal(self) -> bool:
        return True

    def layout(self, num_blocks, seed=0, random_blocks=None) -> BlockLayout:
        if random_blocks is not None:
            raise ParameterError("random_blocks", "tensor", f"None for {type(self).__name__} (no random blocks)")
        return BlockLayout.full(self.num_heads, num_blocks)

    def features(self, q: torch.Tensor, k: torch.Tensor, scale: float, seed: int,
                 key_padding_mask: torch.Tensor | None = None):
        """(φ(q), φ(k)), each [B, H, L, F]; `key_padding_mask` (bool [B, L]) keeps padded keys out of any
        statistic of the keys."""
        raise NotImplementedError


def orthogonal_gaussian(num_features: int, dim: int, generator: torch.Generator) -> torch.Tensor:
    """[num_features, dim]: blocks of `dim` orthogonal directions (QR of Gaussian blocks), each row rescaled
    to the norm of an independent Gaussian vector, so every row is marginally N(0, I) (FAVOR+'s ORF)."""
    blocks = []
    for _ in range(math.ceil(num_features / dim)):
        gaussian = torch.randn(dim, dim, generator=generator, dtype=torch.float64)
        orthonormal, upper = torch.linalg.qr(gaussian)
        orthonormal = orthonormal * torch.sign(torch.diagonal(upper))  # Haar-distributed only with signs fixed
        blocks.append(orthonormal.T)
    directions = torch.cat(blocks)[:num_features]
    norms = torch.randn(num_features, dim, generator=generator, dtype=torch.float64).norm(dim=1)
    return (directions * norms[:, None]).float()


def seeded_generator(seed: int, tag: int, salt: int) -> torch.Generator:
    """A CPU generator that is a pure function of (call seed, tag, salt): a Performer head's features (salt
    `FEATURE_SALT`, tag = head) or an SPE noise block (`dnabird.attention.spe.NOISE_SALT`)."""
    state = np.random.SeedSequence([int(seed) & (2**63 - 1), tag, salt]).generate_state(1)[0]
    return torch.Generator().manual_seed(int(state))


@dataclass(frozen=True)
class Performer(LinearKernel):
    """FAVOR+ softmax attention with `num_features` positive orthogonal random features per head.

    redraw: training steps per feature draw (1: every step, LRA's setting; k: steps k·i … k·i + k − 1 share a
        draw; 0: one fixed draw for the whole run). Evaluation always uses the fixed evaluation seed.
    orthogonal: False draws i.i.d. Gaussian features instead (for comparison).
    epsilon: FAVOR's stabiliser added to every feature (LRA: 1e-6).
    """

    num_heads: int = 1
    num_features: int = 256
    redraw: int = 1
    orthogonal: bool = True
    epsilon: float = 1e-6
    type_name = "performer"

    def __post_init__(self):
        check_int("num_heads", self.num_heads)
        check_int("num_features", self.num_features)
        check_int("redraw", self.redraw, 0, "an integer ≥ 0 (training steps per draw; 0: never)")
        reject(not isinstance(self.orthogonal, bool), "orthogonal", self.orthogonal, "true or false")
        if isinstance(self.epsilon, bool) or not isinstance(self.epsilon, (int, float)) or self.epsilon < 0:
            raise ParameterError("epsilon", self.epsilon, "a number ≥ 0")

    def seed_step(self, step: int) -> int:
        return step // self.redraw if self.redraw else 0

    def projection(self, dim: int, seed: int, device=None) -> torch.Tensor:
        """[H, F, dim]: every head's random features, from (seed, head) alone."""
        generators = [seeded_generator(seed, head, FEATURE_SALT) for head in range(self.num_heads)]
        return torch.stack([orthogonal_gaussian(self.num_features, dim, g) if self.orthogonal
                            else torch.randn(self.num_features, dim, generator=g) for g in generators]).to(device)

    def features(self, q, k, scale, seed, key_padding_mask=None):
        w = self.projection(q.shape[-1], seed, q.device).to(q.dtype)  # [H, F, d]
        root = scale ** 0.5
        q_proj, k_proj = (torch.einsum("bhld,hfd->bhlf", x, w) - 0.5 * x.pow(2).sum(-1, keepdim=True)
                          for x in (q * root, k * root))
        q_proj = q_proj - q_proj.amax(-1, keepdim=True).detach()
        real = k_proj if key_padding_mask is None else \
            k_proj.masked_fill(~key_padding_mask[:, None, :, None], float("-inf"))
        k_proj = k_proj - real.amax(dim=(-2, -1), keepdim=True).detach().clamp_min(-1e30)
        norm = self.num_features ** -0.5
        return norm * (q_proj.exp() + self.epsilon), norm * (k_proj.exp() + self.epsilon)


@dataclass(frozen=True)
class ReluLinear(LinearKernel):
    """Linear attention with φ(x) = ReLU(x) + epsilon (LRA's generalized ReLU attention)."""

    num_heads: int = 1
    epsilon: float = 1e-3
    type_name = "relu_linear"

    def __post_init__(self):
        check_int("num_heads", self.num_heads)
        if isinstance(self.epsilon, bool) or not isinstance(self.epsilon, (int, float)) or not self.epsilon > 0:
            raise ParameterError("epsilon", self.epsilon, "a positive number")

    def features(self, q, k, scale, seed, key_padding_mask=None):
        return torch.relu(q) + self.epsilon, torch.relu(k) + self.epsilon


def _causal(q_feat: torch.Tensor, k_feat: torch.Tensor, v: torch.Tensor, chunk: int) -> torch.Tensor:
    """out_m = Σ_{n≤m} (φq_m·φk_n) v_n / Σ_{n≤m} φq_m·φk_n, chunk by chunk with a running state."""
    batch, heads, length, _ = q_feat.shape
    state = q_feat.new_zeros(batch, heads, q_feat.shape[-1], v.shape[-1])  # Σ φk vᵀ of earlier chunks
    total = q_feat.new_zeros(batch, heads, q_feat.shape[-1])  # Σ φk of earlier chunks
    outs = []
    for start in range(0, length, chunk):
        qc, kc, vc = (t[:, :, start:start + chunk] for t in (q_feat, k_feat, v))
        scores = (qc @ kc.transpose(-1, -2)).tril()  # [B, H, c, c]
        numerator = qc @ state + scores @ vc
        denominator = qc @ total[..., None] + scores.sum(-1, keepdim=True)
        outs.append(numerator / denominator.clamp_min(torch.finfo(q_feat.dtype).tiny))
        state = state + kc.transpose(-1, -2) @ vc
        total = total + kc.sum(2)
    return torch.cat(outs, dim=2)


def linear_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, kernel: LinearKernel, *,
                     key_padding_mask: torch.Tensor | None, causal: bool, scale: float, seed: int) -> torch.Tensor:
    """Normalised linear attention [B, H, L, d_v] of `kernel`; rows without a real key give zeros."""
    q_feat, k_feat = kernel.features(q, k, scale, seed, key_padding_mask)
    if key_padding_mask is not None:
        k_feat = k_feat * key_padding_mask[:, None, :, None].to(k_feat.dtype)
    if causal:
        return _causal(q_feat, k_feat, v, CAUSAL_CHUNK)
    context = k_feat.transpose(-1, -2) @ v  # [B, H, F, d_v]
    denominator = q_feat @ k_feat.sum(2)[..., None]  # [B, H, L, 1]
    return (q_feat @ context) / denominator.clamp_min(torch.finfo(q_feat.dtype).tiny)


KERNELS = {cls.type_name: cls for cls in (Performer, ReluLinear)}
