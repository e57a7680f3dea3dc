"""`dnabird tokenizer train|encode`: train the DNA BPE tokenizer on a corpus, or encode sequences."""

from __future__ import annotations

import argparse
import sys

from dnabird.commands import add_command, add_group, options, print_token_ids
from dnabird.data.tokenizer import TokenizerConfig, load_tokenizer, train_on_corpus

_DEFAULTS = TokenizerConfig()


def train(args: argparse.Namespace) -> None:
    config = TokenizerConfig(**options(args, "vocab_size", "max_piece_length", "sample_sentences",
                                       "heldout_sentences", "seed"))
    tokenizer, report = train_on_corpus(args.corpus, args.out, config)
    print(f"wrote {args.out} (vocab {tokenizer.vocab_size}, sha256 {tokenizer.hash})")
    if report["heldout_bp_per_token"] is not None:
        print(f"held-out bp/token: {report['heldout_bp_per_token']:.3f} "
              f"over {report['heldout_sentences']} sentences")


def encode(args: argparse.Namespace) -> None:
    tokenizer = load_tokenizer(args.model)
    print_token_ids(args.sequences or (line.strip() for line in sys.stdin),
                    lambda sequence, number: tokenizer.encode(sequence, record=f"input {number}"),
                    tokenizer.offsets if args.offsets else None)


def register(subparsers) -> None:
    commands = add_group(subparsers, "tokenizer", help="train the DNA BPE tokenizer or encode sequences",
                         description="Train the DNA byte-pair tokenizer on a corpus's train split (reporting "
                                     "held-out bp/token), or print the token ids of DNA sequences.")
    trainer = add_command(commands, "train", train, help="train on the train split of a corpus directory")
    trainer.add_argument("corpus", help="corpus directory written by `dnabird corpus`")
    trainer.add_argument("--out", required=True, help="model file to write, e.g. dna.model")
    trainer.add_argument("--vocab-size", type=int, default=_DEFAULTS.vocab_size,
                         help="vocabulary including the 5 special tokens (default: %(default)s)")
    trainer.add_argument("--max-piece-length", type=int, default=_DEFAULTS.max_piece_length,
                         help="longest piece in bp (default: %(default)s)")
    trainer.add_argument("--sample-sentences", type=int, default=_DEFAULTS.sample_sentences,
                         help="training sentences sampled into memory, ~35 MB per 1000 (default: %(default)s)")
    trainer.add_argument("--heldout-sentences", type=int, default=_DEFAULTS.heldout_sentences,
                         help="held-out sentences to report bp/token on; 0 to skip (default: %(default)s)")
    trainer.add_argument("--seed", type=int, default=_DEFAULTS.seed, help="sampling seed")
    encoder = add_command(commands, "encode", encode, help="print token ids of DNA sequences (arguments or stdin)")
    encoder.add_argument("--model", required=True, help="tokenizer: a .model file, a tokenizer.json (with "
                                                        "special_tokens_map.json beside it) or a checkpoint directory")
    encoder.add_argument("sequences", nargs="*",
                         help="DNA sequences (lower case reads as upper case); none: read stdin")
    encoder.add_argument("--offsets", action="store_true", help="print id:start-end bp spans")
