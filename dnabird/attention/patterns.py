"""Attention patterns: frozen specs that validate themselves and materialise block layouts.

A pattern says *which* keys each query may attend to; it never computes attention.
`pattern.layout(num_blocks, seed)` returns per-head block tables (a `BlockLayout`), and
`pattern.dense_mask(length, seed)` is derived from the same tables, so the sparse kernels,
the dense test reference and the plots all read one truth.

Conventions: positions are 0-based; the sequence is padded internally to a multiple of
the block size; `dense_mask[h, i, j]` is True when query i may attend to key j in head h.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

from dnabird.attention.random_blocks import RANDOM_MODES, draw_random_blocks, validate_random_blocks
from dnabird.errors import ParameterError, check_int, check_positive_ints, reject


@dataclass(frozen=True)
class BlockLayout:
    """Materialised block tables of one pattern at one padded length.

    `global_rows[i]` marks query blocks that attend to every key block. For every other
    query block i of head h, `key_blocks[h, i]` lists its distinct key blocks (padded
    with -1). Token-level refinements (Longformer) are applied by `Pattern.token_rule`.
    """

    block_size: int
    num_blocks: int
    global_rows: torch.Tensor  # bool [nb]
    key_blocks: torch.Tensor  # long [H, nb, K], -1 = unused slot

    @classmethod
    def full(cls, num_heads: int, num_blocks: int) -> BlockLayout:
        """Full attention: `num_blocks` one-token blocks, every one a global row."""
        return cls(1, num_blocks, torch.ones(num_blocks, dtype=torch.bool),
                   torch.full((num_heads, num_blocks, 0), -1, dtype=torch.long))

    @property
    def num_heads(self) -> int:
        return self.key_blocks.shape[0]

    def block_mask(self) -> torch.Tensor:
        """bool [H, nb, nb]: True where query block i reads key block j."""
        H, nb, _ = self.key_blocks.shape
        mask = torch.zeros(H, nb, nb + 1, dtype=torch.bool)  # column nb absorbs the -1 slots
        index = torch.where(self.key_blocks < 0, nb, self.key_blocks)
        mask.scatter_(2, index, True)
        mask = mask[:, :, :nb]
        mask[:, self.global_rows] = True
        return mask


def _check_bigbird(pattern: BigBirdITC | BigBirdETC) -> None:
    """The checks both BigBird patterns share: heads, block size, an odd window, random blocks ≥ 0."""
    check_positive_ints(pattern, ("num_heads", "block_size", "window_blocks"))
    reject(pattern.window_blocks % 2 == 0, "window_blocks", pattern.window_blocks,
           "an odd number of blocks (the block and equal neighbours)")
    check_int("num_random_blocks", pattern.num_random_blocks, 0)


class Pattern:
    """Base class of attention patterns; subclasses are frozen dataclasses."""

    type_name: str = ""
    num_heads: int

    block_size: int

    def layout(self, num_blocks: int, seed: int = 0,
               random_blocks: torch.Tensor | None = None) -> BlockLayout:
        raise NotImplementedError

    def token_rule(self, layout: BlockLayout, query_pos: torch.Tensor, key_pos: torch.Tensor,
                   heads: torch.Tensor, causal: bool) -> torch.Tensor | None:
        """Token-level refinement inside the key blocks of `layout`, or None when blocks are exact.

        `query_pos` [R, b], `key_pos` [R, K] and `heads` [R] describe R query blocks and their
        gathered keys; returns bool [R, b, K].
        """
        return None

    def global_tokens(self, length: int) -> torch.Tensor:
        """Token positions (long [G]) that attend everywhere and are attended by all, beyond blocks."""
        return torch.zeros(0, dtype=torch.long)

    def supports_causal(self) -> bool:
        return False

    def seed_step(self, step: int) -> int:
        """The training step whose seed this pattern's randomness uses at `step` (random blocks: every step;
        a kernel that keeps its random features for several steps maps them to one)."""
        return step

    def supports_global_tokens(self) -> bool:
        """Whether single tokens can be made global per call (`attention(..., global_mask=...)`)."""
        return False

    def mask_from_layout(self, layout: BlockLayout, causal: bool = False,
                         global_mask: torch.Tensor | None = None) -> torch.Tensor:
        """bool [H, Lp, Lp] token mask at the padded length of `layout`; with `global_mask` (bool [B, Lp],
        each example's global tokens, replacing the pattern's) a mask per example, bool [B, H, Lp, Lp]."""
        b, nb = layout.block_size, layout.num_blocks
        length = b * nb
        mask = layout.block_mask().repeat_interleave(b, 1).repeat_interleave(b, 2)
        pos = torch.arange(length)
        heads = torch.arange(layout.num_heads)
        rows = pos.view(nb, b).repeat(layout.num_heads, 1)  # [H*nb, b]
        rule = self.token_rule(layout, rows, pos.expand(rows.shape[0], length),
                               heads.repeat_interleave(nb), causal)
        if rule is not None:
            local = rule.view(layout.num_heads, length, length)
            mask = torch.where(layout.global_rows.repeat_interleave(b)[None, :, None], mask, mask & local)
        is_global = global_mask
        if is_global is None:
            is_global = torch.zeros(1, length, dtype=torch.bool)
            is_global[:, self.global_tokens(length)] = True
        mask = mask.to(is_global.device)[None] | is_global[:, None, :, None] | is_global[:, None, None, :]
        if causal:
            mask &= torch.ones(length, length, dtype=torch.bool, device=mask.device).tril()
        return mask if global_mask is not None else mask[0]  # [B, H, Lp, Lp] or [H, Lp, Lp]

    def dense_mask(self, length: int, seed: int = 0, *, causal: bool = False,
                   random_blocks: torch.Tensor | None = None) -> torch.Tensor:
        """bool [H, length, length]: which keys each query may attend to (derived from the layout)."""
        check_int("length", length)
        if causal and not self.supports_causal():
            raise ParameterError("causal", causal, f"False for {type(self).__name__} (it has no causal form)")
        num_blocks = math.ceil(length / self.block_size)
        layout = self.layout(num_blocks, seed, random_blocks)
        return self.mask_from_layout(layout, causal)[:, :length, :length]

    def to_dict(self) -> dict:
        out = {"type": self.type_name}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class Full(Pattern):
    """Every query attends to every (non-padding) key."""

    num_heads: int = 1
    type_name = "full"
    block_size = 1

    def __post_init__(self):
        check_int("num_heads", self.num_heads)

    def supports_causal(self) -> bool:
        return True

    def layout(self, num_blocks, seed=0, random_blocks=None) -> BlockLayout:
        return BlockLayout.full(self.num_heads, num_blocks)


def _window(num_blocks: int, window_blocks: int) -> torch.Tensor:
    """long [nb, w]: the window key blocks of each query block, -1 where off the sequence."""
    half = window_blocks // 2
    blocks = torch.arange(num_blocks)[:, None] + torch.arange(-half, half + 1)[None, :]
    return torch.where((blocks >= 0) & (blocks < num_blocks), blocks, -1)


def _bigbird_layout(pattern: BigBirdITC | BigBirdETC, num_blocks: int, global_blocks: torch.Tensor,
                    all_global: bool, seed: int, random_blocks: torch.Tensor | None, random_mode: str) -> BlockLayout:
    """Union of each row's window, the `global_blocks` (long [G], whose rows are global; every row with
    `all_global`) and per-head random blocks [H, nb, r] (`random_blocks`, checked, or drawn from `seed` by
    `random_mode`), deduplicated."""
    nb, num_heads = num_blocks, pattern.num_heads
    global_rows = torch.full((nb,), all_global, dtype=torch.bool)
    global_rows[global_blocks] = True
    fixed = torch.cat([_window(nb, pattern.window_blocks), global_blocks.expand(nb, -1)], dim=1)
    if random_blocks is not None:
        random = validate_random_blocks(random_blocks, fixed, global_rows, num_heads)
    else:
        random = draw_random_blocks(fixed, global_rows, num_heads, pattern.num_random_blocks, seed, random_mode,
                                    pattern.block_size)
    blocks = torch.cat([fixed.expand(num_heads, nb, fixed.shape[1]), random], dim=2)
    blocks, _ = blocks.sort(dim=2)
    duplicate = torch.zeros_like(blocks, dtype=torch.bool)
    duplicate[:, :, 1:] = blocks[:, :, 1:] == blocks[:, :, :-1]
    blocks = torch.where(duplicate, -1, blocks)
    blocks, _ = blocks.sort(dim=2, descending=True)  # -1 slots last
    width = int((blocks >= 0).sum(-1).max()) if blocks.numel() else 0
    blocks = blocks[:, :, :width]
    blocks[:, global_rows] = -1
    return BlockLayout(pattern.block_size, nb, global_rows, blocks)


@dataclass(frozen=True)
class BigBirdITC(Pattern):
    """BigBird ITC: first and last block global, a sliding window of blocks, r random blocks per head.

    At 5 blocks or fewer the layout is exactly full attention (decided per call).
    """

    num_heads: int = 1
    block_size: int = 64
    window_blocks: int = 3
    num_random_blocks: int = 3
    random_mode: str = "uniform"
    type_name = "bigbird_itc"

    def __post_init__(self):
        _check_bigbird(self)
        reject(self.random_mode not in RANDOM_MODES, "random_mode", self.random_mode, f"one of {sorted(RANDOM_MODES)}")

    def layout(self, num_blocks, seed=0, random_blocks=None) -> BlockLayout:
        check_int("num_blocks", num_blocks)
        return _bigbird_layout(self, num_blocks, torch.tensor([0, num_blocks - 1]), num_blocks <= 5, seed,
                               random_blocks, self.random_mode)


@dataclass(frozen=True)
class BigBirdETC(Pattern):
    """BigBird ETC: the first `num_global_tokens` positions are global; window + optional random blocks."""

    num_heads: int = 1
    block_size: int = 64
    num_global_tokens: int = 128
    window_blocks: int = 3
    num_random_blocks: int = 0
    type_name = "bigbird_etc"

    def __post_init__(self):
        _check_bigbird(self)
        check_int("num_global_tokens", self.num_global_tokens)
        reject(self.num_global_tokens % self.block_size, "num_global_tokens", self.num_global_tokens,
               f"a multiple of block_size={self.block_size}")

    def layout(self, num_blocks, seed=0, random_blocks=None) -> BlockLayout:
        check_int("num_blocks", num_blocks)
        first = torch.arange(min(self.num_global_tokens // self.block_size, num_blocks))
        return _bigbird_layout(self, num_blocks, first, False, seed, random_blocks, "uniform")


@dataclass(frozen=True)
class Longformer(Pattern):
    """Longformer: token-level sliding window (window/2 keys each side + the token), per-head dilation,
    symmetric global attention at `global_positions`, optional causal form.

    `block_size` only sets the granularity of the gathered key blocks, not the pattern.
    """

    num_heads: int = 1
    window: int = 512
    dilation: int | tuple[int, ...] = 1
    global_positions: tuple[int, ...] = ()
    block_size: int = 64
    type_name = "longformer"

    def __post_init__(self):
        if isinstance(self.dilation, list):
            object.__setattr__(self, "dilation", tuple(self.dilation))
        object.__setattr__(self, "global_positions", tuple(sorted(set(self.global_positions))))
        check_positive_ints(self, ("num_heads", "block_size", "window"))
        reject(self.window % 2, "window", self.window, "an even total window (window/2 keys on each side)")
        if isinstance(self.dilation, tuple) and len(self.dilation) != self.num_heads:
            raise ParameterError("dilation", self.dilation, f"one int or one value per head ({self.num_heads})")
        for d in self.dilation if isinstance(self.dilation, tuple) else (self.dilation,):
            check_int("dilation", d)
        if any(not isinstance(p, int) or p < 0 for p in self.global_positions):
            raise ParameterError("global_positions", self.global_positions, "non-negative token positions")

    def supports_causal(self) -> bool:
        return True

    def supports_global_tokens(self) -> bool:
        return True

    def head_dilations(self) -> torch.Tensor:
        d = self.dilation if isinstance(self.dilation, tuple) else (self.dilation,) * self.num_heads
        return torch.tensor(d, dtype=torch.long)

    def layout(self, num_blocks, seed=0, random_blocks=None) -> BlockLayout:
        check_int("num_blocks", num_blocks)
        reject(random_blocks is not None, "random_blocks", "tensor", "None for Longformer (it has no random blocks)")
        b = self.block_size
        reach = self.head_dilations() * (self.window // 2)  # [H] tokens on each side
        span = (reach + b - 1) // b  # blocks needed on each side
        offsets = torch.arange(-int(span.max()), int(span.max()) + 1)
        blocks = torch.arange(num_blocks)[None, :, None] + offsets[None, None, :]  # [1, nb, K]
        blocks = blocks.expand(self.num_heads, -1, -1).clone()
        usable = (offsets[None, :].abs() <= span[:, None])[:, None, :] & (blocks >= 0) & (blocks < num_blocks)
        blocks = torch.where(usable, blocks, -1)
        blocks, _ = blocks.sort(dim=2, descending=True)
        width = int((blocks >= 0).sum(-1).max())
        return BlockLayout(b, num_blocks, torch.zeros(num_blocks, dtype=torch.bool), blocks[:, :, :width])

    def global_tokens(self, length: int) -> torch.Tensor:
        if self.global_positions and self.global_positions[-1] >= length:
            raise ParameterError("global_positions", self.global_positions,
                                 f"positions below the sequence length {length}")
        return torch.tensor(self.global_positions, dtype=torch.long)

    def token_rule(self, layout, query_pos, key_pos, heads, causal):
        dilation = self.head_dilations()[heads][:, None, None]  # [R, 1, 1]
        offset = query_pos[:, :, None] - key_pos[:, None, :]  # [R, b, K]
        allowed = (offset.abs() <= dilation * (self.window // 2)) & (offset % dilation == 0)
        if causal:
            allowed &= offset >= 0
        return allowed


PATTERNS = {cls.type_name: cls for cls in (Full, BigBirdITC, BigBirdETC, Longformer)}


def pattern_from_dict(spec: dict) -> Pattern:
    """Build a pattern from `pattern.to_dict()` output; unknown types or keys fail by name."""
    from dnabird.attention.linear import KERNELS

    kinds = {**PATTERNS, **KERNELS}
    spec = dict(spec)
    kind = spec.pop("type", None)
    reject(kind not in kinds, "type", kind, f"one of {sorted(kinds)}")
    known = [f.name for f in dataclasses.fields(kinds[kind])]
    for key in spec:
        reject(key not in known, key, spec[key], f"no such key: a {kind} pattern takes {', '.join(known)}")
    return kinds[kind](**spec)
