"""Variant-scoring throughput (variants/s) with `score_variants`, per method and strand setting.

A random-weight model and a DNA tokenizer (vocab 1024, trained on a small toy genome like the demo's)
score random SNVs of that genome; the weights do not change the speed. Rows: a classifier head with a
DeepSEA-like task (centred window, `--outputs` labels) forward only and RC-averaged (2 and 4 passes per
variant), and zero-shot mlm_llr (up to 2 or 4 masked passes: one serves REF and ALT when their masked
inputs coincide). Each `--methods` entry is method:strands, and for mlm_llr optionally :exact (one
variant per pass) or :shared (the default: nearby variants share passes, `dnabird.variants.marginals`);
`--precisions fp32 bf16` runs every entry in each. The ratio column compares each row to the first.
mlm_llr rows also give the largest |LLR difference| from the first mlm_llr row on the variants both scored
(the exact method's, when it comes first) and the Spearman correlation over them; rows in a later precision
the largest |LLR difference| from the same entry in the first precision (all its variants).

    python benchmarks/variant_scoring.py                                   # CPU, tiny, 1 kb windows
    python benchmarks/variant_scoring.py --model bigbird-base --window-bp 8000 --device cuda --variants 4000 \\
        --batch-size 64 --outputs 919                                      # the GPU figure
    python benchmarks/variant_scoring.py --model gena --eval-length 4096 --snv-every-bp 1000 --variants 32 \\
        --exact-variants 3 --batch-size 2 --methods mlm_llr:average:exact mlm_llr:average:shared \\
        --precisions fp32 bf16                          # GENA-LM's layout and tokenizer: the acceptance table

`--model gena` is GENA-LM's `gena-lm-bigbird-base-t2t` layout (as `benchmarks/model.py`'s) with its published
tokenizer (`--tokenizer`, default the copy under tests/data) instead of a trained one. `--snv-every-bp N`
places the SNVs N bp apart along the toy genome's chr1 (real-like sequence: its Markov background,
planted elements and repeats) instead of at random; exact rows score only the first `--exact-variants`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import spearmanr

from dnabird.data.tokenizer import Tokenizer, load_tokenizer
from dnabird.datasets.toy import generate
from dnabird.genome.reference import Genome
from dnabird.model.config import preset
from dnabird.model.heads import PretrainingModel, SequenceClassifier
from dnabird.model.task_spec import TaskSpec
from dnabird.variants import Variant, score_variants

GENA_TOKENIZER = Path(__file__).resolve().parent.parent / "tests" / "data" / "gena_lm_t2t_1000h_multi_32k"


def random_snvs(genome: Genome, count: int, margin: int, seed: int = 0) -> list[Variant]:
    rng = np.random.default_rng(seed)
    chroms = [c for c, n in genome.lengths.items() if n > 4 * margin]
    variants = []
    while len(variants) < count:
        chrom = chroms[int(rng.integers(len(chroms)))]
        pos = int(rng.integers(margin, genome.length(chrom) - margin))
        ref = genome.fetch(chrom, pos - 1, pos).sequence.upper()
        if ref in "ACGT":
            variants.append(Variant(chrom, pos, ref, "ACGT"[("ACGT".index(ref) + 1) % 4]))
    return variants


def spaced_snvs(genome: Genome, count: int, every: int, margin: int) -> list[Variant]:
    """`count` SNVs `every` bp apart along chr1 from `margin` bp in (REF from the genome, ALT the next base)."""
    variants = []
    for pos in range(margin, genome.length("chr1") - margin, every):
        ref = genome.fetch("chr1", pos - 1, pos).sequence.upper()
        if ref in "ACGT":
            variants.append(Variant("chr1", pos, ref, "ACGT"[("ACGT".index(ref) + 1) % 4]))
        if len(variants) == count:
            return variants
    raise SystemExit(f"chr1 holds fewer than {count} SNVs {every} bp apart")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny", help="preset: tiny or bigbird-base, or gena (GENA-LM's layout)")
    parser.add_argument("--tokenizer", default=None, help="--model gena: its tokenizer (default: GENA-LM's)")
    parser.add_argument("--window-bp", type=int, default=None, help="default 1000, or what --eval-length fills")
    parser.add_argument("--eval-length", type=int, default=None, help="padded tokens (default: what the window needs)")
    parser.add_argument("--variants", type=int, default=200)
    parser.add_argument("--exact-variants", type=int, default=None, help="variants for mlm_llr:…:exact rows")
    parser.add_argument("--snv-every-bp", type=int, default=None, help="SNVs this far apart along chr1")
    parser.add_argument("--precisions", nargs="+", default=["fp32"], choices=("fp32", "bf16"))
    parser.add_argument("--outputs", type=int, default=919)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--methods", nargs="+", default=["head:forward", "head:average", "mlm_llr:forward",
                                                         "mlm_llr:average"])
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="variant-bench-"))
    paths = generate(work / "toy", seed=0, scale=0.3)
    genome = Genome(paths["fasta"])
    sample = [genome.fetch(c, s, s + 1000).sequence.upper() for c in genome.contigs[:7]
              for s in range(20_000, genome.length(c) - 20_000, 5_000)]
    if args.model == "gena":
        from model import GENA_LAYOUT  # benchmarks/model.py, beside this script

        from dnabird.model.hf import config_from_hf

        tokenizer = load_tokenizer(args.tokenizer or GENA_TOKENIZER)
        config = config_from_hf(GENA_LAYOUT)
    else:
        tokenizer = Tokenizer.train(sample, work / "dna.model", vocab_size=1024, sample_size=len(sample),
                                    num_threads=1)
        config = preset(args.model, vocab_size=tokenizer.vocab_size, dropout=0.0, attention_dropout=0.0)
    bp_per_token = tokenizer.bp_per_token(sample)
    block = config.pattern().block_size
    if args.window_bp is None:  # as score_variants sizes it: the odd window that fills the eval length
        args.window_bp = max(1, int((args.eval_length - 2) * bp_per_token / 1.25) - 1) | 1 \
            if args.eval_length else 1000
    eval_length = args.eval_length or -(-int(1.25 * args.window_bp / bp_per_token + 2) // block) * block
    labels = [f"feature_{i}" for i in range(args.outputs)]
    task = TaskSpec(task="bench", problem="multilabel", labels=labels, eval_length=eval_length,
                    window_length=args.window_bp, anchor="centre", strand_rule="both")
    models = {"head": SequenceClassifier(config, len(labels), problem="multilabel"),
              "mlm_llr": PretrainingModel(config, nsp=args.model != "gena")}
    rows = []
    for model in models.values():
        model.register_forward_hook(lambda module, inputs, out: rows.append(len(inputs[0])))
    variants = spaced_snvs(genome, args.variants, args.snv_every_bp, args.window_bp) if args.snv_every_bp \
        else random_snvs(genome, args.variants, args.window_bp)
    print(f"{args.model} on {args.device} ({torch.get_num_threads()} threads), {args.window_bp}-bp windows "
          f"({bp_per_token:.2f} bp/token, eval length {eval_length}), {len(variants)} SNVs"
          f"{f' {args.snv_every_bp} bp apart' if args.snv_every_bp else ''}, batch {args.batch_size}")
    print("| method | strands | passes | precision | variants | model passes / variant | variants/s | vs first row "
          "| max abs ΔLLR vs first mlm_llr row | Spearman | max abs ΔLLR vs first precision |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    baseline, reference, first_precision = None, None, {}
    for precision in args.precisions:
        for entry in args.methods:
            method, rc, *passes = entry.split(":")
            options = dict(method=method, rc=rc, batch_size=args.batch_size, device=args.device, progress=False,
                           tokenizer=tokenizer, task=task if method == "head" else None, precision=precision)
            chosen = variants
            if method == "mlm_llr":
                exact = passes == ["exact"]
                options.update(window_bp=args.window_bp, eval_length=eval_length,
                               variants_per_pass=1 if exact else None)
                chosen = variants[:args.exact_variants] if exact and args.exact_variants else variants
            if not args.exact_variants:  # warm-up (skipped when the exact rows are cut short: too slow)
                score_variants(models[method], genome, chosen[: max(4, args.batch_size // 2)], **options)
            rows.clear()
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            start = time.perf_counter()
            scores = score_variants(models[method], genome, chosen, **options)
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            rate = len(scores.units) / (time.perf_counter() - start)
            baseline = baseline or rate
            agreement = "| | |"
            if method == "mlm_llr":
                llr = dict(zip(scores.units["pos"], scores.diff[:, 0], strict=True))
                reference = reference or llr
                common = [pos for pos in llr if pos in reference]
                a, b = np.array([reference[p] for p in common]), np.array([llr[p] for p in common])
                rho = spearmanr(a, b)[0] if len(common) > 2 else float("nan")
                agreement = f"| {np.abs(a - b).max():.3g} ({len(common)} SNVs) | {rho:.4f} |"
            first = first_precision.setdefault(entry, scores.diff[:, 0])
            agreement += f" {np.abs(first - scores.diff[:, 0]).max():.3g} |" if precision != args.precisions[0] else \
                " |"
            print(f"| {method} | {rc} | {passes[0] if passes else ''} | {precision} | {len(scores.units)} "
                  f"| {sum(rows) / len(scores.units):.2f} | {rate:.3g} | {rate / baseline:.2f}× {agreement}")


if __name__ == "__main__":
    main()
