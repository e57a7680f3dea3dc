"""`benchmark_variants`: does a model separate the positives of a labelled variant set from its negatives?

A labels table (TSV, CSV or parquet; TraitGym's and ClinVar-derived sets' layout:
chrom, 1-based pos, ref, alt, label, and optionally a match column such as TraitGym's `match_group`) is
scored with every method the model supports, through `score_variants` and `embedding_distances`:

- `head` (a fine-tuned classifier): the largest |Δ log odds| over its outputs, the most changed output;
- `mlm_llr` (a pretrained masked LM): −LLR, the log-likelihood the ALT allele loses; `llr_per_bp`: −LLR per bp;
- `embed_dist`: the distance between the REF and ALT windows' mean-pooled final hidden states.

Each score is ranked against the labels (`dnabird.variants.benchmark_metrics`). Labels: 1/true/pathogenic/
positive and 0/false/benign/negative, any case. A missing column or an unknown label is an error naming the
file, line and value; a variant listed twice is an error naming both lines (it would weigh double in every
metric, and two labels for one variant cannot both be right). A variant that cannot be scored (a REF the
genome disagrees with, an unknown chromosome …) is left out of that method's metrics, counted in the
report and listed with its reason in `skipped.tsv`.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from dnabird.errors import InputFormatError, ParameterError, reject
from dnabird.variants.benchmark_metrics import ranking_metrics
from dnabird.variants.records import Variant

REQUIRED = ("chrom", "pos", "ref", "alt", "label")
POSITIVE = ("1", "true", "pathogenic", "positive")
NEGATIVE = ("0", "false", "benign", "negative")
DEFAULT_MATCH = "match_group"  # TraitGym's matched negatives
SCORE_NAMES = {"head": "max |Δ log odds|", "mlm_llr": "−LLR", "llr_per_bp": "−LLR per bp",
               "embed_dist": "embedding distance"}
SKIPPED_COLUMNS = ("line", "chrom", "pos", "ref", "alt", "label", "method", "reason", "detail")
PARQUET = (".parquet", ".pq")
RESERVED = ("line", "match_key", *SCORE_NAMES)  # columns the benchmark adds
FROM_RUN = {  # per scoring run, each method it gives: (method, `per_variant` kind and reduction, outputs, sign)
    "head": (("head", "abs_logit_diff", "max", None, 1),),
    "mlm_llr": (("mlm_llr", "diff", "mean", ["llr"], -1), ("llr_per_bp", "diff", "mean", ["llr_per_bp"], -1)),
    "embed_dist": (("embed_dist", "diff", "mean", None, 1),)}


def _read_table(path: Path) -> tuple[pd.DataFrame, bool]:
    """The table as strings, and whether its rows have line numbers (text) or only row numbers (parquet)."""
    if not path.is_file():
        raise InputFormatError("labels table not found", path=path)
    if path.suffix.lower() in PARQUET:
        import pyarrow

        try:
            table = pd.read_parquet(path, engine="pyarrow")
        except (pyarrow.ArrowException, OSError) as err:
            raise InputFormatError(f"not a readable parquet table ({err})", path=path) from None
        return table.astype(str).where(table.notna(), ""), False
    separator = "," if path.suffix.lower() == ".csv" or path.name.lower().endswith(".csv.gz") else "\t"
    try:
        return pd.read_csv(path, sep=separator, dtype=str, keep_default_na=False), True
    except (ValueError, pd.errors.ParserError) as err:
        raise InputFormatError(f"not a readable {'CSV' if separator == ',' else 'TSV'} table ({err})",
                               path=path) from None


def read_labels(path: str | os.PathLike, match_on: str | None = DEFAULT_MATCH) -> pd.DataFrame:
    """The labels table: `line` (its line in the file, or row number in a parquet file), chrom, pos (int),
    ref, alt, label (1/0), `match_key` (the values of the `match_on` column; None, or a column the table does
    not have when it is the default, means no groups) and every other column as read."""
    path = Path(path)
    table, text = _read_table(path)
    table.columns = [str(c).strip().lower() for c in table.columns]
    wanted = [*REQUIRED, *([match_on] if match_on and match_on != DEFAULT_MATCH else [])]
    missing = [c for c in wanted if c not in table.columns]
    if missing:
        raise InputFormatError(f"missing column(s) {', '.join(missing)} (it has {', '.join(table.columns)})",
                               path=path)
    taken = [c for c in RESERVED if c in table.columns]
    if taken:
        raise InputFormatError(f"column(s) {', '.join(taken)} would be overwritten by the benchmark's own; rename "
                               "them", path=path)
    table.insert(0, "line", np.arange(len(table)) + (2 if text else 1))

    def where(row: int) -> dict:
        return {"path": path, "line": int(table["line"].iat[row])} if text else \
            {"path": path, "record": f"row {table['line'].iat[row]}"}

    value = table["label"].str.strip().str.lower()
    unknown = np.flatnonzero(~value.isin([*POSITIVE, *NEGATIVE]))
    if len(unknown):
        row = unknown[0]
        raise InputFormatError(f"label {table['label'].iat[row]!r} is not one of {', '.join(POSITIVE)} (positive) "
                               f"or {', '.join(NEGATIVE)} (negative), any case ({len(unknown)} such rows)",
                               **where(row))
    table["label"] = value.isin(POSITIVE).astype(int)
    position = pd.to_numeric(table["pos"], errors="coerce")
    bad = np.flatnonzero(~(position >= 1) | (position % 1 != 0))
    if len(bad):
        raise InputFormatError(f"pos {table['pos'].iat[bad[0]]!r} is not a 1-based position", **where(bad[0]))
    table["pos"] = position.astype(np.int64)
    for column in ("chrom", "ref", "alt"):
        table[column] = table[column].str.strip()
    repeated = table.duplicated(["chrom", "pos", "ref", "alt"], keep=False)
    if repeated.any():
        rows = np.flatnonzero(repeated)
        first = table.iloc[rows[0]]
        lines = table.loc[(table[["chrom", "pos", "ref", "alt"]] == first[["chrom", "pos", "ref", "alt"]]).all(axis=1),
                          "line"].tolist()
        raise InputFormatError(f"variant {first['chrom']}:{first['pos']} {first['ref']}>{first['alt']} is listed "
                               f"{len(lines)} times ({'lines' if text else 'rows'} {', '.join(map(str, lines))}; "
                               f"{len(rows)} repeated rows in all): remove the repeats, a variant counted twice "
                               "weighs double in every metric", path=path)
    use_groups = match_on is not None and match_on in table.columns
    table["match_key"] = table[match_on].astype(str) if use_groups else None
    return table.reset_index(drop=True)


def model_methods(model: str | os.PathLike) -> tuple[str, ...]:
    """The methods a checkpoint supports: `head` with a task.json, else `mlm_llr` and `llr_per_bp`; both
    `embed_dist`."""
    from dnabird.variants.score import scored_outputs

    has_head = scored_outputs(model) != ["llr", "llr_per_bp"]
    return ("head", "embed_dist") if has_head else ("mlm_llr", "llr_per_bp", "embed_dist")


def score_methods(model, genome, labels: pd.DataFrame, methods=None, *, tss=None, rc: str | None = None,
                  window_bp: int | None = None, eval_length: int | None = None, batch_size: int = 16,
                  device: str = "auto", progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Every row of `labels` (`read_labels`) scored by each of `methods` (default: all the model supports):
    the table with one score column per method (NA where not scored, higher = more likely positive), the
    skipped rows (`SKIPPED_COLUMNS`) and each scoring's settings."""
    from dnabird.genome.reference import Genome
    from dnabird.variants.embed import embedding_distances
    from dnabird.variants.score import score_variants

    supported = model_methods(model)
    methods = list(methods or supported)
    unknown = [m for m in methods if m not in supported]
    reject(bool(unknown), "methods", unknown, f"methods this model supports: {list(supported)}")
    genome = genome if isinstance(genome, Genome) else Genome(genome)
    variants = [Variant(c, int(p), r, a, f"line{line}")
                for line, c, p, r, a in labels[["line", "chrom", "pos", "ref", "alt"]].itertuples(index=False)]
    sizes = dict(window_bp=window_bp, eval_length=eval_length, batch_size=batch_size, device=device,
                 progress=progress)
    table, skipped, settings = labels.copy(), [], {}
    runs = {}
    if "head" in methods:
        runs["head"] = score_variants(model, genome, variants, method="head", rc=rc, tss=tss, **sizes)
    if {"mlm_llr", "llr_per_bp"} & set(methods):
        runs["mlm_llr"] = score_variants(model, genome, variants, method="mlm_llr", rc=rc, **sizes)
    if "embed_dist" in methods:
        runs["embed_dist"] = embedding_distances(model, genome, variants, rc=rc or "average", **sizes)
    for run, scores in runs.items():
        settings[run] = scores.settings
        for method, kind, reduce, outputs, sign in FROM_RUN[run]:
            if method not in methods:
                continue
            per_variant = scores.per_variant(kind, reduce, outputs=outputs)
            table[method] = np.nan
            table.loc[per_variant["record"].to_numpy(), method] = sign * per_variant["all"].to_numpy()
            for row in scores.skipped.drop_duplicates("record").itertuples(index=False):
                entry = labels.iloc[row.record]
                skipped.append((entry["line"], entry["chrom"], entry["pos"], entry["ref"], entry["alt"],
                                entry["label"], method, row.reason, row.detail))
    return table, pd.DataFrame(skipped, columns=list(SKIPPED_COLUMNS)), settings


