"""`dnabird evaluate CHECKPOINT --shards HELDOUT`: held-out MLM accuracy, NSP accuracy, bits per base."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from dnabird.pretraining.evaluate import evaluate_checkpoint, format_report

    report = evaluate_checkpoint(args.checkpoint, args.shards, train_shards=args.train_shards,
                                 max_length=args.max_length, mask_rate=args.mask_rate,
                                 num_examples=args.examples, batch_size=args.batch_size, seed=args.seed,
                                 device=args.device, out=args.out)
    print(format_report(report))
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("evaluate", help="held-out MLM/NSP accuracy and bits per base of a model")
    parser.add_argument("checkpoint", help="model directory (config.json, model.safetensors, tokenizer .model)")
    parser.add_argument("--shards", required=True, help="held-out token shards (file or directory)")
    parser.add_argument("--train-shards", help="training shards, for the unigram baseline")
    parser.add_argument("--max-length", type=int, default=4096, help="tokens per example (default 4096)")
    parser.add_argument("--mask-rate", type=float, default=0.15, help="share of tokens masked (default 0.15)")
    parser.add_argument("--examples", type=int, default=256, help="held-out examples scored (default 256)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1234, help="seed of the held-out examples and masking")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda (default: auto)")
    parser.add_argument("--out", help="write the report as JSON here")
    parser.set_defaults(func=run)
