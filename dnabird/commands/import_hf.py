"""`dnabird import-hf`: convert a Hugging Face BigBird or Longformer directory into a dnabird checkpoint."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from dnabird.model import from_hf_bigbird, from_hf_longformer, save_checkpoint
    from dnabird.model.hf_seq2seq import import_encoder_decoder

    if args.architecture in ("led", "bigbird_pegasus"):  # encoder-decoders, with their tokenizer
        model = import_encoder_decoder(args.architecture, args.source, args.output)
    else:
        model = (from_hf_longformer if args.architecture == "longformer" else from_hf_bigbird)(args.source)
        save_checkpoint(model, args.output)
    print(f"wrote {args.output} ({sum(p.numel() for p in model.parameters()):,} parameters)")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("import-hf", help="convert a Hugging Face save_pretrained directory")
    parser.add_argument("source", help="directory written by transformers' save_pretrained (safetensors)")
    parser.add_argument("output", help="dnabird checkpoint directory to write")
    parser.add_argument("--architecture", choices=("bigbird", "longformer", "led", "bigbird_pegasus"),
                        default="bigbird")
    parser.set_defaults(func=run)
