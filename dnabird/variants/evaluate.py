"""How well variant effects rank known-disruptive variants above neutral ones, measured with the benchmark.

A truth table (the embedded default's `variant_truth.tsv`: chrom, pos, id, ref, alt, label = disruptive /
neutral / ref_mismatch, element = the planted element a variant sits in, or ".") sorts variants into
`disruptive` (a core base of a planted element), `distant_neutral` (away from every element) and
`in_element_control` (neutral, inside an element: only a model that knows which bases matter ranks disruptive
ones above these). `truth_labels` turns it into a labels table of `dnabird benchmark-variants` (disruptive 1,
neutral 0), and `truth_rankings` ranks an effect column with `dnabird.variants.benchmark.evaluate`: disruptive
vs each neutral class as its own comparison (AUROC, AUPRC, AUPRC by chromosome, top-k odds ratio, with 95 %
bootstrap intervals).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dnabird.errors import InputFormatError
from dnabird.train.metrics import save_png
from dnabird.variants.benchmark import evaluate

TRUTH_COLUMNS = ("chrom", "pos", "ref", "alt", "id", "label", "element")
NEGATIVE_CLASSES = ("distant_neutral", "in_element_control")


def read_truth(path) -> pd.DataFrame:
    """A truth TSV with at least `TRUTH_COLUMNS`, with `class` and `element_kind` columns added (see the module
    docstring)."""
    truth = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    missing = [c for c in TRUTH_COLUMNS if c not in truth.columns]
    if missing:
        raise InputFormatError(f"missing column(s) {', '.join(missing)} (has {', '.join(truth.columns)})", path=path)
    neutral = truth["label"] == "neutral"
    truth["class"] = np.select([truth["label"] == "disruptive", neutral & (truth["element"] == "."), neutral],
                               ["disruptive", "distant_neutral", "in_element_control"], "other")
    truth["element_kind"] = truth["element"].str.split(":").str[0]
    return truth


def truth_labels(truth: pd.DataFrame) -> pd.DataFrame:
    """The labelled variants of a truth table (`read_truth`) as a `benchmark-variants` labels table: chrom, pos,
    ref, alt, label (disruptive 1, either neutral class 0), id, class."""
    kept = truth[truth["class"].isin(["disruptive", *NEGATIVE_CLASSES])]
    return kept.assign(label=(kept["class"] == "disruptive").astype(int))[
        ["chrom", "pos", "ref", "alt", "label", "id", "class"]]


def truth_rankings(effects: pd.DataFrame, truth: pd.DataFrame, column: str, *, kinds=None, top_k: float = 0.1,
                   resamples: int = 1000, seed: int = 0) -> dict:
    """`effects[column]` (higher = more disruptive; joined on `id`) ranked by the benchmark, disruptive vs each
    neutral class; `kinds`: only elements of these kinds (e.g. promoter boxes). Per class the benchmark's
    metrics over the variants scored (`positives` disruptive, `negatives` neutral; `unscored` the rest)."""
    labels = truth_labels(truth).merge(truth[["id", "element_kind"]], on="id")
    if kinds is not None:
        labels = labels[labels["element_kind"].isin(list(kinds)) | (labels["class"] == "distant_neutral")]
    merged = labels.merge(effects[["id", column]], on="id", how="left").assign(match_key=None)
    return {negative: evaluate(merged[merged["class"].isin(["disruptive", negative])], [column], top_k=top_k,
                               resamples=resamples, seed=seed)[column] for negative in NEGATIVE_CLASSES}


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
