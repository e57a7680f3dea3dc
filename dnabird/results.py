"""The results page: the headline figures of finished runs, read from the runs' own records.

`figures(stage_dir)` turns whatever a stage recorded (`report.json`, `comparison.json` or `results.json`)
into rows of one schema, `Figure(table, row, column, value, interval)`. `render_results(run_dirs)` groups
runs by pipeline and writes one table per stage: a single run's value with its 95 % bootstrap interval,
or, over several runs of one pipeline (other seeds), the mean and the range — training variance, which
a bootstrap interval does not cover. Each group lists its runs' seeds, toy version, commit, machine,
threads and wall time, so a figure is written once and says where it came from.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from dnabird.errors import ConfigError
from dnabird.pipeline import STAGE_RECORD, registered_stages


@dataclass(frozen=True)
class Figure:
    """One measured number: `value` in cell (`row`, `column`) of a stage's `table`; `interval` its 95 % CI."""

    table: str
    row: str
    column: str
    value: float
    interval: tuple[float, float] | None = None


def _ci(row: dict, key: str) -> tuple[float, float] | None:
    interval = (row.get("ci95") or {}).get(key)
    return tuple(interval) if interval else None


# A fine-tuning test row's scalar metrics (classification; regression, means over targets; ROUGE F-measures of
# the summarise task) -> column.
SCALAR_COLUMNS = {"accuracy": "accuracy", "f1": "f1", "auroc": "auroc", "mcc": "MCC", "macro_f1": "macro F1",
                  "pearson": "Pearson r", "spearman": "Spearman", "r2": "R²",
                  "rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L"}


def _finetune_rows(table: str, rows: dict, prefix: str = "") -> list[Figure]:
    out = []
    for name, row in rows.items():
        label = prefix + name
        if "groups" in row:  # multi-label: the median AUROC of each group, then the median AUPRC
            out += [Figure(table, label, f"{group} median AUROC", entry["median_auroc"], _ci(row, group))
                    for group, entry in row["groups"].items() if entry.get("median_auroc") is not None]
            if row.get("median_auprc") is not None:
                out.append(Figure(table, label, "median AUPRC", row["median_auprc"]))
        else:
            out += [Figure(table, label, column, row[key], _ci(row, key))
                    for key, column in SCALAR_COLUMNS.items() if row.get(key) is not None]
    return out


def report_figures(table: str, report: dict, prefix: str = "") -> list[Figure]:
    """The figures of one `report.json` (any dnabird report); unknown layouts give none."""
    if "at_mask" in report:  # DNA pretraining, held-out
        return [Figure(table, prefix + name, f"bits/bp {where}", entry[name]["bits_per_base"])
                for where, entry in (("at [MASK]", report["at_mask"]), ("all selected", report))
                for name in ("model", "one_sentence", "unigram", "markov_6") if name in entry]
    if "scorers" in report:  # variant effects benchmarked against a truth table
        return [Figure(table, prefix + column, f"AUROC {versus.replace('_', ' ')}", entry["auroc"],
                       tuple(entry["auroc_interval"]) if entry.get("auroc_interval") else None)
                for scorer in report["scorers"].values() for column, classes in scorer.get("benchmark", {}).items()
                for versus, entry in classes.items() if isinstance(entry, dict) and entry.get("auroc") is not None]
    test = report.get("test")
    if isinstance(test, dict) and "rows" in test:  # the fine-tuning recipe's test table
        return _finetune_rows(table, test["rows"], prefix)
    if isinstance(test, dict) and "model" in test:  # multi-class (ListOps)
        return [Figure(table, prefix + name, "test accuracy", test[key]["accuracy"])
                for name, key in (("model", "model"), ("majority class", "majority_class")) if key in test]
    model = report.get("model")
    if isinstance(model, dict) and "bits_per_token" in model:  # text MLM
        return [Figure(table, prefix + name, column, report[name][key]) for name in ("model", "unigram")
                if name in report for column, key in (("bits/token", "bits_per_token"), ("BPC", "bits_per_char"))]
    if isinstance(model, dict) and "bpc" in model:  # character LM
        return [Figure(table, prefix + "model", "BPC", model["bpc"]),
                Figure(table, prefix + "unigram", "BPC", report["unigram_bpc"])]
    validation = report.get("validation")
    if isinstance(validation, dict) and "f1" in validation:  # extractive QA
        return [Figure(table, prefix + "model", column, validation[key])
                for column, key in (("EM", "exact_match"), ("F1", "f1")) if key in validation]
    return []


def figures(stage_dir: str | os.PathLike) -> list[Figure]:
    """Every figure a finished stage folder recorded (its name is the table's)."""
    stage_dir = Path(stage_dir)
    table = stage_dir.name
    found = []
    if (stage_dir / "report.json").is_file():
        found += report_figures(table, _read(stage_dir / "report.json"))
    if (stage_dir / "comparison.json").is_file():  # {run: test section}, by comparisons before `compare`
        for run, test in _read(stage_dir / "comparison.json").items():
            found += report_figures(table, {"test": test}, prefix=f"{run}: ")
    if (stage_dir / "results.json").is_file():  # {model: {settings..., "report": report}}
        for name, entry in _read(stage_dir / "results.json").items():
            found += report_figures(table, entry.get("report", {}), prefix=f"{name}: ")
    return found


def finished_record(stage_dir: str | os.PathLike) -> dict | None:
    """A stage folder's record (`stage.json`) if the stage finished, else None; an unreadable one raises."""
    path = Path(stage_dir) / STAGE_RECORD
    record = _read(path) if path.is_file() else {}
    return record if record.get("finished") else None


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ConfigError(f"{path}: unreadable record ({err})") from None


