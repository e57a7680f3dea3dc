"""`dnabird benchmark-variants`: rank a labelled variant set with every scoring method of a model."""

from __future__ import annotations

import argparse

from dnabird.commands import add_command, options


def run(args: argparse.Namespace) -> None:
    """benchmark a model on a labelled variant set (AUROC, AUPRC, …)

    Score a labels table (chrom, pos, ref, alt, label; TSV, CSV or parquet) with every method the model supports
    (head, mlm_llr, llr_per_bp, embed_dist) and a baseline that needs no model (markov), and report, per method,
    AUROC, AUPRC, AUPRC averaged over chromosomes weighted by their variants (TraitGym's main metric), the odds
    ratio of the top k and, with match groups, the matched AUROC, each with a 95 % bootstrap interval
    (docs/variant-scoring.md)."""
    from dnabird.variants.benchmark import benchmark_variants, format_report

    report = benchmark_variants(args.model, args.genome, args.labels, out=args.out,
                                match_on=None if args.match_on == "none" else args.match_on,
                                **options(args, "methods", "top_k", "resamples", "seed", "tss", "rc", "window_bp",
                                          "eval_length", "batch_size", "device"))
    print(format_report(report))
    print(f"wrote {args.out}/report.json, report.md, scores.tsv, skipped.tsv, roc.png, pr.png")


def register(subparsers) -> None:
    parser = add_command(subparsers, "benchmark-variants", run)
    parser.add_argument("--model", required=True, help="checkpoint directory (a pretrained model or a fine-tuned "
                                                       "head)")
    parser.add_argument("--genome", required=True, help="reference FASTA (plain or bgzip)")
    parser.add_argument("--labels", required=True,
                        help="labels table: .tsv, .csv or .parquet with columns chrom, pos (1-based), "
                             "ref, alt, label (1/0, true/false, pathogenic/benign, positive/negative)")
    parser.add_argument("--out", default="benchmark", help="output folder (default: benchmark)")
    parser.add_argument("--methods", nargs="+",
                        help="methods to score: head (a fine-tuned head), mlm_llr, llr_per_bp (a pretrained model), "
                             "embed_dist, markov (the order-6 Markov chain baseline; needs no model) (default: "
                             "every method the model supports)")
    parser.add_argument("--match-on", default="match_group",
                        help="column of match groups (a positive with its matched negatives): adds the matched "
                             "AUROC and resamples whole groups (default: match_group when present; 'none': no groups)")
    parser.add_argument("--top-k", type=float, default=0.01,
                        help="the odds ratio's top: a fraction of the scored variants (default 0.01) or a count")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tss", help="TSS BED (stranded), for a TSS-anchored head")
    parser.add_argument("--rc", choices=("average", "forward"),
                        help="average forward and reverse-complement windows, or forward only (default: the "
                             "model's strand rule; average for a pretrained model)")
    parser.add_argument("--window-bp", type=int, help="window in bp, for a pretrained model (default as `score`)")
    parser.add_argument("--eval-length", type=int, help="padded token length, for a pretrained model")
    parser.add_argument("--batch-size", type=int, default=16, help="sequences per model call (default 16)")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda")
