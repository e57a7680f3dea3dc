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

from dataclasses import dataclass, field
from pathlib import Path

from dnabird.config import build_config
from dnabird.errors import ConfigError
from dnabird.finetune.report import MODEL_ROW
from dnabird.pipeline import RunContext, Stage
from dnabird.stages.named_runs import named_settings, run_each
from dnabird.text.classify import SPLITS, TASK, TextClassifyConfig


@dataclass
class TextClassifyStageConfig:
    """base: `TextClassifyConfig` keys shared by every model; models: name -> the keys that model changes
    (mappings such as `data` and `train` merge key by key into the base's, `model_overrides` as encoder
    settings merge, `dnabird.model.config.merge_settings`; by default
    one model, `model`, with the base's settings); seed: every model's seed."""

    base: dict = field(default_factory=dict)
    models: dict = field(default_factory=lambda: {"model": {}})
    seed: int = 0

    def __post_init__(self):
        if not self.models:
            raise ConfigError("text_classify: models: expected at least one named model")
        self.configs()  # every model's settings fail here, when the pipeline loads

    def init_from(self) -> dict[str, str]:
        """name -> the earlier model it starts from, for the models that name one."""
        sources, names = {}, list(self.models)
        for position, (name, changes) in enumerate(self.models.items()):
            source = (changes or {}).get("init_from") if isinstance(changes, dict) else None
            if source is None:
                continue
            if source not in names[:position]:
                raise ConfigError(f"text_classify: models.{name}.init_from: {source!r} is not a model listed "
                                  f"before it (earlier models: {names[:position]})")
            sources[name] = source
        return sources

    def configs(self, context: RunContext | None = None,
                stage_dir: Path | None = None) -> dict[str, TextClassifyConfig]:
        """Each model's full `TextClassifyConfig` (paths from earlier stages when `context` is given; an
        `init_from` model's `pretrained` under `stage_dir` when that is given)."""
        out, sources = {}, self.init_from()
        for name, changes in self.models.items():
            changes = {key: value for key, value in (changes or {}).items() if key != "init_from"} \
                if isinstance(changes, dict) else changes
            merged = named_settings(self.base, name, changes, self.seed, "text_classify")
            if name in sources and stage_dir is not None:
                merged["pretrained"] = str(stage_dir / sources[name] / "model")
            if context is not None:
                data = dict(merged.get("data") or {})
                for split in SPLITS:
                    data[split] = data.get(split) or str(context.output("text_data", f"long_range_{split}"))
                merged["data"] = data
                merged["tokenizer"] = merged.get("tokenizer") or str(context.output("text_tokenizer", "model"))
            out[name] = build_config(TextClassifyConfig, merged, f"text_classify: models.{name}")
        return out


def inputs(config: TextClassifyStageConfig, context: RunContext) -> list[Path]:
    paths, staged = set(), config.init_from()
    for name, model in config.configs(context).items():
        paths |= {*(getattr(model.data, split) for split in SPLITS), model.tokenizer}
        if model.pretrained not in (None, "none") and name not in staged:
            paths.add(model.pretrained)
    return sorted(Path(p) for p in paths if p is not None)


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


def run(config: TextClassifyStageConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    from dnabird.stages import finetune

    return run_each(config.configs(context, stage_dir), stage_dir,
                    lambda model, out_dir: finetune.run(TASK, model, out_dir), results_table)


STAGE = Stage("text_classify", TextClassifyStageConfig, inputs, run)
