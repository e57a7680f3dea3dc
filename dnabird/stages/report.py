"""Stage `report`: `report.md` in the run folder — every finished stage's wall time and headline figures, its
tables and its plots (linked relative to the run folder), read only from what the stages recorded."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from dnabird.io import write_text_atomic
from dnabird.pipeline import STAGE_RECORD, RunContext, Stage
from dnabird.results import finished_record

SECTIONS = ("fetch", "corpus", "tokenizer", "shards", "pretrain", "promoter", "chromatin", "predict", "variants")


@dataclass
class ReportConfig:
    """title: the report's heading; stages: the stage folders reported, in order (absent ones left out)."""

    title: str = "dnabird run report"
    stages: list[str] = field(default_factory=lambda: list(SECTIONS))


def inputs(config: ReportConfig, context: RunContext) -> list[Path]:
    folders = [context.out_dir / stage for stage in config.stages]
    return [folder / name for folder in folders if finished_record(folder)
            for name in ("report.json", "results.txt", STAGE_RECORD) if (folder / name).is_file()]


def _interval(value, interval) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")


def _pretrain(report: dict) -> tuple[str, list[str]]:
    from dnabird.pretraining.evaluate import format_report

    at_mask = report.get("at_mask", report)
    margin = at_mask["margin_bits_per_base"].get("unigram")
    headline = (f"{at_mask['model']['bits_per_base']:.3f} bits/bp at [MASK] "
                f"({margin:+.3f} vs unigram); attention density {report['attention']['density']:.2f}")
    return headline, ["```text", format_report(report), "```"]


def _finetuned(report: dict) -> tuple[str, list[str]]:
    """A fine-tuned head's test headline: binary (promoter) accuracy, F1, AUROC and MCC; multi-label (chromatin)
    the median AUROC per group; multi-class MCC, accuracy and macro F1; regression the mean Pearson r, Spearman
    rho and R² over targets (the user's scale)."""
    from dnabird.finetune.report import MODEL_ROW, format_table

    model = report["test"]["rows"][MODEL_ROW]
    ci = model.get("ci95", {})

    def figure(name: str, metric: str) -> str:
        return f"{name} {_interval(model.get(metric), ci.get(metric))}"

    if "groups" in model:
        headline = "median AUROC " + ", ".join(f"{group} {_interval(row['median_auroc'], ci.get(group))}"
                                               for group, row in model["groups"].items())
    elif "targets" in model:
        headline = "test mean over targets: " + ", ".join(
            figure(name, metric) for name, metric in (("Pearson r", "pearson"), ("Spearman", "spearman"),
                                                      ("R²", "r2")))
    elif "classes" in model:
        headline = "test " + ", ".join(figure(name, metric) for name, metric in (
            ("MCC", "mcc"), ("accuracy", "accuracy"), ("macro F1", "macro_f1")))
    else:
        headline = (f"test {figure('accuracy', 'accuracy')}, F1 {model['f1']:.3f}, {figure('AUROC', 'auroc')}"
                    + (f", {figure('MCC', 'mcc')}" if model.get("mcc") is not None else ""))
    return headline, ["```text", format_table(report), "```"]


def _is_finetuned(report: dict) -> bool:
    """Whether a stage's report.json is a fine-tuned head's (`dnabird.finetune.recipe.write_report`)."""
    from dnabird.finetune.report import MODEL_ROW

    return MODEL_ROW in report.get("test", {}).get("rows", {})


def _variants(report: dict) -> tuple[str, list[str]]:
    lines = ["Disruptive vs each neutral class, benchmarked (`dnabird benchmark-variants`' metrics on `variants/"
             "labels.tsv`): AUROC and AUPRC with 95 % bootstrap intervals (disruptive vs neutral variants scored).", "",
             "| scorer | effect | vs distant neutral: AUROC | AUPRC | vs in-element controls: AUROC | AUPRC "
             "| seconds |",
             "|---|---|---|---|---|---|---|"]
    heads = []
    for scorer, entry in report["scorers"].items():
        for column, rows in entry.get("benchmark", {}).items():
            cells = []
            for c in ("distant_neutral", "in_element_control"):
                row = rows[c]
                cells += [f"{_interval(row.get('auroc'), row.get('auroc_interval'))} ({row['positives']} vs "
                          f"{row['negatives']})", _interval(row.get("auprc"), row.get("auprc_interval"))]
            effect = entry.get("effect", "−LLR" if scorer == "mlm_llr" else "max |Δp|").replace("|", "\\|")
            lines.append(f"| {column} | {effect} | {' | '.join(cells)} | {entry['seconds']:.0f} |")
            if column == scorer:
                heads.append(f"{scorer} AUROC {cells[0].split(' (')[0]} / {cells[2].split(' (')[0]}")
    lines.append("\nAlleles each scorer could not score, with the reasons, are listed beside its table:")
    for scorer, entry in report["scorers"].items():
        summary = entry["summary"]
        reasons = ", ".join(f"{reason}: {count}" for reason, count in summary["skipped_by_reason"].items())
        listed = f"[`variants/{entry['unscored']}`](variants/{entry['unscored']})" if "unscored" in entry else "—"
        lines.append(f"- {scorer}: {summary['scored_alleles']} scored, {summary['skipped_alleles']} not scored"
                     f"{f' ({reasons})' if reasons else ''}; {listed}")
    if "ism" in report:
        lines.append(f"\nSaturation mutagenesis of {report['ism']['region']} with the {report['ism']['model']} "
                     f"model ({report['ism']['seconds']:.0f} s).")
    return "; ".join(heads) + " (vs distant neutral / vs in-element controls)", lines


