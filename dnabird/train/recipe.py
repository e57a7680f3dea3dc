"""The shell every recipe runs in (pretraining, fine-tuning, the text recipes):

    with recipe_run(config.train.device, seed=config.seed) as run:   # join the process group, seed
        model = ...                                                   # then build the model, then the data
        run.fit(model, loss_fn, examples, config.train, ...)          # train; keep the final (or selected) model
        if run.is_main:
            report = ...                                              # evaluate on rank 0
                                                                      # all ranks meet, leave the group

`fit` trains with safetensors checkpoints that carry the tokenizer files (and the task's `task.json`),
checks that a resumed run's model config is the checkpoint's, and writes the final model to
`<out_dir>/model`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch

from dnabird.errors import CheckpointError
from dnabird.model.checkpoint import CONFIG_FILE, WEIGHTS_FILE, load_weights, read_tensors, save_checkpoint
from dnabird.provenance import versions
from dnabird.train import checkpoint, distributed
from dnabird.train.loop import TrainConfig, seed_everything, train


def check_same_model(saved, current, where: Path) -> None:
    """Raise naming the first model-config field whose value differs between checkpoint and config."""
    old, new = saved.to_dict(), current.to_dict()
    for name in new:
        if old.get(name) != new[name]:
            raise CheckpointError(f"{where}: cannot resume, the model config changed: {name} is "
                                  f"{old.get(name)!r} in the checkpoint and {new[name]!r} in the config")


class RecipeRun:
    """One run's place among the ranks (`ctx`) and seed; `fit` trains a model inside it."""

    def __init__(self, ctx: distributed.Context, seed: int):
        self.ctx = ctx
        self.reseed(seed)

    @property
    def is_main(self) -> bool:
        return self.ctx.is_main

    @property
    def device(self) -> torch.device:
        return self.ctx.device

    def reseed(self, seed: int) -> None:
        """Seed the global RNG before a model is built; dropout streams differ per rank."""
        self.seed = seed
        seed_everything(seed + self.ctx.rank)

    def fit(self, model: torch.nn.Module, loss_fn, dataset, train_config: TrainConfig, *, collate_fn,
            resume: bool, run_info: dict, tokenizer_files: tuple[str | os.PathLike, ...] = (), task=None,
            validate=None, selection=None) -> None:
        """Train `model` (`dnabird.train.train`), then (rank 0) save it to `<out_dir>/model`.

        With `resume`, continues from the newest checkpoint in `<out_dir>/checkpoints`, which must hold the
        same model config. `validate(model, step) -> metrics` runs every `train.eval_every` steps; a
        `selection` (`save(dir)`, `load(dir)`, `state`: e.g. `dnabird.finetune.evaluate.Selection`) travels in
        the checkpoints, and the model it selected is the one saved.
        """
        out_dir = Path(train_config.out_dir)
        if resume and (last := checkpoint.latest(out_dir / "checkpoints")) is not None:
            saved = last / checkpoint.MODEL_DIR / CONFIG_FILE
            check_same_model(type(model.config).from_dict(json.loads(saved.read_text()), source=str(saved)),
                             model.config, last)

        def save(net, directory: Path) -> None:
            save_checkpoint(net, directory, tokenizer_files=tokenizer_files, task=task)
            if selection is not None:
                selection.save(directory / "selection")

        def load(net, directory: Path) -> None:
            load_weights(net, read_tensors(directory), source=str(directory / WEIGHTS_FILE))
            if selection is not None:
                selection.load(directory / "selection")

        train(model, loss_fn, dataset, train_config, collate_fn=collate_fn, resume=resume, ctx=self.ctx,
              evaluate=validate, save_model=save, load_model=load,
              run_info={**run_info, "model": model.config.to_dict(), "versions": versions(), "seed": self.seed})
        if self.is_main:
            if selection is not None and selection.state is not None:
                model.load_state_dict(selection.state)
            save_checkpoint(model, out_dir / "model", tokenizer_files=tokenizer_files, task=task)


@contextmanager
def recipe_run(device: str, *, seed: int) -> Iterator[RecipeRun]:
    """Join the process group (`distributed.setup`) and seed; on leaving, wait for every rank and leave it."""
    run = RecipeRun(distributed.setup(device), seed)
    yield run
    distributed.barrier(run.ctx)
    distributed.teardown(run.ctx)
