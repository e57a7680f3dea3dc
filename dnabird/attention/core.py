"""The one attention call every dnabird track uses.

`attention(q, k, v, pattern, ...)` pads the sequence to a block multiple, materialises the
pattern's layout for this call (so short sequences are decided per call, never sticky),
hands the normalised call to a backend, and crops the result. Backends differ only in how
they compute; all of them obey the same pattern, padding and empty-row rules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from dnabird.attention.backends import select_backend
from dnabird.attention.linear import LinearKernel, linear_attention
from dnabird.attention.patterns import BlockLayout, Full, Pattern
from dnabird.errors import ParameterError, reject

Positional = Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


@dataclass(frozen=True)
class AttentionCall:
    """One attention problem, padded to `layout.num_blocks * layout.block_size` positions."""

    q: torch.Tensor  # [B, H, Lp, Dqk]
    k: torch.Tensor  # [B, H, Lp, Dqk]
    v: torch.Tensor  # [B, H, Lp, Dv]
    key_padding_mask: torch.Tensor | None  # bool [B, Lp], True = real token; None = all real
    pattern: Pattern
    layout: BlockLayout
    global_tokens: torch.Tensor  # long [G]: token-level global positions (Longformer), over the whole batch
    global_token_mask: torch.Tensor | None  # bool [B, G]: which of them are global in each example; None = all
    causal: bool
    scale: float
    dropout_p: float
    global_qkv: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None
    query_offset: int | None = None  # None: q, k, v are one sequence; else q's first row sits there among the keys

    @property
    def padded_length(self) -> int:
        return self.q.shape[2]

    def query_positions(self) -> torch.Tensor:
        """long [Lq]: each query row's position among the keys (what causal masking compares)."""
        return torch.arange(self.q.shape[2], device=self.q.device) + (self.query_offset or 0)


def _pad(x: torch.Tensor, extra: int) -> torch.Tensor:
    return F.pad(x, (0, 0, 0, extra)) if extra else x


def _check_inputs(q, k, v, pattern, key_padding_mask, global_qkv, query_offset) -> None:
    same_rows = query_offset is None
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4 or v.shape[:3] != k.shape[:3] or k.shape[-1] != q.shape[-1] \
            or k.shape[:2] != q.shape[:2] or (same_rows and k.shape != q.shape):
        raise ParameterError("q, k, v shapes", (tuple(q.shape), tuple(k.shape), tuple(v.shape)),
                             "q, k as [batch, heads, length, d_qk] and v as [batch, heads, length, d_v]"
                             + ("" if same_rows else " (with query_offset, q's length may differ from k's)"))
    if q.shape[1] != pattern.num_heads:
        raise ParameterError("pattern.num_heads", pattern.num_heads, f"the number of heads in q ({q.shape[1]})")
    if key_padding_mask is not None and (key_padding_mask.shape != (k.shape[0], k.shape[2])
                                         or key_padding_mask.dtype != torch.bool):
        raise ParameterError("key_padding_mask", f"{key_padding_mask.dtype} {tuple(key_padding_mask.shape)}",
                             f"a bool tensor of shape ({k.shape[0]}, {k.shape[2]}), True at real tokens")
    if global_qkv is not None and (len(global_qkv) != 3 or global_qkv[0].shape != q.shape
                                   or global_qkv[1].shape != k.shape or global_qkv[2].shape != v.shape):
        raise ParameterError("global_qkv", "tensors of other shapes", "(q, k, v) shaped like the local ones")


def _global_tokens(pattern: Pattern, length: int, global_mask: torch.Tensor | None, batch: int,
                   device) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The global tokens of a call (long [G], over the batch) and, when examples differ, which of them are
    global in each example (bool [B, G])."""
    shared = pattern.global_tokens(length).to(device)
    if global_mask is None:
        return shared, None
    if not pattern.supports_global_tokens():
        raise ParameterError("global_mask", "a tensor", f"None for a {type(pattern).__name__} pattern "
                             "(its global attention is positional; Longformer takes global tokens)")
    if global_mask.shape != (batch, length) or global_mask.dtype != torch.bool:
        raise ParameterError("global_mask", f"{global_mask.dtype} {tuple(global_mask.shape)}",
                             f"a bool tensor of shape ({batch}, {length}), True at each example's global tokens")
    per_example = global_mask.clone()
    per_example[:, shared] = True
    tokens = per_example.any(0).nonzero().flatten()
    token_mask = per_example[:, tokens]
    return tokens, None if bool(token_mask.all()) else token_mask


def _linear_call(q, k, v, kernel, key_padding_mask, seed, causal, scale, dropout_p, global_qkv, global_mask,
                 random_blocks) -> torch.Tensor:
    """A linear kernel's call (no blocks, no padding): see `dnabird.attention.linear`."""
    name = type(kernel).__name__
    for what, value in (("global_qkv", global_qkv), ("global_mask", global_mask), ("random_blocks", random_blocks)):
        if value is not None:
            raise ParameterError(what, "a tensor", f"None with a {name} kernel (it has no global or random blocks)")
    if dropout_p:
        raise ParameterError("dropout_p", dropout_p, f"0 with a {name} kernel (no attention matrix to drop from)")
    out = linear_attention(q, k, v, kernel, key_padding_mask=key_padding_mask, causal=causal, scale=scale, seed=seed)
    if key_padding_mask is not None:
        out = out * key_padding_mask[:, None, :, None].to(out.dtype)
    return out