def evaluate(table: pd.DataFrame, methods, *, top_k: float = 0.01, resamples: int = 1000, seed: int = 0) -> dict:
    """`ranking_metrics` of each method's column of `table` (label, chrom, match_key and the score columns) over
    the rows it scored; `unscored` counts the rest. Methods with no scored row, or one class only, have no
    metrics."""
    out = {}
    for method in methods:
        scored = table[table[method].notna()]
        entry = {"score": SCORE_NAMES.get(method, method), "unscored": int(len(table) - len(scored))}
        if scored["label"].nunique() == 2:
            groups = scored["match_key"].to_numpy() if scored["match_key"].notna().all() else None
            entry.update(ranking_metrics(scored["label"].to_numpy(), scored[method].to_numpy(),
                                         scored["chrom"].to_numpy(), groups=groups, top_k=top_k,
                                         resamples=resamples, seed=seed))
        else:
            entry.update(variants=len(scored), positives=int(scored["label"].sum()),
                         negatives=int((scored["label"] == 0).sum()))
        out[method] = entry
    return out


def plot_curves(table: pd.DataFrame, methods, roc_path, pr_path) -> None:
    """ROC and precision-recall curves of each method (scikit-learn's), one figure each."""
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone
    from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score, roc_curve

    from dnabird.train.metrics import save_png

    figures = {"roc": Figure(figsize=(4.2, 4)), "pr": Figure(figsize=(4.2, 4))}
    axes = {name: fig.subplots() for name, fig in figures.items()}
    for method in methods:
        scored = table[table[method].notna()]
        if scored["label"].nunique() < 2:
            continue
        y, s = scored["label"].to_numpy(), scored[method].to_numpy()
        fpr, tpr, _ = roc_curve(y, s)
        precision, recall, _ = precision_recall_curve(y, s)
        axes["roc"].plot(fpr, tpr, label=f"{method} ({roc_auc_score(y, s):.3f})")
        axes["pr"].step(recall, precision, where="post", label=f"{method} ({average_precision_score(y, s):.3f})")
    axes["roc"].plot([0, 1], [0, 1], color="grey", linestyle=":")
    axes["roc"].set(xlabel="false positive rate", ylabel="true positive rate", title="ROC (AUROC)")
    base = table["label"].mean()
    axes["pr"].axhline(base, color="grey", linestyle=":")
    axes["pr"].set(xlabel="recall", ylabel="precision", title="precision-recall (AUPRC)", ylim=(0, 1.02))
    for ax in axes.values():
        ax.legend(fontsize=7, loc="lower right")
    save_png(figures["roc"], roc_path)
    save_png(figures["pr"], pr_path)


