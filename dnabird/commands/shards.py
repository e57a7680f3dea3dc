"""`dnabird shards CORPUS --tokenizer dna.model --out DIR`: tokenize a corpus into HDF5 token shards."""

from __future__ import annotations

import argparse

from dnabird.commands import add_command
from dnabird.data.corpus import SPLITS


def run(args: argparse.Namespace) -> None:
    """tokenize a corpus into HDF5 token shards, one per corpus part

    Encode every sentence of a corpus (written by `dnabird corpus`) with a tokenizer into OUT/SPLIT/PART.h5. Rerun
    the same command to resume: shards already made from the same part by the same tokenizer are kept."""
    from dnabird.data.shards import SHARD_SUFFIX, build_shards

    for split, folder in build_shards(args.corpus, args.tokenizer, args.out, args.splits).items():
        print(f"{split:>8}: {len(list(folder.glob(f'*{SHARD_SUFFIX}')))} shards in {folder}")


def register(subparsers) -> None:
    parser = add_command(subparsers, "shards", run)
    parser.add_argument("corpus", help="corpus directory written by `dnabird corpus`")
    parser.add_argument("--tokenizer", required=True, help="tokenizer: a .model file (`dnabird tokenizer train`), or a "
                        "tokenizer.json with special_tokens_map.json beside it (an imported model's)")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--splits", nargs="+", default=list(SPLITS), choices=SPLITS,
                        help="corpus splits to tokenize (default: %(default)s)")
