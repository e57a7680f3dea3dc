"""Random key blocks of BigBird patterns: placement modes and validation of explicit tables.

A placement takes the fixed key blocks of every query block (window + global, `fixed`
[nb, F], -1 = none), the global query rows, and returns per-head random blocks
[H, nb, r] (-1 = slot unused). Random blocks are never a fixed block and never
repeated (a duplicated key would count twice in the softmax); when fewer than r blocks
are eligible, all of them are used. Randomness comes only from the `seed` argument.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from dnabird.errors import ParameterError, reject


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


# --- Hugging Face placement ("hf") -------------------------------------------------------------
# The BigBird authors' placement, as transformers implements it: random blocks come only from the
# early part of the sequence (the first 1024 tokens for the paper's lengths 1024/3072/4096, otherwise
# the first (2r + 5) blocks), drawn with numpy's legacy `RandomState` so tables equal Hugging Face's
# for the same seed. Re-implements the algorithm of transformers' `BigBirdBlockSparseAttention`
# (`_bigbird_block_rand_mask`, `_get_rand_attn_plan`, `_bigbird_block_rand_mask_with_head`); for the
# paper's lengths it assumes max_position_embeddings = 4096, as every released BigBird model has.

PAPER_LENGTHS = (1024, 3072, 4096)  # lengths whose plan is the paper's original 4096-token table
PAPER_PLAN_LENGTH, PAPER_RANDOM_LIMIT = 4096, 1024


def hf_random_blocks(fixed: torch.Tensor, global_rows: torch.Tensor, num_heads: int, num_random: int,
                     seed: int, block_size: int) -> torch.Tensor:
    """Hugging Face's random blocks [H, nb, r] for ITC (rows 0 and nb - 1 unused, -1 = no block).

    Where the paper's table lets a block repeat a window or global block (L = 1024), the duplicate
    is dropped by the layout rather than counted twice as Hugging Face does.
    """
    nb = fixed.shape[0]
    if fixed.shape[1] != 5:  # window of 3 blocks + 2 global blocks
        raise ParameterError("random_mode", "hf", "an ITC pattern with window_blocks=3 (Hugging Face's window)")
    tables = torch.full((num_heads, nb, num_random), -1, dtype=torch.long)
    if bool(global_rows.all()):
        return tables
    rng = np.random.RandomState(seed)
    if nb * block_size in PAPER_LENGTHS:
        plan_blocks = PAPER_PLAN_LENGTH // block_size
        rows = [_paper_table(plan_blocks, PAPER_RANDOM_LIMIT // block_size - 1, num_random, rng)[: nb - 2]
                for _ in range(num_heads)]
        tables[:, 1:-1] = torch.as_tensor(np.stack(rows), dtype=torch.long)
        return tables
    for head, row, slot, blocks in _planned_draws(nb, num_heads, num_random, rng):
        tables[head, row, slot:slot + len(blocks)] = torch.as_tensor(blocks, dtype=torch.long)
    return tables


def _paper_table(nb: int, last: int, r: int, rng: np.random.RandomState) -> np.ndarray:
    """One head's table [nb - 2, r] of the original plan: random blocks among blocks 1 .. last - 1."""
    middle = np.arange(1, nb - 1, dtype=np.int32)
    table = np.zeros((nb - 2, r), dtype=np.int64)
    for i in range(1, nb - 1):
        if i <= 2:
            candidates = middle[i + 1:last]
        elif i >= nb - 3 or i - 2 > last:
            candidates = middle[:last]
        elif i + 1 == last:
            candidates = middle[: i - 2]
        else:
            candidates = np.concatenate((middle[: i - 2], middle[i + 1: last]))
        table[i - 1] = rng.permutation(candidates)[:r]
    return table


def _rand_plan(nb: int, r: int) -> list[tuple[int, int]]:
    """(end block, random blocks drawn below it) segments, as Hugging Face's `_get_rand_attn_plan`."""
    if 2 * r + 5 < nb:
        return [(2 * r + 5, r), (nb, 0)]
    if r + 5 < nb:
        return [(r + 5, r // 2), (nb, r - r // 2)]
    return [(nb, r)]


def _planned_draws(nb: int, num_heads: int, r: int, rng: np.random.RandomState):
    """Yield (head, row, first slot, blocks) in Hugging Face's draw order for non-paper lengths."""
    plan = _rand_plan(nb, r)
    ends = [end for end, _ in plan]
    counts = [count for _, count in plan]

    def draws(rows: range, q: int, start: int):  # every head of `rows` draws segment q's blocks from `start`
        for row in rows:
            for head in range(num_heads):
                yield head, row, sum(counts[:q]), _row_draw(row, start, ends[q], counts[q], rng)

    for p, (end, count) in enumerate(plan):
        if p > 0:
            prev_end = ends[p - 1]
            if count > 0:  # rows of earlier segments also draw from this segment
                yield from draws(range(1, prev_end), p, prev_end)
            for q in range(p):  # rows of this segment draw from every earlier segment
                if counts[q] > 0:
                    yield from draws(range(prev_end, end), q, ends[q - 1] if q > 0 else 0)
        if count > 0:
            first_row, start = (ends[p - 1], ends[p - 1]) if p > 0 else (1, 0)
            yield from draws(range(first_row, end), p, start)


def _row_draw(row: int, start: int, end: int, r: int, rng: np.random.RandomState) -> list[int]:
    """Up to r blocks of [start, end) in a random order, skipping the row's window and the segment's ends."""
    illegal = {row - 1, row, row + 1, 0, end - 1}
    if row == 1:
        illegal.add(end - 2)
    if row == end - 2:
        illegal.add(1)
    return [int(b) for b in rng.permutation(np.arange(start, end, dtype=np.int32)) if b not in illegal][:r]


RANDOM_MODES: dict[str, Callable[..., torch.Tensor]] = {"uniform": uniform_random_blocks, "hf": hf_random_blocks}


def draw_random_blocks(fixed: torch.Tensor, global_rows: torch.Tensor, num_heads: int, num_random: int,
                       seed: int, mode: str, block_size: int) -> torch.Tensor:
    """Random blocks [H, nb, r] for the given placement `mode` (see `RANDOM_MODES`)."""
    reject(not isinstance(seed, int) or seed < 0, "seed", seed, "a non-negative integer")
    reject(mode not in RANDOM_MODES, "random_mode", mode, f"one of {sorted(RANDOM_MODES)}")
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
