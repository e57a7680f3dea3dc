"""How well variant effects rank known-disruptive variants above neutral ones, with bootstrap intervals.

A truth table (the embedded default's `variant_truth.tsv`: id, label = disruptive / neutral / ref_mismatch,
element = the planted element a variant sits in, or ".") sorts variants into `disruptive` (a core base of a
planted element), `distant_neutral` (away from every element) and `in_element_control` (neutral, inside an
element: only a model that knows which bases matter ranks disruptive ones above these). AUROC = P(a
disruptive variant outscores a neutral one of the class), ties one half, with a 95 % percentile-bootstrap
interval over variants (`dnabird.finetune.metrics`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dnabird.errors import InputFormatError
from dnabird.finetune.metrics import binary_metrics, bootstrap_intervals
from dnabird.train.metrics import save_png

TRUTH_COLUMNS = ("id", "label", "element")
NEGATIVE_CLASSES = ("distant_neutral", "in_element_control")


def read_truth(path) -> pd.DataFrame:
    """A truth TSV with at least `TRUTH_COLUMNS`, with a `class` column added (see the module docstring)."""
    truth = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    missing = [c for c in TRUTH_COLUMNS if c not in truth.columns]
    if missing:
        raise InputFormatError(f"missing column(s) {', '.join(missing)} (has {', '.join(truth.columns)})", path=path)
    neutral = truth["label"] == "neutral"
    truth["class"] = np.select([truth["label"] == "disruptive", neutral & (truth["element"] == "."), neutral],
                               ["disruptive", "distant_neutral", "in_element_control"], "other")
    truth["element_kind"] = truth["element"].str.split(":").str[0]
    return truth


def effect_aurocs(effects: pd.DataFrame, truth: pd.DataFrame, column: str, *, kinds=None, resamples: int = 1000,
                  seed: int = 0) -> dict:
    """AUROC of `effects[column]` (higher = more disruptive), disruptive vs each neutral class, over the
    variants both tables hold (joined on `id`); `kinds`: only elements of these kinds (e.g. promoter boxes).
    Per class: auroc, interval, disruptive and neutral counts (auroc None when a class is empty)."""
    merged = truth.merge(effects[["id", column]], on="id")
    if kinds is not None:
        merged = merged[merged["element_kind"].isin(list(kinds)) | (merged["class"] == "distant_neutral")]
    positive = merged.loc[merged["class"] == "disruptive", column].to_numpy(float)
    out = {}
    for negative_class in NEGATIVE_CLASSES:
        negative = merged.loc[merged["class"] == negative_class, column].to_numpy(float)
        row = {"disruptive": len(positive), "neutral": len(negative), "auroc": None, "interval": None}
        if len(positive) and len(negative):
            labels = np.r_[np.ones(len(positive), int), np.zeros(len(negative), int)]
            scores = np.r_[positive, negative]
            row["auroc"] = binary_metrics(labels, scores)["auroc"]
            row["interval"] = bootstrap_intervals(labels, scores, resamples=resamples, seed=seed,
                                                  metrics=("auroc",))["auroc"]
        out[negative_class] = row
    return out


def plot_effects(effects: pd.DataFrame, truth: pd.DataFrame, columns: dict[str, str], path) -> None:
    """One panel per scorer (title -> column of `effects`): each variant's effect by truth class."""
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

    merged = truth.merge(effects, on="id")
    order = ("disruptive", "in_element_control", "distant_neutral")
    fig = Figure(figsize=(3.6 * len(columns), 3.2))
    axes = fig.subplots(1, len(columns), squeeze=False)
    rng = np.random.default_rng(0)
    for ax, (title, column) in zip(axes[0], columns.items(), strict=True):
        for x, name in enumerate(order):
            values = merged.loc[(merged["class"] == name) & merged[column].notna(), column].to_numpy(float)
            ax.scatter(x + rng.uniform(-0.15, 0.15, len(values)), values, s=10, alpha=0.7)
            if len(values):
                ax.hlines(np.median(values), x - 0.3, x + 0.3, color="black")
        ax.set_xticks(range(len(order)), ["disruptive", "in-element\ncontrol", "distant\nneutral"], fontsize=8)
        ax.set_title(title, fontsize=9)
    save_png(fig, path)
