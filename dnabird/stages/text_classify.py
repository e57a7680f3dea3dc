"""Stage `text_classify`: one or more classifiers on the same labelled splits, and one results table.

A `compare` stage (`dnabird.stages.compare`) with task `text_classification`: `models` (name -> the settings it
changes from `base`, or `init_from` an earlier model) train into `<stage>/<name>/`; null paths come from the
`text_data` (long-range task) and `text_tokenizer` stages. `results.txt`: per model its selected validation
accuracy, test accuracy (95 % interval), F1 and wall time, then the baselines and the majority class.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from dnabird.finetune.report import MODEL_ROW, _value
from dnabird.pipeline import RunContext
from dnabird.stages import filled, finetune
from dnabird.stages.compare import Track, named_models_stage
from dnabird.text.classify import SPLITS, TASK, TextClassifyConfig


def text_paths(outputs: str):
    """The `resolve` of a text task: null splits from the `text_data` stage's `<outputs>_<split>`, a null
    tokenizer from the `text_tokenizer` stage's."""
    sources = {f"data.{split}": ("text_data", f"{outputs}_{split}") for split in SPLITS}
    return lambda config, context, out_dir=None: filled(config, context, out_dir,
                                                        {**sources, "tokenizer": ("text_tokenizer", "model")})


def inputs(config, context: RunContext) -> list:
    """The splits, the tokenizer and the pretrained checkpoint (if any) a text run reads."""
    paths = [*(getattr(config.data, split) for split in SPLITS), config.tokenizer]
    return [p for p in paths + [config.pretrained] if p not in (None, "none")]


def _accuracy(row: dict) -> str:
    return _value(row["accuracy"], row.get("ci95", {}).get("accuracy"))


def _f1(row: dict):
    return row.get("f1", row.get("macro_f1"))


def model_rows(reports: dict[str, dict], seconds: dict[str, float], settings: dict, validation: Callable,
               scores: Callable, extra: Callable = lambda config: ()) -> list[str]:
    """Each text model's table row: its name, attention, input tokens and `extra(config)`, the selected step and
    `validation(report)`, then `scores(its test row)` (the test cells) and its wall time."""
    rows = []
    for name, report in reports.items():
        config, value = settings[name], validation(report)
        attention = config.model_overrides.get("attention", {}).get("type", config.model)
        rows.append(" | ".join([f"| {name}", attention, str(config.data.max_length), *extra(config),
                                str(report["selection"]["step"]), "n/a" if value is None else f"{value:.3f}",
                                scores(report["test"]["rows"][MODEL_ROW]), f"{seconds[name]:.0f} |"]))
    return rows


def results_table(reports: dict[str, dict], seconds: dict[str, float], settings: dict[str, TextClassifyConfig]) -> str:
    """A Markdown table: each model's selected validation accuracy and its test scores, then the baselines
    (from the first model's report) and the majority class."""
    lines = ["| model | attention | tokens | keeps | selected step | validation accuracy | test accuracy (95 % CI) "
             "| test F1 | wall time (s) |", "|---|---|---|---|---|---|---|---|---|"]
    lines += model_rows(reports, seconds, settings, lambda report: report["selection"]["validation"].get("accuracy"),
                        lambda row: f"{_accuracy(row)} | {_f1(row):.3f}", lambda config: [config.data.keep])
    first_name, first = next(iter(reports.items()))
    for scorer, row in first["test"]["rows"].items():
        if scorer != MODEL_ROW:
            inputs = "" if "whole document" in scorer else f" (inputs of {first_name})"
            lines.append(f"| {scorer}{inputs} | — | — | — | — | — | {_accuracy(row)} | {_f1(row):.3f} | — |")
    counts = first["data"]["splits"]["test"]["labels"]
    majority = max(counts.values()) / sum(counts.values())
    lines.append(f"| majority class | — | — | — | — | — | {majority:.3f} | — | — |")
    return "\n".join(lines)


TRACK = Track(TextClassifyConfig, text_paths("long_range"), inputs, partial(finetune.run, TASK), results_table)
STAGE = named_models_stage("text_classify", TASK, TextClassifyConfig)
