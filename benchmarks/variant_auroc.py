"""Zero-shot `mlm_llr` on the embedded default's VCF: AUROC of −LLR for the disruptive variants against
the distant neutral ones and against the in-element controls, with bootstrap intervals, beside an
order-k Markov chain over bases (the held-out report's, fitted on the run's training shards) scoring the
same masked spans: the cheap baseline that could fake it.

A multi-allelic record scores the mean over its ALTs; the REF-mismatch record is not scored. Rows for
SNVs only remove the length confound of indels (a deletion's shorter span reads as more likely).

    python benchmarks/variant_auroc.py --run runs/demo                      # after make demo
    python benchmarks/variant_auroc.py --run RUN --window-bp 400 --eval-length 128 --rc forward
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from dnabird.genome.reference import Genome
from dnabird.variants import score_variants
from dnabird.variants.evaluate import read_truth, truth_rankings
from dnabird.variants.records import read_alleles


def markov_scores(run: Path, genome: Genome, alleles, settings: dict, clips: dict, max_order: int) -> pd.DataFrame:
    """The held-out report's order-k Markov chain (fitted on the run's training shards) scoring the same
    masked span of the same windows as mlm_llr (`dnabird.variants.baseline.markov_llr`, clipped as mlm_llr
    clipped them: `clips`, (record, allele) -> bp cut from each end); mean over a record's ALTs."""
    from dnabird.data.shards import ShardReader
    from dnabird.model.checkpoint import read_tokenizer
    from dnabird.pretraining.markov import MarkovBaseline
    from dnabird.variants.baseline import markov_llr
    from dnabird.variants.windows import centred_windows

    tokenizer = read_tokenizer(run / "pretrain" / "model")
    markov = MarkovBaseline.fit(ShardReader(run / "shards" / "train"), tokenizer, max_order=max_order)
    rows = []
    for allele in alleles:
        forward = centred_windows(genome, allele.variant, settings["window_bp"])
        cut_left, cut_right = clips[allele.record, allele.allele]
        if cut_left or cut_right:
            forward = forward.clip(forward.ref_at - cut_left,
                                   len(forward.ref) - forward.ref_at - forward.ref_length - cut_right)
        llr, per_bp = markov_llr(markov, tokenizer, forward, settings["rc"] == "average", settings["flank_bp"],
                                 max_order)
        rows.append((allele.variant.id, llr, per_bp))
    return pd.DataFrame(rows, columns=["id", "llr", "llr_per_bp"]).groupby("id", sort=False).mean().reset_index()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", default="runs/demo", help="a demo run folder: pretrain/model, shards/train, and "
                                                            "data/ (toy_hg19.fa, variants.vcf, variant_truth.tsv)")
    parser.add_argument("--data", help="the toy data folder, if not RUN/data (the same seed's genome)")
    parser.add_argument("--window-bp", type=int, default=2001)
    parser.add_argument("--eval-length", type=int, default=512)
    parser.add_argument("--flank-bp", type=int, default=0)
    parser.add_argument("--rc", default="average", choices=("average", "forward"))
    parser.add_argument("--markov-order", type=int, default=6)
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    run = Path(args.run)
    data = Path(args.data or run / "data")
    truth = read_truth(data / "variant_truth.tsv")
    genome = Genome(data / "toy_hg19.fa")
    start = time.perf_counter()
    scores = score_variants(run / "pretrain" / "model", genome, data / "variants.vcf", method="mlm_llr",
                            rc=args.rc, window_bp=args.window_bp, eval_length=args.eval_length, flank_bp=args.flank_bp,
                            batch_size=args.batch_size, device="cpu")
    seconds = time.perf_counter() - start
    model = pd.DataFrame({"id": scores.units["id"], "llr": scores.diff[:, 0], "llr_per_bp": scores.diff[:, 1]})
    model = model.groupby("id", sort=False).mean().reset_index()
    clips = {(r.record, r.allele): (r.clip_left, r.clip_right) for r in scores.units.itertuples()}
    alleles = [a for a in read_alleles(data / "variants.vcf") if (a.record, a.allele) in clips]
    markov = markov_scores(run, genome, alleles, scores.settings, clips, args.markov_order)
    single = truth["alt"].str.split(",").map(lambda alts: all(len(alt) == 1 for alt in alts))
    truth["snv"] = (truth["ref"].str.len() == 1) & single
    summary = scores.summary()
    print(f"{summary['scored_alleles']} alleles scored in {seconds:.0f} s, not scored: {summary['skipped_by_reason']}")
    print(f"settings: {scores.settings}")
    labels = truth.merge(model, on="id")
    print(f"records scored: {labels['class'].value_counts().to_dict()}\n")
    print("| scorer | score | disruptive vs distant neutral | vs in-element controls | SNVs: vs distant neutral "
          "| SNVs: vs controls |")
    print("|---|---|---|---|---|---|")
    for name, table in ((f"mlm_llr ({args.rc})", model), (f"Markov order {args.markov_order}", markov)):
        for column in ("llr", "llr_per_bp"):
            effects = table.assign(effect=-table[column])
            cells = []
            for snv_only in (False, True):
                rows = truth_rankings(effects, truth[truth["snv"]] if snv_only else truth, "effect",
                                      resamples=args.bootstrap)
                cells += [f"{r['auroc']:.3f} [{r['auroc_interval'][0]:.2f}, {r['auroc_interval'][1]:.2f}]"
                          for r in (rows["distant_neutral"], rows["in_element_control"])]
            print(f"| {name} | −{column} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
