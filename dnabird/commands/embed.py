"""`dnabird embed`: per-sequence vectors of genome regions or FASTA records, to HDF5."""

from __future__ import annotations

import argparse

from dnabird.commands import add_command, options
from dnabird.errors import ParameterError


def run(args: argparse.Namespace) -> None:
    """per-sequence embeddings of regions or sequences (HDF5)

    Write one vector per genome region (--genome with --regions) or per FASTA record (--sequences): the encoder's
    final hidden states pooled (--pooling), to an HDF5 file."""
    from dnabird.genome.reference import Genome
    from dnabird.io import check_outputs
    from dnabird.variants import embed

    check_outputs([args.out], inputs=[args.genome, args.regions, args.sequences])
    if (args.regions is None) == (args.sequences is None):
        raise ParameterError("--regions/--sequences", None, "exactly one: --genome with --regions, or --sequences")
    if args.sequences:
        genome = Genome(args.sequences)
        regions = [(name, 0, length, "+", name) for name, length in genome.lengths.items()]
    else:
        if args.genome is None:
            raise ParameterError("--genome", None, "a FASTA for --regions")
        genome, regions = Genome(args.genome), args.regions
    vectors = embed(args.model, genome, regions,
                    **options(args, "pooling", "eval_length", "batch_size", "device", "out"))
    print(f"wrote {args.out}: {vectors.shape[0]} vectors of size {vectors.shape[1]} ({args.pooling} pooling)")


def register(subparsers) -> None:
    parser = add_command(subparsers, "embed", run)
    parser.add_argument("--model", required=True, help="checkpoint directory")
    parser.add_argument("--genome", help="reference FASTA, with --regions")
    parser.add_argument("--regions", help="BED of regions (strand - reads the reverse complement)")
    parser.add_argument("--sequences", help="FASTA whose every record is embedded whole (instead of regions)")
    parser.add_argument("--out", required=True, help="HDF5 output: /embeddings [n, hidden], /names")
    parser.add_argument("--pooling", default="cls_state",
                        help="cls_state: the [CLS] token's final hidden state (default); mean_sequence: the mean over "
                             "the DNA tokens; or what a head reads: cls (the tanh pooler over [CLS]), mean (over "
                             "every real token, [CLS] and [SEP] included), centre, centre_max")
    parser.add_argument("--eval-length", type=int, help="padded token length (default: the task's or the model's)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda")