def _check_separate_queries(q, k, pattern, causal, global_qkv, global_mask, positional, random_blocks,
                            query_offset) -> None:
    """Query rows that are not the keys' own (`query_offset` given): Full pattern only, nothing global,
    positional or random."""
    if not isinstance(pattern, Full):
        raise ParameterError("query_offset", query_offset,
                             f"None with a {type(pattern).__name__} pattern (separate query rows: Full only)")
    if not isinstance(query_offset, int) or isinstance(query_offset, bool) or query_offset < 0:
        raise ParameterError("query_offset", query_offset, "None or an integer >= 0")
    for what, value in (("global_qkv", global_qkv), ("global_mask", global_mask), ("positional", positional),
                        ("random_blocks", random_blocks)):
        reject(value is not None, what, "given", "None with query_offset (separate query rows of a Full pattern)")
    if causal and query_offset + q.shape[2] > k.shape[2]:
        raise ParameterError("query_offset", query_offset,
                             f"at most {k.shape[2] - q.shape[2]}: causal query rows must lie among the keys")


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, pattern: Pattern, *,
              key_padding_mask: torch.Tensor | None = None, seed: int = 0, backend: str = "auto",
              causal: bool = False, scale: float | None = None, dropout_p: float = 0.0,
              global_qkv: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
              global_mask: torch.Tensor | None = None,
              positional: Positional | None = None,
              random_blocks: torch.Tensor | None = None,
              query_offset: int | None = None) -> torch.Tensor:
    """Attention of `q` over `k`, `v` restricted to `pattern`; returns [batch, heads, length, d_v].

    - `key_padding_mask`: bool [batch, length], True where a token is real. Padded query rows
      and rows with no allowed key return zeros.
    - `seed` selects the pattern's random blocks; `random_blocks` [H, nb, r] overrides them.
    - `causal` restricts keys to positions ≤ the query (Full and Longformer patterns).
    - `global_qkv`: separate (q, k, v) used for the rows of global tokens (Longformer).
    - `global_mask`: bool [batch, length], each example's own global tokens (e.g. a question's tokens),
      in addition to the pattern's `global_positions`; patterns with token-level globals only (Longformer).
    - `positional`: a hook `(q, k) -> (q, k)` applied first, to the global (q, k) too (e.g. rotary
      positions, `dnabird.attention.positional`, or stochastic positional encoding).
    - `backend`: "auto", or one of `dnabird.attention.backends.BACKENDS`; a forced backend that
      cannot run this call raises `BackendUnavailableError` with its reasons.
    - `query_offset`: None when q, k, v are rows of one sequence (self-attention). An integer when the
      queries are other rows (Full pattern only): q [batch, heads, Lq, d_qk] may be as long as it likes,
      its row i sits at key position `query_offset + i` for `causal` (a decoder step against its cached
      keys: the cache length before the step; cross-attention: 0, not causal); `key_padding_mask`
      [batch, Lk] then masks keys only, and the result is [batch, heads, Lq, d_v].
    """
    _check_inputs(q, k, v, pattern, key_padding_mask, global_qkv, query_offset)
    reject(not 0.0 <= dropout_p < 1.0, "dropout_p", dropout_p, "a probability in [0, 1)")
    if query_offset is not None:  # the key padding mask then masks keys, and no query row is zeroed for it
        _check_separate_queries(q, k, pattern, causal, global_qkv, global_mask, positional, random_blocks,
                                query_offset)
    if positional is not None:
        q, k = positional(q, k)
        if global_qkv is not None:
            global_qkv = (*positional(global_qkv[0], global_qkv[1]), global_qkv[2])
    if causal and not pattern.supports_causal():
        raise ParameterError("causal", causal, f"False for {type(pattern).__name__} (it has no causal form)")
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    if isinstance(pattern, LinearKernel):
        return _linear_call(q, k, v, pattern, key_padding_mask, seed, causal, scale, dropout_p, global_qkv,
                            global_mask, random_blocks)
    batch, _, length, _ = q.shape
    block = pattern.block_size
    num_blocks = math.ceil(length / block)
    extra = num_blocks * block - length
    if extra and key_padding_mask is None:
        key_padding_mask = torch.ones(batch, length, dtype=torch.bool, device=q.device)
    if key_padding_mask is not None:
        key_padding_mask = F.pad(key_padding_mask, (0, extra), value=False)
    global_tokens, global_token_mask = _global_tokens(pattern, length, global_mask, batch, q.device)
    call = AttentionCall(
        q=_pad(q, extra), k=_pad(k, extra), v=_pad(v, extra), key_padding_mask=key_padding_mask,
        pattern=pattern, layout=pattern.layout(num_blocks, seed, random_blocks),
        global_tokens=global_tokens, global_token_mask=global_token_mask, causal=causal, scale=scale,
        dropout_p=dropout_p, global_qkv=None if global_qkv is None else tuple(_pad(t, extra) for t in global_qkv),
        query_offset=query_offset)
    out = select_backend(call, backend).run(call)[:, :, :length]
    if key_padding_mask is not None and query_offset is None:
        out = out * key_padding_mask[:, None, :length, None].to(out.dtype)
    return out
