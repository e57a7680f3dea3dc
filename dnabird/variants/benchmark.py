"""`benchmark_variants`: does a model separate the positives of a labelled variant set from its negatives?

A labels table (TSV, CSV or parquet; TraitGym's and ClinVar-derived sets' layout:
chrom, 1-based pos, ref, alt, label, and optionally a match column such as TraitGym's `match_group`) is
scored through `score_variants` with every method of `dnabird.variants.scorer.SCORERS` the model supports,
each ranked by its scorer's effects (`Scorer.effects`: e.g. a head's largest |Δ log odds| over its outputs,
−LLR and −LLR per bp, the embedding distance), and beside them by `markov`, a score that needs no model: −the
change in log-likelihood of the variant's masked span under an order-6 Markov chain fitted on the genome
(`dnabird.variants.baseline`), so a near-chance method can be told from a broken one.

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

from dnabird.errors import CheckpointError, InputFormatError, ParameterError, UnscorableVariantError, reject
from dnabird.variants.baseline import MARKOV_ORDER
from dnabird.variants.benchmark_metrics import ranking_metrics
from dnabird.variants.records import Variant
from dnabird.variants.scorer import SCORERS

REQUIRED = ("chrom", "pos", "ref", "alt", "label")
POSITIVE = ("1", "true", "pathogenic", "positive")
NEGATIVE = ("0", "false", "benign", "negative")
DEFAULT_MATCH = "match_group"  # TraitGym's matched negatives
BASELINE = "markov"  # the baseline's row: needs no model
BASELINE_LABEL = f"−ΔlogL, order-{MARKOV_ORDER} Markov chain"
SKIPPED_COLUMNS = ("line", "chrom", "pos", "ref", "alt", "label", "method", "reason", "detail")
PARQUET = (".parquet", ".pq")
RESERVED = ("line", "match_key", *(e.name for scorer in SCORERS.values() for e in scorer.effects(None)),
            BASELINE)  # columns the benchmark adds


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


def _task(model: str | os.PathLike):
    """The checkpoint's task (None: a pretrained model), read from its task.json alone."""
    from dnabird.model.checkpoint import read_task

    if not Path(model).is_dir():
        raise CheckpointError(f"{model}: checkpoint directory not found")
    return read_task(model)


def model_methods(model: str | os.PathLike) -> tuple[str, ...]:
    """The methods a checkpoint supports: the effects (`Scorer.effects`) of every scorer that can read it (a
    head: `head`, `embed_dist`; a pretrained model: `mlm_llr`, `llr_per_bp`, `embed_dist`), then `markov`."""
    task = _task(model)
    return (*(e.name for scorer in SCORERS.values() if scorer.supports(task) for e in scorer.effects(task)),
            BASELINE)


def score_methods(model, genome, labels: pd.DataFrame, methods=None, *, tss=None, rc: str | None = None,
                  window_bp: int | None = None, eval_length: int | None = None, batch_size: int = 16,
                  device: str = "auto", progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, dict, dict]:
    """Every row of `labels` (`read_labels`) scored by each of `methods` (default: all the model supports):
    the table with one score column per method (NA where not scored, higher = more likely positive), the
    skipped rows (`SKIPPED_COLUMNS`), each scoring's settings and each method's label."""
    from dnabird.genome.reference import Genome
    from dnabird.variants.score import score_variants

    supported = model_methods(model)
    methods = list(methods or supported)
    unknown = [m for m in methods if m not in supported]
    reject(bool(unknown), "methods", unknown, f"methods this model supports: {list(supported)}")
    task = _task(model)
    genome = genome if isinstance(genome, Genome) else Genome(genome)
    variants = [Variant(c, int(p), r, a, f"line{line}")
                for line, c, p, r, a in labels[["line", "chrom", "pos", "ref", "alt"]].itertuples(index=False)]
    sizes = dict(window_bp=window_bp, eval_length=eval_length, batch_size=batch_size, device=device,
                 progress=progress)
    table, skipped, settings, names = labels.copy(), [], {}, {}

    def add(method: str, values: pd.DataFrame, unscored: pd.DataFrame) -> None:
        table[method] = np.nan
        table.loc[values["record"].to_numpy(), method] = values["all"].to_numpy()
        for row in unscored.drop_duplicates("record").itertuples(index=False):
            entry = labels.iloc[row.record]
            skipped.append((entry["line"], entry["chrom"], entry["pos"], entry["ref"], entry["alt"],
                            entry["label"], method, row.reason, row.detail))

    for name, scorer in SCORERS.items():
        effects = [e for e in scorer.effects(task) if e.name in methods] if scorer.supports(task) else []
        if not effects:
            continue
        scores = score_variants(model, genome, variants, method=name, rc=rc,
                                tss=tss if scorer.needs_head else None, **sizes)
        settings[name] = scores.settings
        for effect in effects:
            add(effect.name, effect.per_variant(scores), scores.skipped)
            names[effect.name] = effect.label
    if BASELINE in methods:
        baseline, unscored, settings[BASELINE] = markov_baseline(model, genome, variants, settings, rc, window_bp)
        add(BASELINE, baseline, unscored)
        names[BASELINE] = BASELINE_LABEL
    return table, pd.DataFrame(skipped, columns=list(SKIPPED_COLUMNS)), settings, names


