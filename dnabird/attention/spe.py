"""Stochastic Positional Encoding (SPE; Liutkus et al., ICML 2021) as a `positional` hook `(q, k) → (q̂, k̂)`.

SPE draws R realizations of random positional codes Q̄, K̄ ([H, D, L, R] per head h and q/k dimension d)
whose cross-covariance is a learnable relative-position kernel P_d(m − n), and projects

    q̂[b, h, m, r] = Σ_d q[b, h, m, d] Q̄[h, d, m, r]        (k̂ likewise with K̄)

so that E[q̂_m · k̂_n] = √(R/D) Σ_d q_{m,d} k_{n,d} P_d(m − n): relative-position logits in expectation, with
any kernel downstream (softmax with a sparse pattern, Performer, ReLU linear). The core's default scale
1/√(q̂ size) = 1/√R turns that into Σ_d q k P / √D, the usual softmax temperature.

- `SineSPE`: K sinusoids per (h, d) with frequency ν = σ(f)/2, gain λ = softplus(g) and query-side phase θ;
  Q̄(m, r) = (R·D)^(−1/4) Σ_k λ_k [cos(2πν_k m + θ_k) z_{2k,r} + sin(2πν_k m + θ_k) z_{2k+1,r}], K̄ with
  phase 2πν_k n, z ~ N(0, 1/(2K)) shared by both ⇒ P_d(τ) = (1/2K) Σ_k λ_k² cos(2πν_k τ + θ_k).
- `ConvSPE`: white noise w filtered by learnable query/key filters a, b of length P (FFT cross-correlation):
  Q̄(m, r) = (R·D)^(−1/4) Σ_j a_j w(m + P + j, r) ⇒ P_d(τ) = Σ_j a_j b_{j+τ}, exactly 0 for |τ| ≥ P.
- Gate (optional) per (h, d), γ = σ(g): Q̄ ← √(1−γ) Q̄ + √γ ε and K̄ likewise with one noise ε[h, d, r] ~
  N(0, 1)·(D·R)^(−1/4) shared by all positions ⇒ kernel (1 − γ) P_d + γ (a position-free share).

Randomness: two explicit seeds, never the global RNG (docs/spe-listops.md): the parameters' (`seed`,
`reset_parameters(generator)`) and each call's noise seed (`bind`), drawn on the CPU. Codes have no batch
dimension, so every example of a batch sees the same codes.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from dnabird.attention.linear import seeded_generator
from dnabird.errors import ParameterError, check_int, reject

SPE_KINDS = ("sine", "conv")
NOISE_CHUNK = 128  # convSPE noise: positions per generator
CODE_CHUNK = 1024  # positions whose codes are formed (and projected) at once
NOISE_SALT = 0x59E  # the noise's stream (`seeded_generator`; tags: 0 sine z, 1 gate, 16 + i conv block i)


class _SPE(nn.Module):
    """Shared part of the SPE hooks: gate, projection and seed binding."""

    def __init__(self, num_heads: int, head_size: int, realizations: int, gated: bool, **sizes: int):
        """`sizes`: the kind's own positive settings (num_sines, kernel_size), kept as attributes."""
        super().__init__()
        check_int("num_heads", num_heads)
        check_int("head_size", head_size)
        self.num_heads, self.head_size = num_heads, head_size
        for name, value in (("realizations", realizations), *sizes.items()):
            check_int(f"spe.{name}", value)
            setattr(self, name, value)
        self.gate = nn.Parameter(torch.zeros(num_heads, head_size)) if gated else None
        self.chunk = CODE_CHUNK

    @property
    def code_scale(self) -> float:
        return (self.realizations * self.head_size) ** -0.25

    def codes(self, length: int, seed: int, device=None, start: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """Ungated codes (Q̄, K̄) of positions start … start + length − 1, each [H, D, length, R]; a position's
        code does not depend on the window it is computed in."""
        raise NotImplementedError

    def gate_noise(self, seed: int, device=None) -> torch.Tensor:
        """ε [H, D, R], N(0, 1)·(D·R)^(−1/4), shared by queries, keys, positions and the batch."""
        noise = torch.randn(self.num_heads, self.head_size, self.realizations, dtype=torch.float64,
                            generator=seeded_generator(seed, 1, NOISE_SALT))
        return (noise * self.code_scale).to(device, next(self.parameters()).dtype)

    def gated_codes(self, length: int, seed: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
        """The codes with the gate applied (the ones `forward` projects onto), each [H, D, length, R]."""
        q_bar, k_bar = self.codes(length, seed, device)
        if self.gate is None:
            return q_bar, k_bar
        gamma = torch.sigmoid(self.gate)[:, :, None, None]
        eps = self.gate_noise(seed, device)[:, :, None, :]
        return (1 - gamma).sqrt() * q_bar + gamma.sqrt() * eps, (1 - gamma).sqrt() * k_bar + gamma.sqrt() * eps

    def forward(self, q: torch.Tensor, k: torch.Tensor, seed: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """q, k [B, H, L, D] → q̂, k̂ [B, H, L, R], with the codes of noise seed `seed`."""
        if q.shape != k.shape or q.dim() != 4 or q.shape[1] != self.num_heads or q.shape[3] != self.head_size:
            raise ParameterError("SPE q, k shapes", (tuple(q.shape), tuple(k.shape)),
                                 f"equal shapes [batch, {self.num_heads} heads, length, {self.head_size}]")
        if seed is None:
            raise ParameterError("seed", seed, "this call's noise seed: pass `spe.bind(noise_seed)` as the "
                                 "positional hook, not the module itself (it would draw the same codes every call)")
        length = q.shape[2]
        if self.gate is not None:
            gamma = torch.sigmoid(self.gate).to(q.dtype)[None, :, None, :]  # [1, H, 1, D]
            eps = self.gate_noise(seed, q.device).to(q.dtype)  # [H, D, R]
            q_free, k_free = (q * gamma.sqrt()) @ eps, (k * gamma.sqrt()) @ eps  # the position-free share
            q, k = q * (1 - gamma).sqrt(), k * (1 - gamma).sqrt()
        chunks = []  # (q̂, k̂) of each window of positions: bounded memory
        for start in range(0, length, self.chunk):
            count = min(self.chunk, length - start)
            window = slice(start, start + count)
            if self.factored_is_cheaper(q.shape[0]):
                chunks.append(self.project_factored(q[:, :, window], k[:, :, window], seed, start))
            else:
                bars = self.codes(count, seed, q.device, start)  # Σ_d x[b, h, m, d] bar[h, d, m, r]: never x ⊙ bar
                chunks.append(tuple(torch.einsum("bhmd,hdmr->bhmr", x[:, :, window], bar.to(x.dtype))
                                    for x, bar in zip((q, k), bars, strict=True)))
        q_pos, k_pos = (torch.cat(parts, 2) for parts in zip(*chunks, strict=True))
        if self.gate is None:
            return q_pos, k_pos
        return q_pos + q_free, k_pos + k_free

    def factored_is_cheaper(self, batch: int) -> bool:
        """Whether `project_factored` beats forming the codes (shared by the batch) and projecting on them."""
        return False

    def project_factored(self, q, k, seed, start):
        raise NotImplementedError

    def bind(self, seed: int):
        """The hook `(q, k) → (q̂, k̂)` with this call's noise seed, for `attention(..., positional=...)`."""
        return lambda q, k: self(q, k, seed=seed)


class SineSPE(_SPE):
    """sineSPE with `num_sines` sinusoids per (head, dimension) and `realizations` R; parameters initialised
    from `seed`."""

    def __init__(self, num_heads: int, head_size: int, *, num_sines: int = 10, realizations: int = 64,
                 gated: bool = True, seed: int = 0):
        super().__init__(num_heads, head_size, realizations, gated, num_sines=num_sines)
        shape = (num_heads, head_size, num_sines)
        self.frequencies = nn.Parameter(torch.empty(shape))  # f: ν = σ(f)/2 cycles per position
        self.phases = nn.Parameter(torch.empty(shape))  # θ, on the query side
        self.gains = nn.Parameter(torch.empty(shape))  # g: λ = softplus(g)
        self.reset_parameters(torch.Generator().manual_seed(seed))

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator) -> None:
        """The reference initialisation: f ~ N(0,1) − 4 (periods ~9–550 positions), θ ~ N(0,1), g ~ N(0,1)
        rescaled by 2/√‖g‖ over the sines, gate logits ~ N(0,1)."""
        shape = self.frequencies.shape
        self.frequencies.copy_(torch.randn(shape, generator=generator) - 4)
        self.phases.copy_(torch.randn(shape, generator=generator))
        gains = torch.randn(shape, generator=generator)
        self.gains.copy_(gains * 2 / gains.norm(dim=-1, keepdim=True).sqrt())
        if self.gate is not None:
            self.gate.copy_(torch.randn(self.gate.shape, generator=generator))

    def kernel(self, lags: torch.Tensor) -> torch.Tensor:
        """The analytic kernel P_d(τ) [H, D, len(lags)] before gating and without the √(R/D) factor."""
        nu = torch.sigmoid(self.frequencies) / 2
        gain = F.softplus(self.gains)
        angle = 2 * math.pi * nu[..., None] * lags.to(nu.dtype) + self.phases[..., None]  # [H, D, K, T]
        return (gain[..., None] ** 2 * torch.cos(angle)).sum(2) / (2 * self.num_sines)

    def _waves(self, length: int, start: int, device) -> tuple[torch.Tensor, torch.Tensor]:
        """λ·[cos, sin] of the query and key phases, each [H, D, L, 2K] (the code scale included)."""
        positions = torch.arange(start, start + length, device=device, dtype=self.frequencies.dtype)
        nu = torch.sigmoid(self.frequencies) / 2
        gain = F.softplus(self.gains) * self.code_scale  # [H, D, K]
        angle_k = 2 * math.pi * nu[:, :, None, :] * positions[:, None]  # [H, D, L, K]
        angle_q = angle_k + self.phases[:, :, None, :]
        return tuple((torch.stack([a.cos(), a.sin()], -1) * gain[:, :, None, :, None]).flatten(-2)
                     for a in (angle_q, angle_k))

    def _z(self, seed: int, device) -> torch.Tensor:
        """[H, D, 2K, R] ~ N(0, 1/(2K)), shared by queries and keys."""
        z = torch.randn(self.num_heads, self.head_size, 2 * self.num_sines, self.realizations, dtype=torch.float64,
                        generator=seeded_generator(seed, 0, NOISE_SALT))
        return (z / math.sqrt(2 * self.num_sines)).to(device, self.frequencies.dtype)

    def factored_is_cheaper(self, batch: int) -> bool:
        # codes: D·2K·R per position and head, shared by the batch, then B·D·R (a small matmul per position);
        # factored: B·D·2K·R as one large matmul per head (counted at a third of the cost: far better kernels)
        return batch * self.head_size * 2 * self.num_sines * self.realizations / 3 < \
            self.head_size * self.realizations * (2 * self.num_sines + batch)

    def project_factored(self, q, k, seed, start):
        """Σ_{d,k,c} (x_d · λ_dk trig_c(phase)) z[d,k,c,:] for x = q, k: the codes are never formed."""
        waves_q, waves_k = self._waves(q.shape[2], start, q.device)  # [H, D, L, 2K]
        z = self._z(seed, q.device).to(q.dtype).flatten(1, 2)  # [H, D·2K, R]
        out = []
        for x, waves in ((q, waves_q), (k, waves_k)):
            mixed = (x[..., None] * waves.to(x.dtype).transpose(1, 2)[None]).flatten(-2)  # [B, H, L, D·2K]
            out.append(mixed @ z[None])
        return out[0], out[1]

    def codes(self, length, seed, device=None, start=0):
        z = self._z(seed, device)
        waves_q, waves_k = self._waves(length, start, device)
        return waves_q @ z, waves_k @ z  # [H, D, L, R]


class ConvSPE(_SPE):
    """convSPE: white noise filtered by learnable query/key filters of `kernel_size` P taps (FFT); parameters
    initialised from `seed`."""

    def __init__(self, num_heads: int, head_size: int, *, kernel_size: int = 128, realizations: int = 64,
                 gated: bool = True, seed: int = 0):
        super().__init__(num_heads, head_size, realizations, gated, kernel_size=kernel_size)
        self.query_filter = nn.Parameter(torch.empty(num_heads, head_size, kernel_size))  # a
        self.key_filter = nn.Parameter(torch.empty(num_heads, head_size, kernel_size))  # b
        self.reset_parameters(torch.Generator().manual_seed(seed))

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator) -> None:
        """The reference initialisation: taps U(0, 1)/√(P/2) (a positive bump ~2P wide), gate logits N(0,1)."""
        bound = 1 / math.sqrt(self.kernel_size / 2)
        for taps in (self.query_filter, self.key_filter):
            taps.copy_(torch.rand(taps.shape, generator=generator) * bound)
        if self.gate is not None:
            self.gate.copy_(torch.randn(self.gate.shape, generator=generator))

    def kernel(self, lags: torch.Tensor) -> torch.Tensor:
        """The analytic kernel Σ_j a_j b_{j+τ} [H, D, len(lags)] (no √(R/D) factor, before gating)."""
        size = self.kernel_size
        out = []
        for lag in lags.tolist():
            if abs(lag) >= size:
                out.append(self.query_filter.new_zeros(self.query_filter.shape[:2]))
            elif lag >= 0:
                out.append((self.query_filter[..., :size - lag] * self.key_filter[..., lag:]).sum(-1))
            else:
                out.append((self.query_filter[..., -lag:] * self.key_filter[..., :size + lag]).sum(-1))
        return torch.stack(out, -1)

    def noise(self, seed: int, begin: int, end: int, device=None) -> torch.Tensor:
        """White noise [H, D, R, end − begin] at noise indices begin … end − 1, drawn in blocks of NOISE_CHUNK
        indices, each from its own generator (so any window of it is the same numbers)."""
        first, last = begin // NOISE_CHUNK, (end - 1) // NOISE_CHUNK
        blocks = [torch.randn(self.num_heads, self.head_size, self.realizations, NOISE_CHUNK,
                              generator=seeded_generator(seed, 16 + i, NOISE_SALT))
                  for i in range(first, last + 1)]
        offset = first * NOISE_CHUNK
        return torch.cat(blocks, -1)[..., begin - offset:end - offset].to(device, self.query_filter.dtype)

    def codes(self, length, seed, device=None, start=0):
        size = self.kernel_size
        total = length + 2 * size
        noise = self.noise(seed, start, start + total, device)  # code m reads noise m + P … m + 2P − 1
        spectrum = torch.fft.rfft(noise, n=total)
        out = []
        for taps in (self.query_filter, self.key_filter):
            # cross-correlation: c[s] = Σ_j taps_j w[s + j]; no wrap-around for s + j < total
            filtered = torch.fft.irfft(spectrum * torch.fft.rfft(taps, n=total).conj()[:, :, None], n=total)
            out.append(filtered[..., size:size + length].transpose(-1, -2) * self.code_scale)  # [H, D, L, R]
        return out[0], out[1]


@dataclass(frozen=True)
class SPESpec:
    """The encoder's `spe` settings (used with `positional: spe`).

    kind: "sine" or "conv". realizations: R, the size of q̂/k̂ per head. num_sines: K (sine).
    kernel_size: P, filter taps (conv). gated: add the learnable position-free share γ.
    share_noise: True draws one noise per step for all layers (the reference's shared codes), False one per
        layer; each layer keeps its own parameters either way.
    """

    kind: str = "sine"
    realizations: int = 64
    num_sines: int = 10
    kernel_size: int = 128
    gated: bool = True
    share_noise: bool = False

    def __post_init__(self):
        reject(self.kind not in SPE_KINDS, "spe.kind", self.kind, f"one of {SPE_KINDS}")
        for name in ("gated", "share_noise"):
            reject(not isinstance(getattr(self, name), bool), f"spe.{name}", getattr(self, name), "true or false")
        for name in ("realizations", "num_sines", "kernel_size"):
            check_int(f"spe.{name}", getattr(self, name))

    @classmethod
    def from_dict(cls, spec: dict) -> SPESpec:
        reject(not isinstance(spec, dict), "spe", spec, "a mapping of SPE settings")
        known = [f.name for f in dataclasses.fields(cls)]
        for key in spec:
            reject(key not in known, f"spe.{key}", spec[key], f"no such key: spe takes {', '.join(known)}")
        return cls(**spec)

    def build(self, num_heads: int, head_size: int) -> _SPE:
        kind, size = (SineSPE, "num_sines") if self.kind == "sine" else (ConvSPE, "kernel_size")
        return kind(num_heads, head_size, realizations=self.realizations, gated=self.gated,
                    **{size: getattr(self, size)})
