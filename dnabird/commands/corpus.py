"""`dnabird corpus`: cut a reference genome into the pretraining corpus (documents of sentences)."""

from __future__ import annotations

import argparse

from dnabird.commands import add_command, options
from dnabird.data.corpus import CorpusConfig, build_corpus

_DEFAULTS = CorpusConfig()


def run(args: argparse.Namespace) -> None:
    """cut a genome FASTA into documents of sentences for pretraining

    Cut each chromosome into 500-1000 bp sentences grouped into documents of 50-100 sentences, one pass per set of
    random cut points; held-out chromosomes go to a separate split. An interrupted run resumes from its completed
    parts."""
    config = CorpusConfig(
        min_sentence_bp=args.sentence_bp[0], max_sentence_bp=args.sentence_bp[1],
        min_document_sentences=args.document_sentences[0], max_document_sentences=args.document_sentences[1],
        **options(args, "passes", "seed", "max_offset_bp", "max_n_fraction", "contigs", "held_out"))
    report = build_corpus(args.fasta, args.out, config)
    for split, counts in report["splits"].items():
        print(f"{split:>8}: {counts['documents']} documents, {counts['sentences']} sentences, "
              f"{counts['bp']} bp from {len(counts['contigs'])} contigs")
    print(f" skipped: {report['skipped']['too_many_n']['sentences']} sentences with too many N")
    print(f"  corpus: {args.out} (report.json)")


def register(subparsers) -> None:
    parser = add_command(subparsers, "corpus", run)
    parser.add_argument("--fasta", required=True, help="reference genome FASTA (plain or bgzip)")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--passes", type=int, default=_DEFAULTS.passes,
                        help="passes with new cut points (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=_DEFAULTS.seed, help="base seed")
    parser.add_argument("--contigs", nargs="+", default=None, metavar="NAME",
                        help="contigs to use (default: chr1-22, X, Y present in the FASTA)")
    parser.add_argument("--held-out", nargs="*", default=list(_DEFAULTS.held_out), metavar="NAME",
                        help="contigs for the held-out split (default: %(default)s)")
    parser.add_argument("--sentence-bp", nargs=2, type=int, metavar=("MIN", "MAX"),
                        default=(_DEFAULTS.min_sentence_bp, _DEFAULTS.max_sentence_bp),
                        help="sentence length range in bp (default: %(default)s)")
    parser.add_argument("--document-sentences", nargs=2, type=int, metavar=("MIN", "MAX"),
                        default=(_DEFAULTS.min_document_sentences, _DEFAULTS.max_document_sentences),
                        help="sentences per document (default: %(default)s)")
    parser.add_argument("--max-offset-bp", type=int, default=_DEFAULTS.max_offset_bp,
                        help="each pass starts at a random offset up to this")
    parser.add_argument("--max-n-fraction", type=float, default=_DEFAULTS.max_n_fraction,
                        help="skip sentences with a larger fraction of N (default: %(default)s)")
