"""`dnabird pretrain --config STAGE.yaml [--resume] [key.sub=value …]`: MLM + NSP pretraining (DDP under
torchrun, `dnabird.train.distributed`)."""

from __future__ import annotations

import argparse

from dnabird.commands import add_command, add_overrides


def run(args: argparse.Namespace) -> None:
    """pretrain an encoder with MLM + NSP on token shards

    Pretrain a BigBird encoder with masked-LM and next-sentence objectives on HDF5 token shards; writes checkpoints,
    metrics.jsonl and the final model to the config's out_dir. Under torchrun it trains on every process (DDP)."""
    from dnabird.config import read_yaml
    from dnabird.pretraining.recipe import load_config, pretrain
    from dnabird.stages.pretrain import from_pipeline

    # a pipeline file trains its `pretrain` section; any other YAML holds PretrainConfig's keys
    read = from_pipeline if "pretrain" in read_yaml(args.config) else load_config
    pretrain(read(args.config, args.overrides), resume=args.resume)


def register(subparsers) -> None:
    parser = add_command(subparsers, "pretrain", run)
    parser.add_argument("--config", required=True,
                        help="pretraining YAML (keys of PretrainConfig) or a pipeline YAML with a pretrain section")
    add_overrides(parser, "train.max_steps=1000 train.lr=2e-4", resume=True)
