"""Stage `pretrain`: MLM + NSP pretraining on the `shards` stage's output, then the held-out report.

Null paths in the section are taken from the `tokenizer` and `shards` stages; the run writes into
the stage folder (checkpoints, metrics.jsonl, learning_curve.png, report.json, model/).
`dnabird pretrain --config PIPELINE.yaml` trains the same section on its own (`from_pipeline`), which
is how a pipeline's pretraining runs on many GPUs under torchrun once its data stages have run.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from dnabird.pretraining.recipe import PretrainConfig, pretrain
from dnabird.stages import filled, pipeline_section, training_stage

SOURCES = {"tokenizer": ("tokenizer", "model"), "train_shards": ("shards", "train"),
           "heldout_shards": ("shards", "heldout")}


def from_pipeline(path: str | Path, overrides: list[str] = ()) -> PretrainConfig:
    """The `pretrain` section of a pipeline YAML, its null paths taken from the finished tokenizer and
    shards stages under `out_dir`, writing into `out_dir/pretrain`."""
    return pipeline_section("pretrain", path, overrides, partial(filled, sources=SOURCES))


STAGE = training_stage("pretrain", PretrainConfig, pretrain, SOURCES)
