"""Step-sliced data: which examples each rank reads at each optimizer step.

A dataset is addressed by a global example index; step `s` consumes indices
`[s * global_batch, (s + 1) * global_batch)`. Rank `r` of `W` reads the contiguous `r`-th slice of
that range, cut into micro-batches. The order depends only on the dataset's own seed and the global
batch — not on workers or ranks — and resuming at step `s` starts there in O(1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np
import torch
from torch.utils.data import DataLoader

from dnabird.errors import ParameterError, reject


def stack_examples(examples: Sequence[dict[str, np.ndarray]]) -> dict[str, torch.Tensor]:
    """The `collate_fn` of equal-length examples: each key's arrays stacked into one batch tensor."""
    return {key: torch.from_numpy(np.stack([e[key] for e in examples])) for key in examples[0]}


def rank_slice(step: int, global_batch: int, rank: int, world_size: int) -> range:
    """Global example indices rank `rank` reads at optimizer step `step`."""
    if global_batch % world_size:
        raise ParameterError("global_batch_size", global_batch, f"a multiple of the world size {world_size}")
    per_rank = global_batch // world_size
    start = step * global_batch + rank * per_rank
    return range(start, start + per_rank)


def accumulation_steps(global_batch: int, micro_batch: int, world_size: int) -> int:
    """Micro-batches per rank per optimizer step; the global batch must split evenly."""
    reject(global_batch % (micro_batch * world_size), "global_batch_size", global_batch,
           f"a multiple of micro_batch_size × world size = {micro_batch} × {world_size}")
    return global_batch // (micro_batch * world_size)


def step_batches(dataset, *, start_step: int, stop_step: int, global_batch: int, micro_batch: int,
                 rank: int, world_size: int, collate_fn: Callable, num_workers: int = 0,
                 ) -> Iterator[list[dict[str, torch.Tensor]]]:
    """One list of this rank's collated micro-batches per optimizer step, from `start_step` on."""
    accum = accumulation_steps(global_batch, micro_batch, world_size)
    # the batch sampler: this rank's micro-batches (lists of indices) for steps `start_step` … `stop_step - 1`
    sampler = (list(indices[i:i + micro_batch]) for step in range(start_step, stop_step)
               for indices in [rank_slice(step, global_batch, rank, world_size)]
               for i in range(0, len(indices), micro_batch))
    # an own generator: a DataLoader otherwise draws its worker seed from global RNG, which would
    # shift dropout masks after a resume
    loader = DataLoader(dataset, batch_sampler=sampler, collate_fn=collate_fn, num_workers=num_workers,
                        generator=torch.Generator().manual_seed(0))
    group: list = []
    for batch in loader:
        group.append(batch)
        if len(group) == accum:
            yield group
            group = []
