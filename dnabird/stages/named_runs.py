"""What every stage that trains several named models into one results table does (`text_classify`,
`listops`): each model into `<stage>/<name>/` (a model that finished before an interruption is not
trained again), then `results.json` (each model's settings and report) and `results.txt` (a Markdown
table, also printed)."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path

from dnabird.errors import ConfigError
from dnabird.io import write_json_atomic, write_text_atomic


def named_settings(base: dict, name: str, changes, seed: int, where: str) -> dict:
    """One named model's settings: `changes` merged key by key over `base` (nested mappings merged, the
    encoder's `model_overrides` as `dnabird.model.config.merge_settings` merges them), with the stage's seed."""
    from dnabird.model.config import merge_settings
    from dnabird.stages.finetune import merge

    if changes is not None and not isinstance(changes, dict):
        raise ConfigError(f"{where}: models.{name}: expected a mapping of settings, got {changes!r}")
    merged = merge(base, changes or {})
    merged["model_overrides"] = merge_settings(base.get("model_overrides") or {},
                                               (changes or {}).get("model_overrides") or {},
                                               f"{where}: models.{name}.model_overrides")
    merged["seed"] = seed
    return merged


def run_each(settings: dict, stage_dir: Path, train_one: Callable, results_table: Callable) -> dict[str, Path]:
    """`train_one(config, out_dir)` -> report for each named config (a dataclass with `train.out_dir`);
    `results_table(reports, seconds, settings)` -> the Markdown table."""
    reports, seconds = {}, {}
    for name, model in settings.items():
        out_dir = stage_dir / name
        model = dataclasses.replace(model, train=dataclasses.replace(model.train, out_dir=str(out_dir)))
        record = out_dir / "report.json"
        started = time.perf_counter()
        if record.is_file() and (out_dir / "model").is_dir():  # finished before an interruption
            reports[name] = json.loads(record.read_text())
        else:
            reports[name] = train_one(model, out_dir)
        seconds[name] = reports[name].setdefault("wall_seconds", round(time.perf_counter() - started, 1))
        write_json_atomic(record, reports[name])
    table = results_table(reports, seconds, settings)
    write_json_atomic(stage_dir / "results.json", {name: {**dataclasses.asdict(settings[name]), "report": report}
                                                   for name, report in reports.items()})
    write_text_atomic(stage_dir / "results.txt", table + "\n")
    print(table)
    return {"results": stage_dir / "results.json", "table": stage_dir / "results.txt"}
