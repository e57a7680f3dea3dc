"""Classification and regression metrics with bootstrap 95 % intervals, one implementation per problem kind.

Metrics are computed from per-example weights, so a point estimate (all weights 1) and each bootstrap
resample (weights = how often each example was drawn) go through the same code, vectorised over resamples.
Binary scores are probabilities of the positive class; predictions threshold them at 0.5 (multi-label: each
label's; multi-class: the argmax). MCC is Matthews' correlation (multi-class: Gorodkin's R_K, scikit-learn's
`matthews_corrcoef`).
AUROC is the Mann-Whitney probability that a positive outscores a negative (ties count one half);
AUPRC is average precision, Σ (R_k − R_{k−1}) P_k over the distinct score thresholds (scikit-learn's
definition). Regression: per target Pearson's r, Spearman's rho (Pearson's r of average ranks), R²
(1 − residual / total sum of squares, scikit-learn's `r2_score`) and the mean squared error, then their means
over targets. Undefined values (AUROC with one class present, precision with no positive call, a correlation
with a constant) are None in point estimates and left out of intervals.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from dnabird.errors import ParameterError, reject

BINARY_METRICS = ("accuracy", "precision", "recall", "f1", "mcc", "auroc", "auprc")
INTERVAL_METRICS = ("accuracy", "f1", "auroc", "auprc", "mcc")
MULTICLASS_METRICS = ("accuracy", "mcc", "macro_f1", "macro_auroc")
MULTILABEL_METRICS = ("median_auroc", "median_auprc", "median_f1", "median_mcc")
REGRESSION_METRICS = ("pearson", "spearman", "r2", "mse")
LOWER_IS_BETTER = ("loss", "mse")
# the validation metrics each problem can select by (`FinetuneConfig.selection_metric`); the first is its default
SELECTION_METRICS = {"binary": ("auroc", *BINARY_METRICS, "loss"),
                     "multiclass": ("mcc", *MULTICLASS_METRICS, "loss"),
                     "multilabel": ("median_auroc", *MULTILABEL_METRICS, "loss"),
                     "regression": ("pearson", *REGRESSION_METRICS, "loss")}


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


def _check_classes(labels, scores) -> tuple[np.ndarray, np.ndarray]:
    labels, scores = np.asarray(labels), np.asarray(scores, dtype=np.float64)
    reject(scores.ndim != 2 or len(scores) != len(labels) or len(labels) == 0 or labels.ndim != 1, "scores",
           scores.shape, f"an array [N={len(labels)}, classes] of class scores for labels [N]")
    reject(not np.isin(labels, np.arange(scores.shape[1])).all(), "labels", np.unique(labels)[:5].tolist(),
           f"class ids in [0, {scores.shape[1]})")
    return labels.astype(np.int64), scores


def weighted_multiclass(labels: np.ndarray, scores: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Accuracy, MCC, per-class F1 [R, C] and macro F1 (over the classes present or predicted), per-class
    one-vs-rest AUROC and AUPRC [R, C] and macro AUROC (over the classes with AUROC defined), for each row of
    `weights` ([R, N]); NaN where undefined."""
    classes = scores.shape[1]
    predicted = scores.argmax(1)
    truth, called = np.eye(classes)[labels], np.eye(classes)[predicted]          # [N, C] one-hot
    confusion = np.einsum("rn,nc,nd->rcd", weights, truth, called)              # [R, true, predicted]
    total, correct = confusion.sum((1, 2)), np.trace(confusion, axis1=1, axis2=2)
    true_counts, called_counts = confusion.sum(2), confusion.sum(1)             # [R, C]
    with np.errstate(divide="ignore", invalid="ignore"):
        covariance = correct * total - (true_counts * called_counts).sum(1)
        spread = (total ** 2 - (called_counts ** 2).sum(1)) * (total ** 2 - (true_counts ** 2).sum(1))
        mcc = covariance / np.sqrt(spread)
        support = true_counts + called_counts
        f1 = np.where(support > 0, 2 * np.diagonal(confusion, axis1=1, axis2=2) / support, np.nan)
        ranking = [weighted_binary(labels == k, scores[:, k], weights) for k in range(classes)]
        auroc = np.stack([r["auroc"] for r in ranking], 1)
        auprc = np.stack([r["auprc"] for r in ranking], 1)
        return {"accuracy": correct / total, "mcc": mcc, "f1": f1, "macro_f1": _defined_mean(f1), "auroc": auroc,
                "auprc": auprc, "macro_auroc": _defined_mean(auroc)}


