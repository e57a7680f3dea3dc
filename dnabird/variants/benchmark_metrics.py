"""How well one score ranks labelled variants: AUROC, AUPRC, AUPRC by chromosome, the odds ratio of the top k
and, with match groups, the matched AUROC — each with a percentile-bootstrap interval.

Every metric is computed from per-variant weights (`dnabird.finetune.metrics.weighted_binary`), so the point
estimate (all weights 1) and each bootstrap resample go through the same code. Resamples draw variants with
replacement, or whole match groups when there are groups (a positive with its matched negatives).

- AUROC, AUPRC: as `dnabird.finetune.metrics` (AUPRC = average precision, scikit-learn's definition).
- AUPRC by chromosome: TraitGym's main metric (`AUPRC_by_chrom_weighted_average`, rules
  `get_metric_by_block` and `get_metric_by_block_weighted_average` of its workflow/rules/model.smk): the AUPRC
  of each chromosome's variants, averaged with weights = each chromosome's number of variants (both classes).
  A chromosome without a positive has no AUPRC and is left out (TraitGym's sets have none such).
- Odds ratio of the top k: the variants scoring at or above the k-th highest score (ties at the cut all
  join the top) vs the rest, (top positives × rest negatives) / (top negatives × rest positives); with a
  zero cell, 0.5 is added to every cell (Haldane-Anscombe), so it stays finite.
- Matched AUROC: the fraction of (positive, negative) pairs of the same match group that the score orders
  correctly, ties one half — AUROC within groups, pooled over their pairs.
"""

from __future__ import annotations

import math

import numpy as np

from dnabird.errors import reject
from dnabird.finetune.metrics import finite_or_none, percentile_interval, resample_weights, weighted_binary

METRICS = ("auroc", "auprc", "auprc_by_chrom", "odds_ratio", "matched_auroc")


def top_count(top_k: float, n: int) -> int:
    """k of the odds ratio: `top_k` itself when it is a whole number >= 1, else that fraction of the `n`
    scored variants, rounded up (at least one)."""
    reject(not top_k > 0 or (top_k >= 1 and top_k != int(top_k)), "top_k", top_k,
           "a fraction in (0, 1) or a whole number of variants >= 1")
    return int(top_k) if top_k >= 1 else max(1, math.ceil(top_k * n))


def _odds_ratio(labels: np.ndarray, scores: np.ndarray, weights: np.ndarray, k: int) -> tuple[np.ndarray, dict]:
    """The top-k odds ratio per row of `weights` [R, N] and the 2x2 counts of the first row."""
    order = np.argsort(-scores, kind="stable")
    s, y, w = scores[order], labels[order], weights[:, order]
    last_of_tie = np.append(s[1:] != s[:-1], True)
    top_pos = np.cumsum(w * y, axis=1)[:, last_of_tie]  # [R, thresholds]: positives scoring >= each threshold
    top_neg = np.cumsum(w * ~y, axis=1)[:, last_of_tie]
    reached = top_pos + top_neg >= k                    # the first threshold that takes k variants in
    cut = np.where(reached.any(1), reached.argmax(1), reached.shape[1] - 1)
    rows = np.arange(len(w))
    a, b = top_pos[rows, cut], top_neg[rows, cut]
    c, d = top_pos[:, -1] - a, top_neg[:, -1] - b
    cells = np.stack([a, b, c, d])
    cells = np.where((cells == 0).any(0), cells + 0.5, cells)
    counts = dict(zip(("top_positives", "top_negatives", "rest_positives", "rest_negatives"),
                      (int(round(x[0])) for x in (a, b, c, d)), strict=True))
    return cells[0] * cells[3] / (cells[1] * cells[2]), counts


