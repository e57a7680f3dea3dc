"""A small stand-in task for the fine-tuning recipe tests: 120-bp random DNA, positive when it carries a
GC box (GGGGCGGGGC), a 1-layer encoder trained from scratch in seconds.

Run as a script it fine-tunes in a subprocess (so tests can kill it):
    python tests/finetune/standin_task.py TOKENIZER OUT_DIR --steps 12 [--resume] [--block-at-step 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dnabird.finetune.config import FinetuneConfig
from dnabird.finetune.data import TaskData, TokenExamples
from dnabird.finetune.task import Task
from dnabird.model.task_spec import TaskSpec

MOTIF = "GGGGCGGGGC"
MODEL = {"num_layers": 1, "hidden_size": 32, "num_heads": 2, "intermediate_size": 64, "max_positions": 256,
         "attention": {"type": "bigbird_itc", "block_size": 16, "window_blocks": 3,
                       "num_random_blocks": 1, "random_mode": "uniform"}}


@dataclass
class StandinData:
    examples: dict = field(default_factory=lambda: {"train": 64, "validation": 32, "test": 32})
    block_at_index: int | None = None   # training stalls when it reaches this global example index
    marker: str | None = None           # written when it stalls
    gc_rich: bool = False               # positives drawn at 70 % GC, negatives at 30 % (no box): learnt in a few steps
    shuffle_labels: bool = False        # labels permuted in every split: nothing to learn


@dataclass
class StandinConfig(FinetuneConfig):
    data: StandinData = field(default_factory=StandinData)


class Stalling(TokenExamples):
    def __init__(self, *args, block_at: int | None, marker: str | None, **kwargs):
        super().__init__(*args, **kwargs)
        self.block_at, self.marker = block_at, marker

    def __getitem__(self, global_index: int):
        if self.block_at is not None and global_index >= self.block_at:
            Path(self.marker).write_text(str(global_index))
            while True:                 # until the test kills the process
                time.sleep(1)
        return super().__getitem__(global_index)


def sequences(count: int, seed: int, gc_rich: bool = False) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.arange(count) % 2
    texts = []
    for label in labels:
        gc = 0.7 if label else 0.3
        bases = "".join(rng.choice(list("ACGT"), 120, p=[(1 - gc) / 2, gc / 2, gc / 2, (1 - gc) / 2]) if gc_rich
                        else rng.choice(list("ACGT"), 120))
        if label and not gc_rich:
            at = int(rng.integers(0, 120 - len(MOTIF)))
            bases = bases[:at] + MOTIF + bases[at + len(MOTIF):]
        texts.append(bases)
    return texts, labels


def build(config: StandinConfig, tokenizer, *, block_size: int, out_dir) -> TaskData:
    splits = {}
    for offset, (name, count) in enumerate(config.data.examples.items()):
        texts, labels = sequences(count, seed=100 + offset, gc_rich=config.data.gc_rich)
        if config.data.shuffle_labels:
            labels = np.random.default_rng(offset).permutation(labels)
        ids, _ = tokenizer.encode_batch(texts, block_size=block_size, length=128)
        splits[name] = (ids, labels)
    train = Stalling(*splits["train"], seed=config.seed, shuffle=True, block_at=config.data.block_at_index,
                     marker=config.data.marker)
    spec = TaskSpec(task="standin", problem="binary", labels=["gc_box"], eval_length=128,
                    tokenizer_hash=tokenizer.hash)
    return TaskData(spec, train, TokenExamples(*splits["validation"]), TokenExamples(*splits["test"]),
                    summary={"examples": {k: len(v[1]) for k, v in splits.items()}})


class Standin(Task):
    name, config = "standin", StandinConfig
    build = staticmethod(build)


TASK = Standin()


def config(tokenizer: Path, out_dir: Path, *, steps: int = 12, **changes) -> StandinConfig:
    from dnabird.train import TrainConfig

    train = TrainConfig(out_dir=str(out_dir), max_steps=steps, global_batch_size=8, micro_batch_size=4, lr=3e-3,
                        warmup_steps=2, checkpoint_every=4, eval_every=3, progress=False)
    settings = dict(pretrained="none", model="tiny", model_overrides=MODEL, tokenizer=str(tokenizer),
                    eval_batch_size=16, bootstrap_resamples=100, train=train)
    return StandinConfig(**{**settings, **changes})


def register() -> None:
    """Make `finetune("standin", ...)` find this module."""
    from dnabird import tasks

    tasks.TASKS["standin"] = __name__


def main(argv: list[str]) -> None:
    import torch

    from dnabird.tasks import finetune

    parser = argparse.ArgumentParser()
    parser.add_argument("tokenizer", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--block-at-step", type=int)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    register()
    block = None if args.block_at_step is None else args.block_at_step * 8
    data = StandinData(block_at_index=block, marker=str(args.out_dir / "blocked"))
    finetune("standin", config(args.tokenizer, args.out_dir, steps=args.steps, data=data), resume=args.resume)


if __name__ == "__main__":
    main(sys.argv[1:])
