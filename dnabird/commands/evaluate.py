"""`dnabird evaluate CHECKPOINT`: held-out MLM accuracy, NSP accuracy and bits per base of a pretrained model."""

from __future__ import annotations

import argparse

from dnabird.commands import add_command, options


def run(args: argparse.Namespace) -> None:
    """held-out MLM/NSP accuracy and bits per base of a model

    Score a pretrained model on held-out shards. Options left out take the values the pretraining run that wrote
    CHECKPOINT was evaluated with (from its run.json), so the command alone reproduces that run's report.json;
    without such a record --shards is required and the rest default as shown."""
    from dnabird.pretraining.evaluate import evaluate_checkpoint, format_report

    report = evaluate_checkpoint(args.checkpoint, args.shards, num_examples=args.examples, **options(
        args, "train_shards", "max_length", "mask_rate", "batch_size", "seed", "device", "out"))
    print(format_report(report))


def register(subparsers) -> None:
    parser = add_command(subparsers, "evaluate", run)
    parser.add_argument("checkpoint", help="model directory (config.json, model.safetensors, tokenizer .model or "
                                           "tokenizer.json)")
    parser.add_argument("--shards", help="held-out token shards (file or directory)")
    parser.add_argument("--train-shards", help="training shards, for the unigram baseline (default: none)")
    parser.add_argument("--max-length", type=int, help="tokens per example (default 4096)")
    parser.add_argument("--mask-rate", type=float, help="share of tokens masked (default 0.15)")
    parser.add_argument("--examples", type=int, help="held-out examples scored (default 256)")
    parser.add_argument("--batch-size", type=int, help="examples per forward pass (default 8)")
    parser.add_argument("--seed", type=int, help="seed of the held-out examples and masking (default 1234)")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda (default: auto)")
    parser.add_argument("--out", help="write the report as JSON here")