def _matched(labels: np.ndarray, scores: np.ndarray, groups: np.ndarray, weights: np.ndarray) -> tuple:
    """Matched AUROC per row of `weights` (constant within a group) and the number of groups with pairs."""
    ids = np.unique(groups, return_inverse=True)[1]
    wins, pairs, firsts = [], [], []
    for group in range(ids.max() + 1):
        members = np.flatnonzero(ids == group)
        positive, negative = scores[members[labels[members]]], scores[members[~labels[members]]]
        if len(positive) and len(negative):
            diff = positive[:, None] - negative[None, :]
            wins.append((diff > 0).sum() + 0.5 * (diff == 0).sum())
            pairs.append(diff.size)
            firsts.append(members[0])
    if not pairs:
        return np.full(len(weights), np.nan), 0
    drawn = weights[:, firsts]  # how often each group was drawn
    with np.errstate(invalid="ignore", divide="ignore"):
        return (drawn @ np.array(wins)) / (drawn @ np.array(pairs, float)), len(pairs)


def _by_chrom(labels: np.ndarray, scores: np.ndarray, chroms: np.ndarray, weights: np.ndarray) -> tuple:
    """AUPRC by chromosome, weighted by variants, per row of `weights`; and each chromosome's point values."""
    total = np.zeros(len(weights))
    summed = np.zeros(len(weights))
    table = {}
    for chrom in dict.fromkeys(chroms):
        members = chroms == chrom
        auprc = weighted_binary(labels[members], scores[members], weights[:, members])["auprc"]
        n = weights[:, members].sum(1)
        defined = np.isfinite(auprc)
        summed += np.where(defined, auprc * n, 0.0)
        total += np.where(defined, n, 0.0)
        table[str(chrom)] = {"variants": int(members.sum()), "positives": int(labels[members].sum()),
                             "auprc": float(auprc[0]) if defined[0] else None}
    with np.errstate(invalid="ignore", divide="ignore"):
        return summed / total, table


def ranking_metrics(labels, scores, chroms, *, groups=None, top_k: float = 0.01, resamples: int = 1000,
                    seed: int = 0, level: float = 0.95) -> dict:
    """The module docstring's metrics of `scores` (higher = more likely positive) for 0/1 `labels`, with
    each variant's chromosome; `groups`: match groups (matched AUROC; whole groups are resampled).
    Returns counts, each metric (None where undefined) and `<metric>_interval`, the per-chromosome table,
    the 2x2 counts of the top k."""
    labels, scores = np.asarray(labels).astype(bool), np.asarray(scores, dtype=np.float64)
    chroms = np.asarray(chroms).astype(str)
    reject(len(labels) == 0 or labels.shape != scores.shape or chroms.shape != labels.shape, "labels, scores, chroms",
           (labels.shape, scores.shape, chroms.shape), "three non-empty 1-D arrays of one length")
    reject(not np.isfinite(scores).all(), "scores", "NaN/inf", "finite scores (leave unscored variants out)")
    reject(resamples < 1, "resamples", resamples, "an integer >= 1")
    groups = None if groups is None else np.asarray(groups).astype(str)
    weights = np.vstack([np.ones((1, len(labels))), resample_weights(len(labels), groups, resamples, seed)])
    k = top_count(top_k, len(labels))
    values = {name: weighted_binary(labels, scores, weights)[name] for name in ("auroc", "auprc")}
    values["auprc_by_chrom"], chromosomes = _by_chrom(labels, scores, chroms, weights)
    values["odds_ratio"], counts = _odds_ratio(labels, scores, weights, k)
    out = {"variants": int(len(labels)), "positives": int(labels.sum()), "negatives": int((~labels).sum())}
    if groups is not None:
        values["matched_auroc"], out["matched_groups"] = _matched(labels, scores, groups, weights)
    for name, series in values.items():
        resampled = series[1:]
        out[name] = finite_or_none(series[0])
        out[f"{name}_interval"] = percentile_interval(resampled[np.isfinite(resampled)], level)
    out.update(chromosomes=chromosomes, top_k=k, top_counts=counts)
    return out
