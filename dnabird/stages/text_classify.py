"""Stage `text_classify`: one or more classifiers on the same labelled splits, and one results table.

Each entry of `models` names a run and the settings it changes from `base` (any `TextClassifyConfig` key:
e.g. `max_length`, `keep`, `model_overrides`); `base` holds what they share. Null paths come from the
`text_data` stage (its long-range task) and the `text_tokenizer` stage. Each run trains into
`<stage>/<name>/`; `results.json` and `results.txt` (a Markdown table) hold the results: per model its
accuracy and F1 on the validation and test splits and its training time, then the majority-class and
bag-of-words baselines.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from dnabird.config import build_config
from dnabird.errors import ConfigError
from dnabird.io import write_json_atomic, write_text_atomic
from dnabird.model.config import merge_settings
from dnabird.pipeline import RunContext, Stage
from dnabird.text.classify import TextClassifyConfig, classify
from dnabird.text.training import resumable, with_out_dir


@dataclass
class TextClassifyStageConfig:
    """base: `TextClassifyConfig` keys shared by every model; models: name -> the keys that model changes
    (`model_overrides` and `train` merge key by key into the base's; by default one model, `model`, with
    the base's settings); seed: every model's seed."""

    base: dict = field(default_factory=dict)
    models: dict = field(default_factory=lambda: {"model": {}})
    seed: int = 0

    def __post_init__(self):
        if not self.models:
            raise ConfigError("text_classify: models: expected at least one named model")
        self.configs()  # every model's settings fail here, when the pipeline loads

    def configs(self, context: RunContext | None = None) -> dict[str, TextClassifyConfig]:
        """Each model's full `TextClassifyConfig` (paths from earlier stages when `context` is given)."""
        out = {}
        for name, changes in self.models.items():
            if not isinstance(changes, dict):
                raise ConfigError(f"text_classify: models.{name}: expected a mapping of settings, got {changes!r}")
            merged = {**self.base, **changes, "seed": self.seed}
            merged["model_overrides"] = merge_settings(self.base.get("model_overrides") or {},
                                                       changes.get("model_overrides") or {},
                                                       f"text_classify: models.{name}.model_overrides")
            merged["train"] = {**(self.base.get("train") or {}), **(changes.get("train") or {})}
            if context is not None:
                data = dict(merged.get("data") or {})
                for split in ("train", "validation", "test"):
                    data[split] = data.get(split) or str(context.output("text_data", f"long_range_{split}"))
                merged["data"] = data
                merged["tokenizer"] = merged.get("tokenizer") or str(context.output("text_tokenizer", "model"))
            out[name] = build_config(TextClassifyConfig, merged, f"text_classify: models.{name}")
        return out


def inputs(config: TextClassifyStageConfig, context: RunContext) -> list[Path]:
    paths = set()
    for model in config.configs(context).values():
        paths |= {model.data.train, model.data.validation, model.data.test, model.tokenizer}
    return sorted(Path(p) for p in paths if p is not None)


def results_table(reports: dict[str, dict], seconds: dict[str, float], settings: dict[str, TextClassifyConfig]) -> str:
    """A Markdown table: each model, then the baselines (from the first model's report)."""
    lines = ["| model | attention | tokens | keeps | validation accuracy | test accuracy | test F1 | train time (s) |",
             "|---|---|---|---|---|---|---|---|"]
    for name, report in reports.items():
        attention = settings[name].model_overrides.get("attention", {}).get("type", settings[name].model)
        lines.append(f"| {name} | {attention} | {report['max_length']} | {report['keep']} | "
                     f"{report['validation']['model']['accuracy']:.3f} | {report['test']['model']['accuracy']:.3f} | "
                     f"{report['test']['model']['f1']:.3f} | {seconds[name]:.0f} |")
    first = next(iter(reports.values()))
    for baseline in ("majority_class", "bag_of_words"):
        lines.append(f"| {baseline} (whole document) | — | — | — | {first['validation'][baseline]['accuracy']:.3f} | "
                     f"{first['test'][baseline]['accuracy']:.3f} | {first['test'][baseline]['f1']:.3f} | — |")
    return "\n".join(lines)


def run(config: TextClassifyStageConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    settings = config.configs(context)
    reports, seconds = {}, {}
    for name, model in settings.items():
        model = with_out_dir(model, stage_dir / name)
        record = stage_dir / name / "report.json"
        started = time.perf_counter()
        if record.is_file() and (stage_dir / name / "model").is_dir():  # finished before an interruption
            reports[name] = json.loads(record.read_text())
        else:
            reports[name] = classify(model, resume=resumable(model.train))
        seconds[name] = reports[name].setdefault("train_seconds", round(time.perf_counter() - started, 1))
        write_json_atomic(record, reports[name])
    table = results_table(reports, seconds, settings)
    write_json_atomic(stage_dir / "results.json", {name: {**dataclasses.asdict(settings[name]), "report": report}
                                                   for name, report in reports.items()})
    write_text_atomic(stage_dir / "results.txt", table + "\n")
    print(table)
    return {"results": stage_dir / "results.json", "table": stage_dir / "results.txt"}


STAGE = Stage("text_classify", TextClassifyStageConfig, inputs, run)