@dataclass
class RunSummary:
    """A finished run folder: its pipeline, provenance and figures (stage order kept); `stage_keys` maps each
    stage to its record's key (config and input fingerprints), so a stage copied into several run folders
    (e.g. one pretraining under three fine-tuning seeds) counts once."""

    path: Path
    pipeline: str
    seeds: str
    toy: str
    commit: str
    machine: str
    threads: str
    seconds: float
    figures: list[Figure]
    stage_keys: dict[str, str]


def summarise_run(run_dir: str | os.PathLike) -> RunSummary:
    """Read `run_dir/run.json` and every finished stage's records."""
    run_dir = Path(run_dir)
    record = _read(run_dir / "run.json") if (run_dir / "run.json").is_file() else None
    if record is None:
        raise ConfigError(f"{run_dir}: no run.json (not a `dnabird run` folder)")
    found, seconds, stage_versions, keys = [], 0.0, {}, {}
    order = {stage.name: index for index, stage in enumerate(registered_stages())}
    for stage in sorted(record.get("stages", {}), key=lambda name: order.get(name, len(order))):
        entry = finished_record(run_dir / stage)
        if entry is None:
            continue
        seconds += float(entry.get("seconds") or 0.0)
        stage_versions = entry.get("versions") or stage_versions
        keys[stage] = json.dumps(entry.get("key"), sort_keys=True)
        found += figures(run_dir / stage)
    environment = stage_versions or record.get("versions", {})
    return RunSummary(path=run_dir, pipeline=record.get("pipeline", "?"), seeds=_seeds(record),
                      toy=_toy_version(run_dir, record), commit=environment.get("commit", "unknown"),
                      machine=_machine(environment), threads=environment.get("cpu threads", "?"),
                      seconds=seconds, figures=found, stage_keys=keys)


def _machine(environment: dict) -> str:
    """The CPU, and the GPU first where the run had one (training there is bf16 autocast unless set to fp32)."""
    cpu, gpu = environment.get("cpu", "unknown"), environment.get("cuda", "none")
    return cpu if gpu in ("none", "", None) else f"{gpu} GPU; {cpu}"


def _seeds(record: dict) -> str:
    """The pipeline seed, and each stage seed that differs from it."""
    seed = record.get("seed", 0)
    config = record.get("config", {})
    others = [f"{stage} {section['seed']}" for stage, section in config.items()
              if isinstance(section, dict) and "seed" in section and section["seed"] != seed]
    return str(seed) + (f" ({', '.join(others)})" if others else "")


def _toy_version(run_dir: Path, record: dict) -> str:
    """`generator vVERSION ×scale` of the generated data a run fetched, or "—" for real or no data."""
    fasta = record.get("outputs", {}).get("fetch", {}).get("fasta")
    if fasta is None:
        return "—"
    manifest = (run_dir / fasta).parent / "manifest.json"
    if not manifest.is_file():
        return "—"
    data = _read(manifest)
    scale = data.get("scale")
    return f"{data.get('generator', '?').rsplit('.', 1)[-1]} v{data.get('version', '?')}" + \
        (f" ×{scale:g}" if scale not in (None, 1, 1.0) else "")


def _cell(values: Sequence[Figure]) -> str:
    if len(values) == 1:
        figure = values[0]
        return f"{figure.value:.3f}" + (f" [{figure.interval[0]:.3f}, {figure.interval[1]:.3f}]"
                                        if figure.interval else "")
    numbers = [f.value for f in values]
    return f"{statistics.fmean(numbers):.3f} ({min(numbers):.3f}–{max(numbers):.3f}, n={len(numbers)})"


def _stage_tables(runs: Sequence[RunSummary]) -> list[str]:
    """One Markdown table per stage: rows × columns, each cell over the runs that have it."""
    cells: dict[str, dict[str, dict[str, list[Figure]]]] = {}
    seen = set()
    for run in runs:
        for figure in run.figures:
            identity = (run.stage_keys.get(figure.table), figure.table, figure.row, figure.column)
            if identity in seen:  # the same stage run, copied into another run folder
                continue
            seen.add(identity)
            cells.setdefault(figure.table, {}).setdefault(figure.row, {}).setdefault(figure.column, []).append(figure)
    lines = []
    for table, rows in cells.items():
        columns = list(dict.fromkeys(column for row in rows.values() for column in row))
        lines += [f"### {table}", "", "| | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
        lines += ["| " + row + " | " + " | ".join(_cell(values[c]) if c in values else "—" for c in columns) + " |"
                  for row, values in rows.items()]
        lines.append("")
    return lines


def render_results(run_dirs: Iterable[str | os.PathLike], *, command: str = "") -> str:
    """The results page (Markdown) of the finished runs in `run_dirs`, grouped by pipeline."""
    runs = [summarise_run(d) for d in run_dirs]
    if not runs:
        raise ConfigError("no run folders given")
    groups: dict[str, list[RunSummary]] = {}
    for run in runs:
        groups.setdefault(run.pipeline, []).append(run)
    lines = ["# Results", "",
             "Generated from the runs' own records" + (f" by `{command}`" if command else "") + "; do not edit by "
             "hand. A single run's cell is its value with the 95 % bootstrap interval over test examples; over "
             "several runs of one pipeline (other seeds) the mean, then the range (min–max) and the number of "
             "runs: that spread is training variance, which a bootstrap interval does not cover.", ""]
    for pipeline, members in groups.items():
        lines += [f"## {pipeline}", "", "| run | seeds | data | commit | machine | threads | wall time |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {r.path.name} | {r.seeds} | {r.toy} | {r.commit} | {r.machine} | {r.threads} | "
                  f"{r.seconds / 60:.1f} min |" for r in members]
        lines += ["", *_stage_tables(members)]
    return "\n".join(lines).rstrip() + "\n"
