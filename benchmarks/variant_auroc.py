"""Zero-shot `mlm_llr` on the embedded default's VCF: AUROC of −LLR for the disruptive variants against
all neutral ones and against the in-element controls, with stratified bootstrap intervals, beside an
order-k Markov chain over bases trained on the same genome (the cheap baseline that could fake it).

A multi-allelic record scores the mean over its ALTs; the REF-mismatch record is not scored. Rows for
SNVs only remove the length confound of indels (a deletion's shorter span reads as more likely).

    python benchmarks/variant_auroc.py --model runs/demo/pretrain/model --data runs/demo/data
    python benchmarks/variant_auroc.py --model M --data D --window-bp 2000 --eval-length 512 --rc forward
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from dnabird.genome.reference import Genome
from dnabird.variants import score_variants


def markov_scores(genome: Genome, truth: pd.DataFrame, order: int) -> pd.DataFrame:
    """log P(ALT) − log P(REF) of the bases around each variant under an order-`order` Markov chain
    (add-one smoothed (order+1)-mer counts over the genome), raw and per bp; mean over a record's ALTs."""
    codes = {name: np.frombuffer(genome.fetch(name, 0, n).sequence.upper().encode(), np.uint8)
             for name, n in genome.lengths.items()}
    lookup = np.full(256, 4, np.int64)
    lookup[list(b"ACGT")] = np.arange(4)
    counts = np.zeros(4 ** (order + 1))
    for seq in codes.values():
        x = lookup[seq]
        if len(x) <= order:
            continue
        windows = np.lib.stride_tricks.sliding_window_view(x, order + 1)
        clean = (windows < 4).all(1)
        counts += np.bincount((windows[clean] * 4 ** np.arange(order, -1, -1)).sum(1), minlength=len(counts))
    table = counts.reshape(-1, 4) + 1
    log_p = np.log(table / table.sum(1, keepdims=True)).reshape(-1)

    def log_likelihood(text: str) -> float:
        x = lookup[np.frombuffer(text.encode(), np.uint8)]
        windows = np.lib.stride_tricks.sliding_window_view(x, order + 1)
        windows = windows[(windows < 4).all(1)]
        return float(log_p[(windows * 4 ** np.arange(order, -1, -1)).sum(1)].sum())

    rows = []
    for record in truth.itertuples():
        first = record.pos - 1
        left = genome.fetch(record.chrom, first - order, first).sequence.upper()
        right = genome.fetch(record.chrom, first + len(record.ref), first + len(record.ref) + order).sequence.upper()
        ref = log_likelihood(left + record.ref + right)
        llr = [log_likelihood(left + alt + right) - ref for alt in record.alt.split(",")]
        per_bp = [log_likelihood(left + alt + right) / (len(alt) + order) - ref / (len(record.ref) + order)
                  for alt in record.alt.split(",")]
        rows.append((record.id, np.mean(llr), np.mean(per_bp)))
    return pd.DataFrame(rows, columns=["id", "llr", "llr_per_bp"])


def auroc_with_interval(positive: np.ndarray, negative: np.ndarray, reps: int, seed: int = 0):
    """AUROC (positives score higher) and its 95 % stratified-bootstrap percentile interval."""
    labels = np.r_[np.ones(len(positive)), np.zeros(len(negative))]
    point = roc_auc_score(labels, np.r_[positive, negative])
    rng = np.random.default_rng(seed)
    draws = [roc_auc_score(labels, np.r_[rng.choice(positive, len(positive)), rng.choice(negative, len(negative))])
             for _ in range(reps)]
    return point, *np.percentile(draws, [2.5, 97.5])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="pretrained checkpoint directory")
    parser.add_argument("--data", required=True,
                        help="toy data folder (toy_hg19.fa, variants.vcf, variant_truth.tsv)")
    parser.add_argument("--window-bp", type=int, default=2000)
    parser.add_argument("--eval-length", type=int, default=512)
    parser.add_argument("--flank-bp", type=int, default=0)
    parser.add_argument("--rc", default="average", choices=("average", "forward"))
    parser.add_argument("--markov-order", type=int, default=5)
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    truth = pd.read_csv(f"{args.data}/variant_truth.tsv", sep="\t")
    genome = Genome(f"{args.data}/toy_hg19.fa")
    start = time.perf_counter()
    scores = score_variants(args.model, genome, f"{args.data}/variants.vcf", method="mlm_llr", rc=args.rc,
                            window_bp=args.window_bp, eval_length=args.eval_length, flank_bp=args.flank_bp,
                            batch_size=args.batch_size, device="cpu")
    seconds = time.perf_counter() - start
    model = pd.DataFrame({"id": scores.units["id"], "llr": scores.diff[:, 0], "llr_per_bp": scores.diff[:, 1]})
    model = model.groupby("id", sort=False).mean().reset_index()
    markov = markov_scores(genome, truth[truth["id"].isin(model["id"])], args.markov_order)
    single = truth["alt"].str.split(",").map(lambda alts: all(len(alt) == 1 for alt in alts))
    truth["snv"] = (truth["ref"].str.len() == 1) & single
    truth["control"] = (truth["label"] == "neutral") & (truth["element"] != ".")
    summary = scores.summary()
    print(f"{summary['scored_alleles']} alleles scored in {seconds:.0f} s, not scored: {summary['skipped_by_reason']}")
    print(f"settings: {scores.settings}")
    labels = truth.merge(model, on="id")
    print(f"records scored: disruptive {int((labels['label'] == 'disruptive').sum())}, neutral "
          f"{int((labels['label'] == 'neutral').sum())} (in-element controls {int(labels['control'].sum())})\n")
    print("| scorer | score | disruptive vs all neutral | vs in-element controls | SNVs: vs all neutral "
          "| SNVs: vs controls |")
    print("|---|---|---|---|---|---|")
    for name, table in ((f"mlm_llr ({args.rc})", model), (f"Markov order {args.markov_order}", markov)):
        merged = truth.merge(table, on="id")  # the records both scored
        for column in ("llr", "llr_per_bp"):
            cells = []
            for snv_only in (False, True):
                for negatives in (merged["label"] == "neutral", merged["control"]):
                    keep = merged["snv"] | (not snv_only)
                    positive = -merged.loc[keep & (merged["label"] == "disruptive"), column].to_numpy()
                    negative = -merged.loc[keep & negatives, column].to_numpy()
                    point, low, high = auroc_with_interval(positive, negative, args.bootstrap)
                    cells.append(f"{point:.3f} [{low:.2f}, {high:.2f}]")
            print(f"| {name} | −{column} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
