"""`dnabird score`: score the variants of a VCF with a model (a fine-tuned head, zero-shot mlm_llr or the
embedding distance)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dnabird.commands import add_command, options

FORMATS = ("tsv", "parquet", "hdf5", "vcf")
MODEL_OPTIONS = ("method", "rc", "window_bp", "eval_length", "flank_bp", "batch_size", "device")  # of add_model_options
PASS_OPTIONS = ("variants_per_pass", "pass_spacing_bp", "precision")


def run(args: argparse.Namespace) -> None:
    """score the variants of a VCF with a model

    Score every ALT allele of a VCF, in chunks of records saved as they complete: an interrupted run, rerun
    with the same command, continues where it stopped. Under torchrun each rank scores a slice of the
    records; rank 0 writes the merged output."""
    from dnabird.io import check_outputs
    from dnabird.variants.resume import OutputPaths, output_format, score_variants_to_files

    paths = OutputPaths(Path(args.out))
    kind = output_format(args.out, args.format)
    files = [paths.out, paths.unscored, paths.record] + ([paths.background] if args.background else [])
    check_outputs(files, folders=[paths.partial], inputs=[args.vcf, args.genome, f"{args.genome}.fai", args.tss])
    record = score_variants_to_files(args.model, args.genome, args.vcf, paths.out, format=kind, tss=args.tss,
                                     on_ref_mismatch=args.on_ref_mismatch, bp_per_token=args.bp_per_token,
                                     background=args.background,
                                     background_seed=args.background_seed, chunk_records=args.chunk_records,
                                     restart=args.restart, **options(args, *MODEL_OPTIONS, *PASS_OPTIONS))
    if record is None:  # a torchrun rank other than 0
        return
    summary = record["summary"]
    print(f"wrote {paths.out} ({kind}): {summary['scored_alleles']} alleles scored in {summary['scored_windows']} "
          f"windows; {summary['skipped_alleles']} not scored (reasons in {paths.unscored.name})")
    for reason, count in summary["skipped_by_reason"].items():
        print(f"  not scored, {reason}: {count}")
    print(f"  REF mismatches: {summary['ref_mismatches']}")
    if summary["clipped_windows"]:
        print(f"  windows clipped at an N run or contig end to fit the model: {summary['clipped_windows']} "
              "(columns clip_left/clip_right)")
    if "background" in record:
        print(f"  background: {record['background']['summary']['scored_alleles']} random SNVs scored "
              f"({paths.background.name}); quantiles among them in the q_* columns")


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by `score` and `ism`."""
    parser.add_argument("--model", required=True, help="checkpoint directory (config.json, model.safetensors, "
                                                       "tokenizer .model or tokenizer.json, task.json for a "
                                                       "fine-tuned head)")
    parser.add_argument("--genome", required=True, help="reference FASTA (plain or bgzip)")
    parser.add_argument("--method", default="auto",
                        help="a scoring method of dnabird.variants.scorer.SCORERS: head (the fine-tuned head), "
                             "mlm_llr (zero-shot masked-LM log-likelihood ratio), embed_dist (distance between the "
                             "REF and ALT windows' embeddings); auto: head when the model has a task.json, else "
                             "mlm_llr (default)")
    parser.add_argument("--rc", choices=("average", "forward"),
                        help="average forward and reverse-complement windows, or forward only "
                             "(default: the model's strand rule; average for a pretrained model)")
    parser.add_argument("--window-bp", type=int, help="window in bp, for a model without task.json (default: "
                                                      "the odd window that fills the eval length at the model's "
                                                      "bp per token)")
    parser.add_argument("--eval-length", type=int, help="most tokens per window, for a model without task.json "
                                                        "(default: what --window-bp needs, else the model's "
                                                        "positions)")
    parser.add_argument("--flank-bp", type=int, default=0, help="mlm_llr: bp masked beyond the variant's tokens")
    parser.add_argument("--batch-size", type=int, default=16, help="sequences per model call (default 16)")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda")


def register(subparsers) -> None:
    parser = add_command(subparsers, "score", run, resumes_itself=True)
    add_model_options(parser)
    parser.add_argument("--vcf", required=True, help="variants (VCF, plain or bgzip)")
    parser.add_argument("--out", required=True, help="output file; also writes OUT.unscored.tsv and OUT.json")
    parser.add_argument("--format", choices=FORMATS,
                        help="tsv or parquet (long table), hdf5 (arrays) or vcf (the input with INFO added); "
                             "default from the file name, else tsv")
    parser.add_argument("--tss", help="TSS BED (stranded), for TSS-anchored heads")
    parser.add_argument("--bp-per-token", type=float,
                        help="mlm_llr: the tokenizer's bp per token that sizes default windows (default: the "
                             "figure stored with the checkpoint, else its bp per token on a fixed random sequence)")
    parser.add_argument("--variants-per-pass", type=int, help="mlm_llr: variants masked in one shared pass "
                                                              "(default 16; 1: the exact method, one per pass)")
    parser.add_argument("--pass-spacing-bp", type=int, help="mlm_llr: least bp between two masked spans of a "
                                                            "shared pass (default 100)")
    parser.add_argument("--precision", default="fp32", choices=("fp32", "bf16"),
                        help="bf16: bfloat16 autocast where the CPU or GPU has it (default fp32)")
    parser.add_argument("--on-ref-mismatch", default="skip", choices=("skip", "genome"),
                        help="skip alleles whose REF differs from the genome, or score them with the genome's "
                             "bases (flagged ref_match=False); default skip")
    parser.add_argument("--background", type=int, default=0, metavar="N",
                        help="also score N random SNVs of the genome (same model and settings), write them to "
                             "OUT.background.tsv and add each score's quantile among theirs (q_* columns)")
    parser.add_argument("--background-seed", type=int, default=0, help="seed of the background draw (default 0)")
    parser.add_argument("--chunk-records", type=int, default=1000,
                        help="VCF records scored per saved chunk (default 1000); a rerun of an "
                             "interrupted run continues after its last saved chunk")
    parser.add_argument("--restart", action="store_true",
                        help="discard a partial run (OUT.partial/) with other settings or inputs instead of "
                             "refusing to mix them")
