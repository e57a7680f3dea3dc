"""Classification metrics with bootstrap 95 % intervals, one implementation for every problem kind.

Binary metrics are computed from per-example weights, so a point estimate (all weights 1) and each
bootstrap resample (weights = how often each example was drawn) go through the same code, vectorised
over resamples. Scores are probabilities of the positive class; predictions threshold them at 0.5.
AUROC is the Mann-Whitney probability that a positive outscores a negative (ties count one half);
AUPRC is average precision, Σ (R_k − R_{k−1}) P_k over the distinct score thresholds (scikit-learn's
definition). Undefined values (AUROC with one class present, precision with no positive call) are
None in point estimates and left out of intervals.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dnabird.errors import ParameterError, reject

BINARY_METRICS = ("accuracy", "precision", "recall", "f1", "mcc", "auroc", "auprc")
INTERVAL_METRICS = ("accuracy", "f1", "auroc", "auprc", "mcc")
LOWER_IS_BETTER = ("loss",)


def _check(labels: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    labels, scores = np.asarray(labels), np.asarray(scores, dtype=np.float64)
    if labels.shape != scores.shape or labels.ndim != 1 or len(labels) == 0:
        raise ParameterError("labels, scores", (labels.shape, scores.shape), "two non-empty 1-D arrays of one length")
    if not np.isin(labels, (0, 1)).all():
        raise ParameterError("labels", np.unique(labels)[:5].tolist(), "0 or 1")
    return labels.astype(bool), scores


def weighted_binary(labels: np.ndarray, scores: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Each metric for each row of `weights` ([R, N] example weights); NaN where undefined."""
    predicted = scores >= 0.5
    tp, fp, fn, tn = ((weights * (y & p)).sum(1) for p in (predicted, ~predicted) for y in (labels, ~labels))
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = tp / (tp + fp)
        recall = tp / (tp + fn)
        mcc = (tp * tn - fp * fn) / np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        out = {"accuracy": (tp + tn) / (tp + tn + fp + fn), "precision": precision, "recall": recall,
               "f1": 2 * tp / (2 * tp + fp + fn), "mcc": mcc, "tn": tn, "fp": fp, "fn": fn, "tp": tp}
        # ranking metrics: distinct thresholds, highest score first; ties share one threshold
        order = np.argsort(-scores, kind="stable")
        s, y, w = scores[order], labels[order], weights[:, order]
        last_of_tie = np.append(s[1:] != s[:-1], True)
        cum_pos = np.cumsum(w * y, axis=1)[:, last_of_tie]                 # [R, T] positives with score >= t
        cum_neg = np.cumsum(w * ~y, axis=1)[:, last_of_tie]
        pos_at = np.diff(cum_pos, axis=1, prepend=0.0)                      # positives at exactly t
        neg_at = np.diff(cum_neg, axis=1, prepend=0.0)
        total_pos, total_neg = cum_pos[:, -1], cum_neg[:, -1]
        # a negative at threshold t loses to every positive above it and ties with those at t
        wins = (neg_at * (cum_pos - pos_at) + 0.5 * neg_at * pos_at).sum(1)
        out["auroc"] = wins / (total_pos * total_neg)
        called = cum_pos + cum_neg                    # zero only above every example drawn in a resample
        precision_at = np.divide(cum_pos, called, out=np.zeros_like(called), where=called > 0)
        out["auprc"] = (pos_at * precision_at).sum(1) / total_pos
    out["auroc"][(total_pos == 0) | (total_neg == 0)] = np.nan
    return out


def resample_weights(n: int, groups: Sequence | None, resamples: int, seed: int) -> np.ndarray:
    """[resamples, n] weights: how often each example is drawn when whole `groups` (None: examples) are
    drawn with replacement."""
    rng = np.random.default_rng(seed)
    cluster = np.arange(n) if groups is None else np.unique(np.asarray(groups), return_inverse=True)[1]
    count = cluster.max() + 1
    draws = rng.integers(0, count, size=(resamples, count))
    weights = np.zeros((resamples, count))
    np.add.at(weights, (np.arange(resamples)[:, None], draws), 1.0)
    return weights[:, cluster]


def percentile_interval(values: np.ndarray, level: float) -> list[float] | None:
    """The central `level` percentile interval of the bootstrap `values` (None when there are none)."""
    tail = 100 * (1 - level) / 2
    return np.percentile(values, [tail, 100 - tail]).tolist() if len(values) else None


def finite_or_none(value: float) -> float | None:
    """`value` as a float, or None where it is NaN or infinite (undefined metrics in JSON)."""
    return float(value) if np.isfinite(value) else None


def binary_metrics(labels: Sequence[int], scores: Sequence[float]) -> dict:
    """Accuracy, precision, recall, F1, MCC, AUROC, AUPRC and the confusion matrix of one set of predictions."""
    labels, scores = _check(labels, scores)
    values = weighted_binary(labels, scores, np.ones((1, len(labels))))
    report = {name: finite_or_none(values[name][0]) for name in BINARY_METRICS}
    report["confusion"] = {cell: int(values[cell][0]) for cell in ("tn", "fp", "fn", "tp")}
    report["examples"], report["positives"] = int(len(labels)), int(labels.sum())
    return report