def _defined_mean(values: np.ndarray) -> np.ndarray:
    """The mean over the last axis of the finite entries (NaN where none is)."""
    finite = np.isfinite(values)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(finite, values, 0).sum(-1) / finite.sum(-1)


def multiclass_metrics(labels: Sequence[int], scores: np.ndarray, names: Sequence[str] | None = None) -> dict:
    """Accuracy, MCC, macro F1 and macro AUROC of class scores [N, C] (argmax predictions), and F1, AUROC and
    AUPRC of each class (one vs the rest) under its name in `names` (default: its index)."""
    labels, scores = _check_classes(labels, scores)
    names = [str(k) for k in range(scores.shape[1])] if names is None else list(names)
    reject(len(names) != scores.shape[1], "names", names, f"one name per class ({scores.shape[1]})")
    with np.errstate(all="ignore"):
        values = weighted_multiclass(labels, scores, np.ones((1, len(labels))))
    report = {name: finite_or_none(values[name][0]) for name in MULTICLASS_METRICS}
    report["classes"] = {name: {**{m: finite_or_none(values[m][0, k]) for m in ("f1", "auroc", "auprc")},
                                "examples": int((labels == k).sum())} for k, name in enumerate(names)}
    report["examples"] = int(len(labels))
    return report


def multiclass_intervals(labels: Sequence[int], scores: np.ndarray, *, groups: Sequence | None = None,
                         resamples: int = 1000, seed: int = 0, level: float = 0.95) -> dict[str, list[float] | None]:
    """Percentile bootstrap interval of accuracy, MCC, macro F1 and macro AUROC (examples, or whole `groups`,
    drawn with replacement)."""
    labels, scores = _check_classes(labels, scores)
    weights = resample_weights(len(labels), groups, resamples, seed)
    with np.errstate(all="ignore"):
        values = weighted_multiclass(labels, scores, weights)
    return {name: percentile_interval(values[name][np.isfinite(values[name])], level) for name in MULTICLASS_METRICS}


def multilabel_metrics(labels: np.ndarray, scores: np.ndarray, names: Sequence[str],
                       groups: dict[str, Sequence[str]] | None = None) -> dict:
    """Per-label AUROC, AUPRC, F1 and MCC of [N, K] labels and scores, with their medians over all labels and
    over each named group of labels (BigBird Table 7 reports the median AUROC per group). Labels with
    one class only in these examples are left out of the medians and counted as `skipped`."""
    labels, scores = np.asarray(labels), np.asarray(scores, dtype=np.float64)
    reject(labels.shape != scores.shape or labels.ndim != 2 or labels.shape[1] != len(names), "labels, scores",
           (labels.shape, scores.shape), f"two arrays [N, {len(names)}]")
    ones = np.ones((1, len(labels)))
    per_label = {}
    for k, name in enumerate(names):
        values = weighted_binary(labels[:, k].astype(bool), scores[:, k], ones)
        per_label[name] = {**{metric: finite_or_none(values[metric][0]) for metric in ("auroc", "auprc", "f1", "mcc")},
                           "positives": int(labels[:, k].sum())}

    def medians(members) -> dict:
        out = {}
        for metric in ("auroc", "auprc", "f1", "mcc"):
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


def _ranks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """[R, N] average ranks (1-based, ties sharing their mean rank) of `values` [N] in each weighted resample
    (`weights` [R, N]: how often each example was drawn); examples not drawn get a rank that weighs nothing."""
    order = np.argsort(values, kind="stable")
    first_of_tie = np.append(True, values[order][1:] != values[order][:-1])
    starts = np.flatnonzero(first_of_tie)
    tied = np.add.reduceat(weights[:, order], starts, axis=1)                  # [R, distinct values]
    rank = np.cumsum(tied, axis=1) - tied + (tied + 1) / 2
    ranks = np.empty_like(weights)
    ranks[:, order] = rank[:, np.cumsum(first_of_tie) - 1]
    return ranks


