"""The test report of a fine-tuned model: its metrics with bootstrap 95 % intervals beside the cheap
baselines on the same examples (binary, multi-class, multi-label and regression rows), the token lengths per
class, a printed table and ROC / PR plots."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dnabird.finetune.baselines import Baseline
from dnabird.finetune.data import EpochExamples
from dnabird.finetune.metrics import (
    binary_metrics,
    bootstrap_intervals,
    median_auroc_intervals,
    multiclass_intervals,
    multiclass_metrics,
    multilabel_metrics,
    regression_intervals,
    regression_metrics,
)
from dnabird.model.task_spec import TaskSpec
from dnabird.train.metrics import save_png

TABLE_COLUMNS = ("accuracy", "f1", "auroc", "auprc", "mcc", "precision", "recall", "macro_f1", "macro_auroc",
                 "pearson", "spearman", "r2", "mse")
INTERVAL_COLUMNS = ("accuracy", "f1", "auroc", "mcc", "macro_f1", "macro_auroc", "pearson", "spearman", "r2", "mse")
MODEL_ROW = "fine-tuned model"
FORWARD_ROW = "fine-tuned model, forward strand only"


def length_summary(lengths: np.ndarray, labels: np.ndarray, names: dict[int, str]) -> dict:
    """Token-length distribution of each class: min, 5 %, median, 95 %, max, mean."""
    out = {}
    for label, name in names.items():
        values = lengths[labels == label]
        if len(values):
            q = np.percentile(values, [0, 5, 50, 95, 100])
            out[name] = {"min": int(q[0]), "p05": float(q[1]), "median": float(q[2]), "p95": float(q[3]),
                         "max": int(q[4]), "mean": round(float(values.mean()), 2)}
    return out


def binary_rows(labels: np.ndarray, model_scores: np.ndarray, baselines: dict[str, Baseline],
                train_labels: np.ndarray, *, groups: np.ndarray | None, resamples: int, seed: int) -> tuple[dict, dict]:
    """Metrics with intervals of the model and of each baseline (its model fit on its train features);
    returns (table rows, each row's test scores)."""
    scores = {MODEL_ROW: model_scores}
    for name, baseline in baselines.items():
        scores[f"{name} baseline"] = baseline.scores(np.asarray(train_labels)[:, None], seed=seed)[:, 0]
    rows = {name: {**binary_metrics(labels, values),
                   "ci95": bootstrap_intervals(labels, values, groups=groups, resamples=resamples, seed=seed)}
            for name, values in scores.items()}
    return rows, scores


def multiclass_rows(labels: np.ndarray, model_scores: np.ndarray, baselines: dict[str, Baseline],
                    train_labels: np.ndarray, names, *, groups: np.ndarray | None, resamples: int,
                    seed: int) -> dict:
    """Multi-class metrics with intervals of the model (class scores [N, C]) and of each baseline (one
    one-vs-rest fit per class, its scores normalised over the classes)."""
    classes = len(names)
    scores = {MODEL_ROW: model_scores}
    for name, baseline in baselines.items():
        fitted = baseline.scores(np.eye(classes)[np.asarray(train_labels, dtype=np.int64)], seed=seed)
        scores[f"{name} baseline"] = fitted / np.clip(fitted.sum(1, keepdims=True), 1e-12, None)
    return {name: {**multiclass_metrics(labels, values, names),
                   "ci95": multiclass_intervals(labels, values, groups=groups, resamples=resamples, seed=seed)}
            for name, values in scores.items()}


def regression_rows(spec: TaskSpec, labels: np.ndarray, outputs: np.ndarray, baselines: dict[str, Baseline],
                    train_labels: np.ndarray, *, groups: np.ndarray | None, resamples: int, seed: int) -> dict:
    """Regression metrics with intervals, in the user's scale, of the model (head outputs [N, K]) and of each
    baseline (ridge regression fit on the train targets in the training scale); `labels` and `train_labels`
    in the training scale."""
    transform = spec.transform
    truth = transform.restore(labels)
    predictions = {MODEL_ROW: transform.inverse(outputs)}
    for name, baseline in baselines.items():
        predictions[f"{name} baseline"] = transform.restore(baseline.scores(train_labels, seed=seed))
    return {name: {**regression_metrics(truth, values, spec.labels),
                   "ci95": regression_intervals(truth, values, spec.labels, groups=groups, resamples=resamples,
                                                seed=seed)}
            for name, values in predictions.items()}


def token_count_features(train: EpochExamples, test: EpochExamples, pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Tokens per slot of `train` and of `test` as drawn in epoch 0, [CLS] and [SEP] included ([N, 1] each)."""
    slots = [np.stack([split.example(i, 0)["input_ids"] for i in range(len(split))]) for split in (train, test)]
    return tuple((ids != pad_id).sum(1, keepdims=True).astype(np.float32) for ids in slots)


def _value(value: float | None, ci: list[float] | None = None) -> str:
    """`value` to 3 decimals ("n/a" when None), then its interval in brackets when given."""
    text = "n/a" if value is None else f"{value:.3f}"
    return text + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _cell(row: dict, column: str) -> str:
    interval = row.get("ci95", {}).get(column) if column in INTERVAL_COLUMNS else None
    return _value(row.get(column), interval)


def _rows(rows: dict[str, dict]) -> list[str]:
    """A header and a line per row; each column as wide as its widest cell, two spaces apart."""
    columns = [c for c in TABLE_COLUMNS if any(c in r for r in rows.values())]
    cells = {name: [_cell(row, c) for c in columns] for name, row in rows.items()}
    widths = [max(len(c), *(len(line[k]) for line in cells.values())) for k, c in enumerate(columns)]
    width = max(len(name) for name in rows)
    header = " " * width + "".join(f"  {c:>{w}}" for c, w in zip(columns, widths, strict=True))
    return [header, *(f"{name:<{width}}" + "".join(f"  {cell:>{w}}" for cell, w in zip(line, widths, strict=True))
                      for name, line in cells.items())]


def _detail_lines(rows: dict[str, dict]) -> list[str]:
    """Below the table: each target's row of a regression of several targets (means above), and each class's
    F1 and AUROC of a multi-class problem."""
    first = next(iter(rows.values()), {})
    if len(first.get("targets", {})) > 1:
        per_target = {f"{name}: {target}": {**values, "ci95": row["ci95"]["targets"][target]}
                      for name, row in rows.items() for target, values in row["targets"].items()}
        return ["per target (the rows above: means over targets)", *_rows(per_target)]
    if "classes" in first:
        return [f"per class, {name}: " + "; ".join(f"{c} F1 {_value(v['f1'])} AUROC {_value(v['auroc'])}"
                                                   for c, v in row["classes"].items())
                for name, row in rows.items()]
    return []


def multilabel_rows(labels: np.ndarray, scores: dict[str, np.ndarray], names, groups: dict[str, list[str]], *,
                    clusters: np.ndarray | None, resamples: int, seed: int,
                    masks: dict[str, np.ndarray] | None = None) -> dict:
    """Per scorer: per-label AUROC / AUPRC, the median AUROC of each group with its bootstrap 95 % interval
    (`ci95`, resampling examples or whole `clusters`), and the labels skipped (one class only). A group
    with a mask in `masks` is scored on those test examples only (its labels' entries too)."""
    masks = masks or {}
    index = {name: k for k, name in enumerate(names)}
    plain = {g: members for g, members in groups.items() if g not in masks}
    rows = {}
    for name, values in scores.items():
        row = multilabel_metrics(labels, values, names, plain)
        row["ci95"] = median_auroc_intervals(labels, values, names, plain, clusters=clusters, resamples=resamples,
                                             seed=seed)
        for group, mask in masks.items():
            members, columns = groups[group], [index[m] for m in groups[group]]
            sub_labels, sub_scores = labels[mask][:, columns], values[mask][:, columns]
            sub = multilabel_metrics(sub_labels, sub_scores, members, {group: members})
            row["groups"][group] = {**sub["groups"][group], "examples": int(mask.sum())}
            row["labels"].update(sub["labels"])
            row["ci95"][group] = median_auroc_intervals(
                sub_labels, sub_scores, members, {group: members},
                clusters=None if clusters is None else np.asarray(clusters)[mask], resamples=resamples,
                seed=seed)[group]
        row["groups"] = {g: row["groups"][g] for g in groups}
        rows[name] = row
    return rows


def _multilabel_lines(rows: dict[str, dict]) -> list[str]:
    groups = list(next(iter(rows.values()))["groups"])
    width = max(len(name) for name in rows) + 2
    header = " " * width + "".join(f"{g:>24}" for g in groups) + f"{'median AUPRC':>14}"
    lines = ["median AUROC per group [95 % bootstrap interval]", header]
    for name, row in rows.items():
        cells = "".join(f"{_value(row['groups'][g]['median_auroc'], row['ci95'].get(g)):>24}" for g in groups)
        lines.append(f"{name:<{width}}{cells}{_value(row['median_auprc']):>14}")
    first = next(iter(rows.values()))
    lines.append("labels per group (skipped: one class only in test): " + ", ".join(
        f"{g} {first['groups'][g]['labels']} ({first['groups'][g]['skipped']} skipped)" for g in groups))
    scoped = [f"{g}: {first['groups'][g]['examples']}" for g in groups if "examples" in first["groups"][g]]
    if scoped:
        lines.append("groups scored on their candidate examples only (test examples): " + ", ".join(scoped))
    return lines


def plot_group_aurocs(row: dict, groups: dict[str, list[str]], path: Path) -> Path:
    """A box plot of the per-feature test AUROCs of each group (features with one class left out)."""
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

    names = [g for g in groups if any(row["labels"][m]["auroc"] is not None for m in groups[g])]
    values = [[row["labels"][m]["auroc"] for m in groups[g] if row["labels"][m]["auroc"] is not None] for g in names]
    fig = Figure(figsize=(1.2 + 1.1 * max(1, len(names)), 4))
    ax = fig.subplots()
    if names:
        ax.boxplot(values, showfliers=True)
        ax.set_xticks(range(1, len(names) + 1), [f"{g}\n(n={len(v)})" for g, v in zip(names, values, strict=True)])
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_ylabel("test AUROC per feature")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3, axis="y")
    save_png(fig, path)
    return path


def warning_lines(report: dict, name: str | None = None) -> list[str]:
    """One "WARNING" line per warning in `report` (a run at chance: `dnabird.finetune.chance`), naming run `name`."""
    where = f" ({name})" if name else ""
    return [f"WARNING{where}: {w['message']}" for w in report.get("warnings", [])]


def format_table(report: dict) -> str:
    """The test table: one row per scorer, 95 % intervals in brackets, then the token lengths per class."""
    rows, warnings = report["test"]["rows"], warning_lines(report)
    if rows and "groups" in next(iter(rows.values())):     # multi-label: median AUROC per group
        return "\n".join([*warnings, report["test"]["title"], *_multilabel_lines(rows)])
    lines = [*warnings, report["test"]["title"], *_rows(rows), *_detail_lines(rows)]
    for split, classes in report.get("token_lengths", {}).items():
        shown = "; ".join(f"{name} median {s['median']:.0f} (5-95 %: {s['p05']:.0f}-{s['p95']:.0f})"
                          for name, s in classes.items())
        lines.append(f"tokens per input, {split}: {shown}")
    return "\n".join(lines)


def comparison_table(reports: dict[str, dict]) -> str:
    """Several runs' test tables as one: a row per (run, scorer), then (with two runs or more) each scorer's
    mean ± standard deviation over the runs that have it, per metric."""
    rows = {f"{run}: {scorer}": row for run, report in reports.items()
            for scorer, row in report["test"]["rows"].items()}
    if rows and "groups" in next(iter(rows.values())):
        return "\n".join(["test split, every run", *_multilabel_lines(rows)])
    return "\n".join(["test split, every run (95 % bootstrap intervals)", *_rows(rows), *_detail_lines(rows),
                      *_spread_lines(reports)])


def _spread_lines(reports: dict[str, dict]) -> list[str]:
    """Each scorer's mean ± s.d. (ddof 1) of every table metric over the runs (none for a single run)."""
    if len(reports) < 2:
        return []
    by_scorer: dict[str, list[dict]] = {}
    for report in reports.values():
        for scorer, row in report["test"]["rows"].items():
            by_scorer.setdefault(scorer, []).append(row)
    lines = [f"mean ± s.d. over runs ({len(reports)} runs)"]
    for scorer, runs in by_scorer.items():
        cells = []
        for column in TABLE_COLUMNS:
            values = [row[column] for row in runs if row.get(column) is not None]
            if len(values) >= 2:
                cells.append(f"{column} {np.mean(values):.3f} ± {np.std(values, ddof=1):.3f}")
        if cells:
            lines.append(f"{scorer} ({len(runs)} runs): " + ", ".join(cells))
    return lines


def plot_curves(labels: np.ndarray, scores: dict[str, np.ndarray], out_dir: Path) -> list[Path]:
    """`roc.png` and `pr.png`: one curve per scorer on the test examples."""
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone
    from sklearn.metrics import precision_recall_curve, roc_curve

    paths = []
    for name, curve, axes in (("roc", roc_curve, ("false positive rate", "true positive rate")),
                              ("pr", precision_recall_curve, ("recall", "precision"))):
        fig = Figure(figsize=(4.5, 4))
        ax = fig.subplots()
        for row, values in scores.items():
            a, b, _ = curve(labels, values)
            ax.plot(*((a, b) if name == "roc" else (b, a)), label=row)
        ax.set_xlabel(axes[0])
        ax.set_ylabel(axes[1])
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        paths.append(out_dir / f"{name}.png")
        save_png(fig, paths[-1])
    return paths