def bootstrap_intervals(labels: Sequence[int], scores: Sequence[float], *, groups: Sequence | None = None,
                        resamples: int = 1000, seed: int = 0, level: float = 0.95,
                        metrics: Sequence[str] = INTERVAL_METRICS) -> dict[str, list[float] | None]:
    """Percentile bootstrap interval of each metric: `resamples` draws with replacement of examples, or
    of whole `groups` (e.g. overlapping windows, a positive and its negative) when given."""
    labels, scores = _check(labels, scores)
    reject(resamples < 1 or not 0 < level < 1, "resamples, level", (resamples, level),
           "an integer >= 1 and a level in (0, 1)")
    values = weighted_binary(labels, scores, resample_weights(len(labels), groups, resamples, seed))
    return {name: percentile_interval(values[name][np.isfinite(values[name])], level) for name in metrics}


def multiclass_metrics(labels: Sequence[int], scores: np.ndarray) -> dict:
    """Accuracy and macro-averaged F1 of argmax predictions from class scores [N, C]."""
    labels, scores = np.asarray(labels), np.asarray(scores)
    reject(scores.ndim != 2 or len(scores) != len(labels) or len(labels) == 0, "scores", scores.shape,
           f"an array [N={len(labels)}, classes]")
    predicted, classes = scores.argmax(1), np.arange(scores.shape[1])[:, None]
    tp = ((predicted == classes) & (labels == classes)).sum(1)
    support = (labels == classes).sum(1) + (predicted == classes).sum(1)    # per class; F1 over classes seen
    f1 = 2 * tp[support > 0] / support[support > 0]
    return {"accuracy": float(np.mean(predicted == labels)), "macro_f1": float(np.mean(f1)),
            "examples": int(len(labels))}


def multilabel_metrics(labels: np.ndarray, scores: np.ndarray, names: Sequence[str],
                       groups: dict[str, Sequence[str]] | None = None) -> dict:
    """Per-label AUROC and AUPRC of [N, K] labels and scores, with their medians over all labels and
    over each named group of labels (BigBird Table 7 reports the median AUROC per group). Labels with
    one class only in these examples are left out of the medians and counted as `skipped`."""
    labels, scores = np.asarray(labels), np.asarray(scores, dtype=np.float64)
    reject(labels.shape != scores.shape or labels.ndim != 2 or labels.shape[1] != len(names), "labels, scores",
           (labels.shape, scores.shape), f"two arrays [N, {len(names)}]")
    ones = np.ones((1, len(labels)))
    per_label = {}
    for k, name in enumerate(names):
        values = weighted_binary(labels[:, k].astype(bool), scores[:, k], ones)
        per_label[name] = {"auroc": finite_or_none(values["auroc"][0]), "auprc": finite_or_none(values["auprc"][0]),
                           "positives": int(labels[:, k].sum())}

    def medians(members) -> dict:
        out = {}
        for metric in ("auroc", "auprc"):
            defined = [per_label[m][metric] for m in members if per_label[m][metric] is not None]
            out[f"median_{metric}"] = float(np.median(defined)) if defined else None
        out["labels"] = len(members)
        out["skipped"] = sum(per_label[m]["auroc"] is None for m in members)
        return out

    return {**medians(names), "groups": {g: medians(members) for g, members in (groups or {}).items()},
            "labels": per_label, "examples": int(len(labels))}


def median_auroc_intervals(labels: np.ndarray, scores: np.ndarray, names: Sequence[str],
                           groups: dict[str, Sequence[str]], *, clusters: Sequence | None = None,
                           resamples: int = 1000, seed: int = 0, level: float = 0.95) -> dict[str, list[float] | None]:
    """Percentile bootstrap interval of each group's median AUROC: `resamples` draws of the examples (or
    of whole `clusters`) with replacement, every label's AUROC recomputed on each draw, the median over
    the group's labels defined on that draw."""
    labels, scores = np.asarray(labels).astype(bool), np.asarray(scores, dtype=np.float64)
    weights = resample_weights(len(labels), clusters, resamples, seed)
    index = {name: k for k, name in enumerate(names)}
    aurocs = {m: weighted_binary(labels[:, index[m]], scores[:, index[m]], weights)["auroc"]
              for m in dict.fromkeys(m for members in groups.values() for m in members)}
    out = {}
    for group, members in groups.items():
        # [R, labels of the group]
        matrix = np.stack([aurocs[m] for m in members], axis=1) if members else np.zeros((len(weights), 0))
        defined = np.isfinite(matrix).any(axis=1)
        with np.errstate(all="ignore"):
            out[group] = percentile_interval(np.nanmedian(matrix[defined], axis=1), level)
    return out


def better(metric: str, new: float, old: float | None) -> bool:
    """Whether `new` improves on `old` for `metric` (lower is better for a loss, higher otherwise)."""
    return old is None or (new < old if metric in LOWER_IS_BETTER else new > old)