def _predict(report: dict) -> tuple[str, list[str]]:
    summary, files = report["summary"], report["files"]
    headline = (f"{summary['predicted']} tiles of {', '.join(report['regions'])} every {report['step']} bp, "
                f"{report['tiles_per_second']:.1f} tiles/s ({report['seconds']:.1f} s)")
    reasons = ", ".join(f"{reason}: {count}" for reason, count in summary["unpredicted_by_reason"].items())
    lines = [f"The head `{report['model']}` over tiles of {report['window_bp']} bp every "
             f"{report['step']} bp: {summary['predicted']} predicted, {summary['unpredicted']} not"
             f"{f' ({reasons})' if reasons else ''}; {summary['padded_windows']} windows padded past a contig end, "
             f"{summary['windows_with_n']} holding N. Outputs in the {report['scale']} scale: one row per tile in "
             f"[`predict/{files['table']}`](predict/{files['table']}), a bigWig and a bedGraph per output in "
             f"`predict/{files['tracks']}/`; the plot draws "
             + ", ".join(report["plot"]["lines"]) + "."]
    return headline, lines


def _labelled(report: dict) -> tuple[str, list[str]]:
    """The labelled task: a fine-tuned stage's headline and table (`_finetuned`), then its data's skips and the
    leakage check."""
    from dnabird.data.leakage import format_leakage

    headline, body = _finetuned(report)
    data = report["data"]
    skipped = ", ".join(f"{reason}: {count}" for reason, count in data["skipped"].items()) or "none"
    return headline, [*body, "", f"{data['problem']} on {data['inputs']} "
                      f"({', '.join(Path(f).name for f in data['files'])}); {data['rows_read']} rows read, skipped "
                      f"{skipped} (skipped.tsv); splits: {data['split']}.", "", *format_leakage(data["leakage"])]


SUMMARIES = {"pretrain": _pretrain, "promoter": _finetuned, "chromatin": _finetuned, "predict": _predict,
             "variants": _variants, "labelled": _labelled}


def render(config: ReportConfig, out_dir: Path) -> str:
    """The Markdown report of the finished stages under `out_dir`."""
    rows, sections = [], []
    total = 0.0
    for stage in config.stages:
        record = finished_record(out_dir / stage)
        if record is None:
            continue
        seconds = float(record.get("seconds") or 0.0)
        total += seconds
        folder = out_dir / stage
        headline, body = "", []
        stage_report = json.loads((folder / "report.json").read_text()) if (folder / "report.json").is_file() else None
        if stage_report is not None and stage in SUMMARIES:
            headline, body = SUMMARIES[stage](stage_report)
        elif stage_report is not None and _is_finetuned(stage_report):   # any task's stage (`dnabird.tasks`)
            headline, body = _finetuned(stage_report)
        elif (folder / "results.txt").is_file():  # a comparison (`dnabird.stages.compare`): its table
            table = (folder / "results.txt").read_text().rstrip()
            body = [table] if table.startswith("|") else ["```text", table, "```"]
        rows.append(f"| {stage} | {seconds:.0f} | {headline} |")
        plots = sorted(folder.glob("*.png"))
        if body or plots:
            sections += [f"## {stage}", "", *body, ""]
            sections += [f"![{p.stem}]({stage}/{p.name})" for p in plots] + [""]
    head = [f"# {config.title}", "", f"Run folder: `{out_dir.name}`; each stage's wall time as recorded when it "
            "ran (a stage skipped in a later run keeps its time).", "",
            "| stage | seconds | headline |", "|---|---|---|", *rows, f"| **total** | {total:.0f} | |", ""]
    return "\n".join(head + sections)


def run(config: ReportConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    text = render(config, context.out_dir)
    write_text_atomic(context.out_dir / "report.md", text)
    print(text.split("\n## ")[0])
    return {"report": context.out_dir / "report.md"}


STAGE = Stage("report", ReportConfig, inputs, run)