def _cell(entry: dict, name: str) -> str:
    value, interval = entry.get(name), entry.get(f"{name}_interval")
    if value is None:
        return "—"
    return f"{value:.3f}" + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")


def format_report(report: dict) -> str:
    """The report as Markdown: one row per method."""
    methods = report["methods"]
    matched = any("matched_auroc" in e for e in methods.values())
    head = ["method", "score", "variants (+/−)", "unscored", "AUROC", "AUPRC", "AUPRC by chrom", "top-k odds ratio",
            *(["matched AUROC"] if matched else [])]
    lines = [f"# Variant benchmark: {report['labels']}", "", f"Model `{report['model']}`, genome "
             f"`{report['genome']}`; 95 % bootstrap intervals over {report['resamples']} resamples of "
             f"{'match groups' if report['match_on'] else 'variants'}.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method, e in methods.items():
        top = f"{_cell(e, 'odds_ratio')} (k={e['top_k']})" if "top_k" in e else "—"
        cells = [method, e["score"].replace("|", "\\|"), f"{e['variants']} ({e['positives']}/{e['negatives']})",
                 str(e["unscored"]), _cell(e, "auroc"), _cell(e, "auprc"), _cell(e, "auprc_by_chrom"), top,
                 *([_cell(e, "matched_auroc")] if matched else [])]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Variants not scored, with the reason: `skipped.tsv` ({report['skipped']} rows). Scores: "
              "`scores.tsv`. Curves: `roc.png`, `pr.png`.", ""]
    return "\n".join(lines)


