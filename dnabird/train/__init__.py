"""The one training loop (`loop.train`) and its parts: LR schedule, checkpoints, DDP, step data, metrics.

It knows nothing about DNA or text: a model, a loss function, an index-addressed dataset and a
`TrainConfig` go in; checkpoints, `metrics.jsonl` and a learning-curve PNG come out.
"""

from dnabird.train.loop import LossOutput, TrainConfig, train

__all__ = ["LossOutput", "TrainConfig", "train"]