def _weighted_pearson(a: np.ndarray, b: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """[R] weighted Pearson correlation of a and b ([N] or [R, N]) under each row of `weights` [R, N]."""
    total = weights.sum(1, keepdims=True)
    da = a - (weights * a).sum(1, keepdims=True) / total
    db = b - (weights * b).sum(1, keepdims=True) / total
    return (weights * da * db).sum(1) / np.sqrt((weights * da * da).sum(1) * (weights * db * db).sum(1))


def weighted_regression(labels: np.ndarray, predictions: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Pearson, Spearman, R² and MSE of one target's predictions [N] for each row of `weights` [R, N] (resamples
    in chunks, to bound the [R, N] temporaries); NaN where undefined (a constant)."""
    labels, predictions = np.asarray(labels, dtype=np.float64), np.asarray(predictions, dtype=np.float64)
    out = {name: np.empty(len(weights)) for name in REGRESSION_METRICS}
    with np.errstate(divide="ignore", invalid="ignore"):
        for first in range(0, len(weights), 64):
            w = weights[first:first + 64]
            chunk = slice(first, first + len(w))
            total = w.sum(1)
            residual = (w * (labels - predictions) ** 2).sum(1)
            centred = labels - ((w * labels).sum(1) / total)[:, None]
            out["pearson"][chunk] = _weighted_pearson(labels, predictions, w)
            out["spearman"][chunk] = _weighted_pearson(_ranks(labels, w), _ranks(predictions, w), w)
            out["r2"][chunk] = 1 - residual / (w * centred ** 2).sum(1)
            out["mse"][chunk] = residual / total
    return out


def _check_targets(labels, predictions, names) -> tuple[np.ndarray, np.ndarray]:
    labels, predictions = np.asarray(labels, dtype=np.float64), np.asarray(predictions, dtype=np.float64)
    labels, predictions = (x.reshape(len(x), -1) for x in (labels, predictions))
    reject(labels.shape != predictions.shape or labels.shape[1] != len(names) or len(labels) == 0,
           "labels, predictions", (labels.shape, predictions.shape),
           f"two arrays [N, {len(names)}] (targets {list(names)})")
    reject(not (np.isfinite(labels).all() and np.isfinite(predictions).all()), "labels, predictions",
           "non-finite values", "finite numbers")
    return labels, predictions


def regression_metrics(labels: np.ndarray, predictions: np.ndarray, names: Sequence[str]) -> dict:
    """Per target (`names`, columns of [N, K] labels and predictions in one scale) Pearson, Spearman, R² and
    MSE, and at the top level their means over the targets (over those where a metric is defined)."""
    labels, predictions = _check_targets(labels, predictions, names)
    ones = np.ones((1, len(labels)))
    targets = {}
    for k, name in enumerate(names):
        values = weighted_regression(labels[:, k], predictions[:, k], ones)
        targets[name] = {metric: finite_or_none(values[metric][0]) for metric in REGRESSION_METRICS}
    means = {metric: [t[metric] for t in targets.values() if t[metric] is not None] for metric in REGRESSION_METRICS}
    return {**{metric: float(np.mean(v)) if v else None for metric, v in means.items()},
            "targets": targets, "examples": int(len(labels))}


def regression_intervals(labels: np.ndarray, predictions: np.ndarray, names: Sequence[str], *,
                         groups: Sequence | None = None, resamples: int = 1000, seed: int = 0,
                         level: float = 0.95) -> dict:
    """Percentile bootstrap intervals of `regression_metrics`: {metric: interval of the mean over targets,
    "targets": {name: {metric: interval}}}, examples (or whole `groups`) drawn with replacement."""
    labels, predictions = _check_targets(labels, predictions, names)
    weights = resample_weights(len(labels), groups, resamples, seed)
    per_target = [weighted_regression(labels[:, k], predictions[:, k], weights) for k in range(len(names))]
    out = {}
    for metric in REGRESSION_METRICS:
        mean = _defined_mean(np.stack([values[metric] for values in per_target], 1))
        out[metric] = percentile_interval(mean[np.isfinite(mean)], level)
    out["targets"] = {name: {metric: percentile_interval(values[metric][np.isfinite(values[metric])], level)
                             for metric in REGRESSION_METRICS} for name, values in zip(names, per_target, strict=True)}
    return out


def selection_metric(problem: str, metric: str) -> str:
    """The validation metric a run of `problem` selects by: `metric` where the problem has it, else the
    problem's default (`SELECTION_METRICS`), logged."""
    allowed = SELECTION_METRICS[problem]
    if metric in allowed:
        return metric
    logging.getLogger(__name__).warning("selection_metric %r does not apply to a %s problem: selecting by %r "
                                        "(one of %s)", metric, problem, allowed[0], ", ".join(allowed))
    return allowed[0]


def better(metric: str, new: float, old: float | None) -> bool:
    """Whether `new` improves on `old` for `metric` (lower is better for a loss, higher otherwise)."""
    return old is None or (new < old if metric in LOWER_IS_BETTER else new > old)
