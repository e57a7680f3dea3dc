"""Stage `text_classify`: one or more classifiers on the same labelled splits, and one results table.

Each entry of `models` names a run and the settings it changes from `base` (any `TextClassifyConfig` key:
e.g. `data.max_length`, `data.keep`, `model_overrides`); `base` holds what they share. Every run goes through
the fine-tuning recipe (`dnabird.finetune`, task `text_classification`) into `<stage>/<name>/` and resumes
from its checkpoints when interrupted. Null paths come from the `text_data` stage (its long-range task) and
the `text_tokenizer` stage. `results.json` and `results.txt` (a Markdown table) hold the results: per model
its validation accuracy at the selected step and its test accuracy (95 % bootstrap interval) and F1, its
wall time, then the baselines of the first model's report and the majority class.

Staged training: a model whose entry says `init_from: <an earlier model's name>` starts from that model's
fine-tuned weights (`<stage>/<name>/model`, the same tokenizer) instead of its own `pretrained`, e.g. a
model warmed up on short inputs (`data: {max_length: 256, keep: ends}`) then trained at full length.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import ClassVar

from dnabird.finetune.report import MODEL_ROW
from dnabird.pipeline import RunContext
from dnabird.stages import finetune
from dnabird.stages.compare import NamedModels, Track, comparison_stage, filled
from dnabird.text.classify import SPLITS, TASK, TextClassifyConfig


@dataclass
class TextClassifyStageConfig(NamedModels):
    """base: `TextClassifyConfig` keys shared by every model; models: name -> the keys that model changes
    (and `init_from`); seed: every model's seed (`dnabird.stages.compare`)."""

    STAGE: ClassVar[str] = "text_classify"
    TASK: ClassVar[str] = TASK


def resolve(config: TextClassifyConfig, context: RunContext, out_dir=None) -> TextClassifyConfig:
    """Null splits from the `text_data` stage's long-range task, a null tokenizer from `text_tokenizer`."""
    return filled(config, context, out_dir, {split: ("text_data", f"long_range_{split}") for split in SPLITS},
                  tokenizer=("text_tokenizer", "model"))


def inputs(config, context: RunContext) -> list:
    """The splits, the tokenizer and the pretrained checkpoint (if any) a text run reads."""
    paths = [*(getattr(config.data, split) for split in SPLITS), config.tokenizer]
    return [p for p in paths + [config.pretrained] if p not in (None, "none")]


def _accuracy(row: dict) -> str:
    ci = row.get("ci95", {}).get("accuracy")
    return f"{row['accuracy']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _f1(row: dict):
    return row.get("f1", row.get("macro_f1"))


def results_table(reports: dict[str, dict], seconds: dict[str, float], settings: dict[str, TextClassifyConfig]) -> str:
    """A Markdown table: each model's selected validation accuracy and its test scores, then the baselines
    (from the first model's report) and the majority class."""
    lines = ["| model | attention | tokens | keeps | selected step | validation accuracy | test accuracy (95 % CI) "
             "| test F1 | wall time (s) |", "|---|---|---|---|---|---|---|---|---|"]
    for name, report in reports.items():
        config = settings[name]
        attention = config.model_overrides.get("attention", {}).get("type", config.model)
        row = report["test"]["rows"][MODEL_ROW]
        validation = report["selection"]["validation"].get("accuracy")
        lines.append(f"| {name} | {attention} | {config.data.max_length} | {config.data.keep} | "
                     f"{report['selection']['step']} | {'n/a' if validation is None else f'{validation:.3f}'} | "
                     f"{_accuracy(row)} | {_f1(row):.3f} | {seconds[name]:.0f} |")
    first_name, first = next(iter(reports.items()))
    for scorer, row in first["test"]["rows"].items():
        if scorer != MODEL_ROW:
            inputs = "" if "whole document" in scorer else f" (inputs of {first_name})"
            lines.append(f"| {scorer}{inputs} | — | — | — | — | — | {_accuracy(row)} | {_f1(row):.3f} | — |")
    counts = first["data"]["splits"]["test"]["labels"]
    majority = max(counts.values()) / sum(counts.values())
    lines.append(f"| majority class | — | — | — | — | — | {majority:.3f} | — | — |")
    return "\n".join(lines)


TRACK = Track(TextClassifyConfig, resolve, inputs, partial(finetune.run, TASK), results_table)
STAGE = comparison_stage("text_classify", TextClassifyStageConfig)
