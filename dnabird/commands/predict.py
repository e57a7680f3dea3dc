"""`dnabird predict`: a fine-tuned head over sequences, regions of a genome or tiles of its contigs."""

from __future__ import annotations

import argparse
from pathlib import Path

from dnabird.commands import add_command, options

FORMATS = ("tsv", "parquet", "hdf5")


def run(args: argparse.Namespace) -> None:
    """run a fine-tuned head over sequences, regions or tiles of a genome

    One of --sequences (a FASTA or a table with a sequence column), --regions (a BED or table of regions, read
    in the window the head was trained on) or --tiles (windows every --step bp over --region spans, or the whole
    genome), with the head's outputs in the user's scale: probabilities, or a regression head's targets.
    Inputs are predicted in chunks saved as they complete: an interrupted run, rerun with the same command,
    continues where it stopped. Under torchrun each rank predicts a slice of the inputs; rank 0 writes."""
    from dnabird.prediction.files import PredictionPaths, output_format, predict_to_files
    from dnabird.prediction.run import TOO_LONG

    kind = output_format(args.out, args.format)
    paths = PredictionPaths(Path(args.out))
    tiles = (args.region or True) if args.tiles else False
    record = predict_to_files(args.model, paths.out, sequences=args.sequences, regions=args.regions, tiles=tiles,
                              genome=args.genome, format=kind, chunk_rows=args.chunk_rows, restart=args.restart,
                              **options(args, "step", "strand", "sequence_column", "id_column", "batch_size",
                                        "device", "precision"))
    if record is None:  # a torchrun rank other than 0
        return
    summary = record["summary"]
    print(f"wrote {paths.out} ({kind}): {summary['predicted']} predictions of {len(record['outputs'])} output(s) "
          f"as {record['scale']}; {summary['unpredicted']} inputs not predicted (reasons in "
          f"{paths.unpredicted.name})")
    for reason, count in summary["unpredicted_by_reason"].items():
        print(f"  not predicted, {reason}: {count}")
    if summary["unpredicted_by_reason"].get(TOO_LONG):
        print(f"  (the head takes {record['settings']['eval_length']} tokens, [CLS] and [SEP] included; N bases, as "
              "in assembly gaps, are a token each: a labelled head fine-tuned with data.eval_length at least the "
              "window's bp + 2, a block multiple, reads every window; see docs/own-data.md)")
    if summary["padded_windows"] or summary["windows_with_n"]:
        print(f"  windows past a contig end (N-padded): {summary['padded_windows']}; windows holding N: "
              f"{summary['windows_with_n']} (columns pad_left, pad_right, n_bases)")
    if "tracks" in record["files"]:
        print(f"  tracks: {paths.tracks}/ (a bigWig and a bedGraph per output, overlapping tiles averaged per base)")


def register(subparsers) -> None:
    parser = add_command(subparsers, "predict", run, resumes_itself=True)
    parser.add_argument("--model", required=True, help="fine-tuned checkpoint directory (with task.json)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--sequences", help="FASTA, or CSV/TSV/parquet table with a sequence column: one row each")
    source.add_argument("--regions", help="BED, or CSV/TSV/parquet table with columns chrom, start, end (0-based) "
                                          "and optionally strand, name; needs --genome")
    source.add_argument("--tiles", action="store_true", help="tile --region spans (default: the whole genome) "
                                                             "with the head's window every --step bp; needs --genome")
    parser.add_argument("--genome", help="reference FASTA (plain or bgzip), for --regions and --tiles")
    parser.add_argument("--region", action="append", metavar="CHROM[:START-END]",
                        help="--tiles: a contig or a span (1-based, inclusive), repeatable")
    parser.add_argument("--step", type=int, help="--tiles: bp between tile starts (default: the head's window)")
    parser.add_argument("--strand", choices=("+", "-"),
                        help="--tiles with a strand-specific head: the strand to read (default +)")
    parser.add_argument("--sequence-column", default="sequence", help="the table's sequence column (default "
                                                                      "sequence)")
    parser.add_argument("--id-column", default="id", help="the table's id column, if any (default id)")
    parser.add_argument("--out", required=True, help="output table; also writes OUT.unpredicted.tsv, OUT.json and "
                                                     "for --tiles OUT.tracks/")
    parser.add_argument("--format", choices=FORMATS, help="tsv, parquet or hdf5 (default from the file name, "
                                                          "else tsv)")
    parser.add_argument("--batch-size", type=int, default=16, help="windows per model call (default 16)")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda")
    parser.add_argument("--precision", default="fp32", choices=("fp32", "bf16"),
                        help="bf16: bfloat16 autocast where the CPU or GPU has it (default fp32)")
    parser.add_argument("--chunk-rows", type=int, default=1000,
                        help="inputs predicted per saved chunk (default 1000); a rerun of an interrupted run "
                             "continues after its last saved chunk")
    parser.add_argument("--restart", action="store_true",
                        help="discard a partial run (OUT.partial/) with other settings or inputs instead of "
                             "refusing to mix them")