def markov_baseline(model, genome, variants: list[Variant], settings: dict, rc: str | None,
                    window_bp: int | None) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """−(log P(ALT span) − log P(REF span)) under an order-`MARKOV_ORDER` chain fitted on `genome`
    (`dnabird.variants.baseline`) in each variant's centred window (the window, strands and flank of the
    first scoring run in `settings`, else `window_bp` or 1001 bp, both strands): per record the mean over
    its ALTs (`record`, `all`), the alleles it cannot score with the reason, and its settings."""
    from dnabird.model.checkpoint import read_tokenizer
    from dnabird.model.task_spec import Anchor
    from dnabird.variants.baseline import genome_chain, markov_llr
    from dnabird.variants.records import read_alleles
    from dnabird.variants.score import INVALID_BASE, Setup, allele_windows
    from dnabird.variants.scores import SKIPPED_COLUMNS as UNSCORED_COLUMNS

    run = next(iter(settings.values()), {})
    window = run.get("window_bp", window_bp or 1001)
    average, flank = run.get("rc", rc or "average") == "average", run.get("flank_bp", 0)
    setup = Setup(BASELINE, window, 0, Anchor("centre"), average, flank, "skip")  # the windows `score` reads
    tokenizer = read_tokenizer(model)
    chain = genome_chain(genome, tokenizer)
    values, unscored = [], []
    for allele in read_alleles(variants):
        try:
            (window_of,) = allele_windows(allele, genome, setup, None)
            values.append((allele.record, -markov_llr(chain, tokenizer, window_of.sequences, average, flank)[0]))
        except (UnscorableVariantError, InputFormatError) as err:
            reason, detail = (err.reason, err.detail) if isinstance(err, UnscorableVariantError) else \
                (INVALID_BASE, str(err))
            v = allele.variant
            unscored.append((allele.record, allele.allele, v.chrom, v.pos, v.id, v.ref, v.alt, reason, detail))
    per_record = pd.DataFrame(values, columns=["record", "all"]).groupby("record", sort=True).mean().reset_index()
    return per_record, pd.DataFrame(unscored, columns=list(UNSCORED_COLUMNS)), \
        {"order": MARKOV_ORDER, "window_bp": window, "rc": "average" if average else "forward", "flank_bp": flank,
         "fitted_on": "genome", "tokenizer_hash": tokenizer.hash}


def evaluate(table: pd.DataFrame, methods, *, labels: dict | None = None, top_k: float = 0.01, resamples: int = 1000,
             seed: int = 0) -> dict:
    """`ranking_metrics` of each method's column of `table` (label, chrom, match_key and the score columns) over
    the rows it scored (`labels`: what each method's score is); `unscored` counts the rest. Methods with no
    scored row, or one class only, have no metrics."""
    out = {}
    for method in methods:
        scored = table[table[method].notna()]
        entry = {"score": (labels or {}).get(method, method), "unscored": int(len(table) - len(scored))}
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
    scored, skipped, settings, labels_of = score_methods(model, genome, table, methods, tss=tss, rc=rc,
                                                         window_bp=window_bp, eval_length=eval_length,
                                                         batch_size=batch_size, device=device, progress=progress)
    names = list(methods or model_methods(model))
    report = {"model": str(model), "genome": str(genome), "labels": str(labels),
              "match_on": match_on if table["match_key"].notna().all() else None, "resamples": resamples, "seed": seed,
              "skipped": len(skipped), "skipped_by_method": skipped.groupby("method").size().to_dict(),
              "methods": evaluate(scored, names, labels=labels_of, top_k=top_k, resamples=resamples, seed=seed),
              "settings": settings}
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
