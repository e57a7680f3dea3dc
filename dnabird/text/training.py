"""What the text recipes outside the fine-tuning recipe (MLM, the character LM, QA) do around the one
training loop: `train_and_save` calls the loop with safetensors checkpoints that carry the tokenizer (and
the task's `task.json`), checks a resumed run's model config (the pretraining recipe's check), then writes
the final model to `<out_dir>/model`. Their examples are `dnabird.finetune.data.EpochExamples` streams.
Classification is a task of `dnabird.finetune`; QA stays here because that recipe scores class
probabilities (binary / multi-class / multi-label metrics, a `SequenceClassifier`), while QA needs a span
head, per-example global attention, and EM/F1 from spans decoded back to the context's characters.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

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
    """Whether `out_dir` holds a checkpoint to resume from, its own or a training phase's (`phase_<k>/`, staged
    MLM); a pipeline stage resumes when it does."""
    out_dir = Path(train_config.out_dir)
    return any(out_dir.glob("checkpoints/step_*")) or any(out_dir.glob("phase_*/checkpoints/step_*"))


def with_out_dir(config, out_dir: Path):
    """`config` (with a `train: TrainConfig`) writing into `out_dir`."""
    return dataclasses.replace(config, train=dataclasses.replace(config.train, out_dir=str(out_dir)))
