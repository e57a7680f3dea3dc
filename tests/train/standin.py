"""A small stand-in model and dataset for the training-loop tests (the loop knows nothing about DNA).

Run as a script it trains the stand-in with `dnabird.train.train`, so tests can launch it in a
subprocess (to kill it) or under torchrun (DDP):
    python tests/train/standin.py OUT_DIR --steps 6 [--resume] [--block-at-step 4]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from torch import nn

from dnabird.train import LossOutput, TrainConfig, train
from dnabird.train.loop import seed_everything

VOCAB, LENGTH = 11, 6


class StandinDataset(torch.utils.data.Dataset):
    """Example `i`: a token sequence and a label drawn from a generator seeded by (seed, i)."""

    def __init__(self, seed: int = 0, block_at_index: int | None = None, marker: Path | None = None):
        self.seed, self.block_at_index, self.marker = seed, block_at_index, marker

    def __getitem__(self, index: int) -> dict:
        if self.block_at_index is not None and index >= self.block_at_index:
            self.marker.write_text(str(index))
            while True:              # stall here until the test kills the process
                time.sleep(1)
        gen = torch.Generator().manual_seed(self.seed * 1_000_003 + index)
        ids = torch.randint(0, VOCAB, (LENGTH,), generator=gen)
        return {"ids": ids, "label": ids[0] % 2}


def collate(examples: list[dict]) -> dict:
    return {key: torch.stack([torch.as_tensor(e[key]) for e in examples]) for key in examples[0]}


class StandinModel(nn.Module):
    def __init__(self, dropout: float = 0.1):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(16 * LENGTH, 2)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.drop(self.embed(ids)).flatten(1))


def standin_loss(model, batch: dict, step: int) -> LossOutput:
    logits = model(batch["ids"])
    loss = nn.functional.cross_entropy(logits, batch["label"])
    correct = (logits.argmax(-1) == batch["label"]).sum()
    return LossOutput(loss, batch["ids"].numel(), {"acc": (correct, torch.tensor(len(logits)))})


def run(out_dir: Path, *, steps: int, resume: bool = False, global_batch: int = 8, micro_batch: int = 2,
        dropout: float = 0.1, block_at_step: int | None = None, checkpoint_every: int = 2,
        lr: float = 1e-2, log_every: int = 1, eval_every: int = 0, evaluate=None) -> list[dict]:
    config = TrainConfig(out_dir=str(out_dir), max_steps=steps, global_batch_size=global_batch,
                         micro_batch_size=micro_batch, lr=lr, warmup_steps=2, checkpoint_every=checkpoint_every,
                         keep_last=2, progress=False, log_every=log_every, eval_every=eval_every)
    seed_everything(3)
    model = StandinModel(dropout)
    block = None if block_at_step is None else block_at_step * global_batch
    dataset = StandinDataset(seed=7, block_at_index=block, marker=Path(out_dir) / "blocked")
    return train(model, standin_loss, dataset, config, collate_fn=collate, resume=resume, run_info={"seed": 3},
                 evaluate=evaluate)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--global-batch", type=int, default=8)
    parser.add_argument("--micro-batch", type=int, default=2)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--block-at-step", type=int)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    run(args.out_dir, steps=args.steps, resume=args.resume, global_batch=args.global_batch,
        micro_batch=args.micro_batch, dropout=args.dropout, block_at_step=args.block_at_step)
    # train() joined the group torchrun describes, so it must leave it: a gloo group left to interpreter
    # shutdown can abort the process
    assert not torch.distributed.is_initialized(), "train() returned without leaving the process group"


if __name__ == "__main__":
    main(sys.argv[1:])