def benchmark_variants(model, genome, labels, *, out=None, methods=None, match_on: str | None = DEFAULT_MATCH,
                       top_k: float = 0.01, resamples: int = 1000, seed: int = 0, tss=None, rc: str | None = None,
                       window_bp: int | None = None, eval_length: int | None = None, batch_size: int = 16,
                       device: str = "auto", progress: bool = True) -> dict:
    """Score the labels table `labels` (a path) with `model` on `genome` and rank each method's scores
    against the labels (see the module docstring); returns the report. `out`: a folder to write
    report.json, report.md, scores.tsv, skipped.tsv, roc.png and pr.png in. match_on: the column of match
    groups (default TraitGym's `match_group`, when present; None: none). top_k: the odds ratio's top (a
    fraction of the scored variants, or a count). resamples, seed: the bootstrap. The rest: as
    `score_variants`."""
    from dnabird.io import atomic_output, check_outputs, write_json_atomic, write_text_atomic

    reject(not isinstance(resamples, int) or resamples < 1, "resamples", resamples, "an integer >= 1")
    if out is not None:
        check_outputs(folders=[out], inputs=[labels, genome])
    table = read_labels(labels, match_on)
    if table["label"].nunique() < 2:
        raise ParameterError("labels", str(labels), "a table with both positive and negative variants")
    scored, skipped, settings = score_methods(model, genome, table, methods, tss=tss, rc=rc, window_bp=window_bp,
                                              eval_length=eval_length, batch_size=batch_size, device=device,
                                              progress=progress)
    names = list(methods or model_methods(model))
    report = {"model": str(model), "genome": str(genome), "labels": str(labels),
              "match_on": match_on if table["match_key"].notna().all() else None, "resamples": resamples, "seed": seed,
              "skipped": len(skipped), "skipped_by_method": skipped.groupby("method").size().to_dict(),
              "methods": evaluate(scored, names, top_k=top_k, resamples=resamples, seed=seed), "settings": settings}
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        with atomic_output(out / "scores.tsv") as tmp:
            scored.drop(columns=["match_key"]).to_csv(tmp, sep="\t", index=False, na_rep="NA")
        with atomic_output(out / "skipped.tsv") as tmp:
            skipped.to_csv(tmp, sep="\t", index=False)
        plot_curves(scored, names, out / "roc.png", out / "pr.png")
        write_json_atomic(out / "report.json", report)
        write_text_atomic(out / "report.md", format_report(report))
    return report
