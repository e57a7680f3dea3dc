"""What every text recipe does around the one training loop: epoch-shuffled examples, train, save.

`EpochShuffled` addresses examples by a global index over epochs (what `dnabird.train.train` reads);
`train_and_save` calls the loop with safetensors checkpoints that carry the tokenizer (and the task's
`task.json`), checks a resumed run's model config (the pretraining recipe's check), then writes the final
model to `<out_dir>/model`. Fine-tuning tasks (classification, QA) use it until `dnabird.finetune` lands.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import torch

from dnabird.model.checkpoint import load_weights, read_config, read_tensors, save_checkpoint
from dnabird.model.task_spec import TaskSpec
from dnabird.pretraining.recipe import check_same_model
from dnabird.provenance import versions
from dnabird.train import TrainConfig, checkpoint, distributed, train
from dnabird.train.loop import seed_everything


def train_and_save(build_model, loss_fn, dataset, collate_fn, train_config: TrainConfig, *, seed: int,
                   resume: bool, run_info: dict, tokenizer_path: str | os.PathLike | None,
                   task: TaskSpec | None = None) -> tuple[torch.nn.Module, distributed.Context]:
    """Train the model `build_model()` returns (called after seeding, so dropout streams follow `seed`) with
    `loss_fn` on `dataset`, then save it to `<out_dir>/model` (rank 0), with the tokenizer file (None: the
    model reads bytes and needs none). Returns the model and the run context.

    With `resume`, continues from the newest checkpoint in `<out_dir>/checkpoints`, which must hold the same
    model config.
    """
    out_dir = Path(train_config.out_dir)
    ctx = distributed.setup(train_config.device)
    seed_everything(seed + ctx.rank)
    model = build_model()
    if resume and (last := checkpoint.latest(out_dir / "checkpoints")) is not None:
        check_same_model(read_config(last / checkpoint.MODEL_DIR), model.config, last)
    tokenizer_files = () if tokenizer_path is None else (Path(tokenizer_path),)
    run = {**run_info, "model": model.config.to_dict(), "versions": versions(), "seed": seed}
    train(model, loss_fn, dataset, train_config, collate_fn=collate_fn, resume=resume, ctx=ctx, run_info=run,
          save_model=lambda m, d: save_checkpoint(m, d, tokenizer_files=tokenizer_files, task=task),
          load_model=lambda m, d: load_weights(m, read_tensors(d), source=str(d / "model.safetensors")))
    if ctx.is_main:
        save_checkpoint(model, out_dir / "model", tokenizer_files=tokenizer_files, task=task)
    return model, ctx


def finish(ctx: distributed.Context) -> None:
    """After rank 0's evaluation: wait for every rank, then leave the process group (under torchrun)."""
    distributed.barrier(ctx)
    distributed.teardown(ctx)


def resumable(train_config: TrainConfig) -> bool:
    """Whether `out_dir` holds a checkpoint to resume from (a pipeline stage resumes when it does)."""
    return any((Path(train_config.out_dir) / "checkpoints").glob("step_*"))


def with_out_dir(config, out_dir: Path):
    """`config` (with a `train: TrainConfig`) writing into `out_dir`."""
    return dataclasses.replace(config, train=dataclasses.replace(config.train, out_dir=str(out_dir)))


class EpochShuffled(torch.utils.data.Dataset):
    """Examples addressed by a global index over epochs: index g is epoch g // N, slot g % N of a permutation
    drawn from (seed, epoch) (identity without `shuffle`). `example(index, epoch)` builds slot `index`; by
    default it is `items[index]`, and a subclass may draw randomness from (seed, epoch, index) only."""

    def __init__(self, items=None, *, seed: int = 0, shuffle: bool = True):
        self.items, self.seed, self.shuffle = items, seed, shuffle
        self._order: tuple[int, np.ndarray] | None = None

    def __len__(self) -> int:
        """Examples per epoch."""
        return len(self.items)

    def order(self, epoch: int) -> np.ndarray:
        if not self.shuffle:
            return np.arange(len(self))
        if self._order is None or self._order[0] != epoch:
            self._order = (epoch, np.random.default_rng((self.seed, epoch)).permutation(len(self)))
        return self._order[1]

    def __getitem__(self, global_index: int):
        epoch, position = divmod(int(global_index), len(self))
        return self.example(int(self.order(epoch)[position]), epoch)

    def example(self, index: int, epoch: int):
        return self.items[index]
