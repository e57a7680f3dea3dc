"""Whether a fine-tuning run left chance: its validation scores after warm-up against those of a model that
always predicts the majority class (accuracy = that class's share, AUROC 0.5) or, for a regression, of
predictions unrelated to the targets (Pearson r 0), with a margin of three standard errors of those chance
scores on the validation set, so that a run which never beat them says so."""

from __future__ import annotations

import math

import numpy as np

SIGMAS = 3.0            # how far above the chance score (in its standard errors) a run must get once
ADVICE = ("check the labels and the first batches (metrics.jsonl: loss and grad_norm at step 1); try another seed, "
          "a lower train.lr or a longer train.warmup_steps, more steps, or train.precision=fp32 to rule out bf16")


def majority_accuracy(labels: np.ndarray) -> float:
    """The accuracy of always predicting the most frequent class of `labels` ([N] class ids or 0/1)."""
    _, counts = np.unique(np.asarray(labels), return_counts=True)
    return float(counts.max() / counts.sum())


def chance_bounds(labels: np.ndarray, problem: str) -> dict[str, float]:
    """The highest validation score still at chance, per metric: accuracy (binary, multi-class) up to the majority
    share + 3 binomial standard errors; AUROC (binary) up to 0.5 + 3 standard errors of the Mann-Whitney statistic
    under no signal; median AUROC (multi-label) up to 0.5 + 3 standard errors of the median of K such AUROCs (each
    with the median label's positives); the mean Pearson r over targets (regression) up to 3 standard errors of
    one target's r under no correlation, 1 / sqrt(N − 1) (not divided by sqrt(K): targets are often correlated)."""
    labels = np.asarray(labels)
    if problem == "regression":
        return {"pearson": SIGMAS / math.sqrt(max(len(labels) - 1, 1))}
    if problem == "multilabel":   # the median of K labels' AUROCs: 1.2533 sigma / sqrt(K) (independent labels)
        positives = float(np.median(labels.sum(0)))
        error = _auroc_error(positives, len(labels) - positives) * 1.2533 / math.sqrt(labels.shape[1])
        return {"median_auroc": 0.5 + SIGMAS * error}
    majority, n = majority_accuracy(labels), len(labels)
    bounds = {"accuracy": majority + SIGMAS * math.sqrt(majority * (1 - majority) / n)}
    if problem == "binary":
        positives = float(labels.sum())
        bounds["auroc"] = 0.5 + SIGMAS * _auroc_error(positives, n - positives)
    return bounds


def _auroc_error(positives: float, negatives: float) -> float:
    """Standard error of the AUROC of a scorer without signal (Mann-Whitney U under the null)."""
    if positives < 1 or negatives < 1:
        return 0.0
    return math.sqrt((positives + negatives + 1) / (12 * positives * negatives))


RANKING = {"binary": "auroc", "multilabel": "median_auroc", "multiclass": "accuracy", "regression": "pearson"}


def chance_warning(history: list[tuple[int, dict]], labels: np.ndarray, problem: str, warmup_steps: int) -> dict | None:
    """None if the run left chance, else a warning: `history` is every validation as (step, metrics), `labels` the
    validation labels; validations during warm-up do not count (all do if none came after it). "at_chance": the
    best score after warm-up of the problem's ranking metric (AUROC; median AUROC; multi-class accuracy; mean
    Pearson r) stayed within its chance bound. "one_class" (binary): AUROC left chance but accuracy never left the
    majority level, the model ranks but its every prediction is (nearly) one class."""
    after = [metrics for step, metrics in history if step > warmup_steps] or [metrics for _, metrics in history]
    best = {}
    for metric, bound in chance_bounds(labels, problem).items():
        values = [m[metric] for m in after if m.get(metric) is not None]
        if values:
            best[metric] = {"best": round(max(values), 4), "chance_up_to": round(bound, 4),
                            "at_chance": max(values) <= bound}
    ranking = best.get(RANKING[problem])
    if ranking is not None and ranking["at_chance"]:
        kind, stuck, what = "at_chance", {RANKING[problem]: ranking}, "validation never left chance"
    elif ranking is not None and "accuracy" in best and best["accuracy"]["at_chance"]:
        kind, stuck = "one_class", {"accuracy": best["accuracy"]}
        what = (f"validation accuracy never left the majority-class level although AUROC did "
                f"(best {ranking['best']:.3f}): the model ranks, but predicts (nearly) one class")
    else:
        return None
    scores = "; ".join(f"best validation {metric} {v['best']:.3f} after warm-up, chance up to {v['chance_up_to']:.3f}"
                       for metric, v in stuck.items())
    figures = {k: {"best": v["best"], "chance_up_to": v["chance_up_to"]} for k, v in stuck.items()}
    return {"kind": kind, "metrics": figures,
            "validations": len(after), "message": f"{kind.upper().replace('_', ' ')}: {what} ({scores}); {ADVICE}"}
