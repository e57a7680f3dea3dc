"""Random key blocks of BigBird patterns: placement modes and validation of explicit tables.

A placement takes the fixed key blocks of every query block (window + global, `fixed`
[nb, F], -1 = none), the global query rows, and returns per-head random blocks
[H, nb, r] (-1 = slot unused). Random blocks are never a fixed block and never
repeated (a duplicated key would count twice in the softmax); when fewer than r blocks
are eligible, all of them are used. Randomness comes only from the `seed` argument.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from dnabird.errors import ParameterError


def eligible_blocks(fixed: torch.Tensor, global_rows: torch.Tensor) -> torch.Tensor:
    """bool [nb, nb]: key blocks a query block may draw at random (not fixed, not a global row)."""
    nb = fixed.shape[0]
    taken = torch.zeros(nb, nb + 1, dtype=torch.bool)
    taken.scatter_(1, torch.where(fixed < 0, nb, fixed), True)
    eligible = ~taken[:, :nb]
    eligible[global_rows] = False
    return eligible


def uniform_random_blocks(fixed: torch.Tensor, global_rows: torch.Tensor, num_heads: int,
                          num_random: int, seed: int, block_size: int) -> torch.Tensor:
    """Draw, per head and query block, `num_random` distinct blocks uniformly among the eligible ones."""
    nb = fixed.shape[0]
    generator = torch.Generator().manual_seed(seed)
    keys = torch.rand(num_heads, nb, nb, generator=generator)
    eligible = eligible_blocks(fixed, global_rows)
    keys = torch.where(eligible, keys, 2.0)
    count = min(num_random, nb)
    values, blocks = keys.topk(count, dim=2, largest=False)
    return torch.where(values < 2.0, blocks, -1)


RANDOM_MODES: dict[str, Callable[..., torch.Tensor]] = {
    "uniform": uniform_random_blocks,
}


def draw_random_blocks(fixed: torch.Tensor, global_rows: torch.Tensor, num_heads: int, num_random: int,
                       seed: int, mode: str, block_size: int) -> torch.Tensor:
    """Random blocks [H, nb, r] for the given placement `mode` (see `RANDOM_MODES`)."""
    if not isinstance(seed, int) or seed < 0:
        raise ParameterError("seed", seed, "a non-negative integer")
    if mode not in RANDOM_MODES:
        raise ParameterError("random_mode", mode, f"one of {sorted(RANDOM_MODES)}")
    if num_random == 0:
        return torch.full((num_heads, fixed.shape[0], 0), -1, dtype=torch.long)
    return RANDOM_MODES[mode](fixed, global_rows, num_heads, num_random, seed, block_size)


def validate_random_blocks(tables: torch.Tensor, fixed: torch.Tensor, global_rows: torch.Tensor,
                           num_heads: int) -> torch.Tensor:
    """Check caller-supplied random blocks [H, nb, r]; rows of global blocks are ignored (set to -1)."""
    nb = fixed.shape[0]
    tables = torch.as_tensor(tables, dtype=torch.long)
    if tables.dim() != 3 or tables.shape[:2] != (num_heads, nb):
        raise ParameterError("random_blocks", tuple(tables.shape), f"shape ({num_heads}, {nb}, r)")
    tables = torch.where(global_rows[None, :, None], -1, tables)
    used = tables >= 0
    if bool((tables >= nb).any()):
        raise ParameterError("random_blocks", int(tables.max()), f"block indices below {nb}")
    eligible = eligible_blocks(fixed, global_rows)
    ok = eligible.expand(num_heads, nb, nb).gather(2, tables.clamp(min=0))
    bad = used & ~ok
    if bool(bad.any()):
        h, i, s = (int(x) for x in bad.nonzero()[0])
        raise ParameterError(f"random_blocks[{h}, {i}, {s}]", int(tables[h, i, s]),
                             "a block outside the window and the global blocks of its query block")
    ordered, _ = tables.sort(dim=2)
    if bool(((ordered[:, :, 1:] == ordered[:, :, :-1]) & (ordered[:, :, 1:] >= 0)).any()):
        raise ParameterError("random_blocks", "a repeated block", "distinct blocks per query block")
    return tables
