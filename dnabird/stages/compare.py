"""The comparison stage: one registered task (`dnabird.tasks`) trained several ways on the same data, and one
results table.

Its config (`CompareConfig`): `task`, `base` (the task's settings shared by every run), `runs` (name -> the
settings that run changes, mappings merged key by key, `model_overrides` as encoder settings merge) and `seed`;
a run with `init_from: <an earlier run>` starts from that run's fine-tuned weights. Each run trains into
`<stage>/<name>/` (a finished one is not trained again, an interrupted one resumes), then `results.json` and
`results.txt` (`Task.table`; docs/configuration.md). A run's mappings merge over `base` as written: a key the
base leaves out takes its dataclass default (`train: {lr: ...}` alone is a default `TrainConfig` with that lr).

`stage(name)` makes the stage `compare` or one of its aliases, `ALIASES`: the same stage with the task fixed and
the section laid out as older pipelines write it: "flat" (`promoter_compare`: the task's keys beside `runs`)
or "models" (`text_classify`: `base` and `models`, by default one model named `model`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dnabird.config import build_config
from dnabird.errors import ConfigError
from dnabird.io import write_json_atomic, write_text_atomic
from dnabird.pipeline import RunContext, Stage
from dnabird.stages import finetune
from dnabird.tasks import task as registered

ALIASES = {"promoter_compare": ("promoter", "flat"), "chromatin_compare": ("chromatin", "flat"),
           "labelled_compare": ("labelled", "flat"),
           "text_classify": ("text_classification", "models"), "text_summarise": ("summarise", "models"),
           "listops": ("listops", "models")}   # stage name -> (its task, its section's layout)


@dataclass
class CompareConfig:
    """task: a registered task (`dnabird.tasks.TASKS`); base: its settings shared by every run; runs: name ->
    the settings that run changes; seed: every run's seed."""

    task: str = "promoter"
    base: dict = field(default_factory=dict)
    runs: dict = field(default_factory=lambda: {"model": {}})
    seed: int = 0

    def __post_init__(self):
        registered(self.task)
        if not self.runs:
            raise ConfigError("runs: expected at least one named run")


def run_configs(config: CompareConfig, context: RunContext | None = None, stage_dir: Path | None = None,
                where: str = "compare: runs") -> dict[str, object]:
    """Each named run's full config (null paths from earlier stages when `context` is given; written into
    `stage_dir/<name>` and an `init_from` run starting from its source's model when `stage_dir` is given)."""
    from dnabird.model.config import merge_settings

    task, names, out = registered(config.task), list(config.runs), {}
    for position, (name, changes) in enumerate(config.runs.items()):
        run_where = f"{where}.{name}"
        if changes is not None and not isinstance(changes, dict):
            raise ConfigError(f"{run_where}: expected a mapping of settings, got {changes!r}")
        changes = dict(changes or {})
        source = changes.pop("init_from", None)
        if source is not None and source not in names[:position]:
            raise ConfigError(f"{run_where}.init_from: {source!r} is not a run listed before it "
                              f"(earlier runs: {names[:position]})")
        settings = finetune.merge({**config.base, "seed": config.seed}, changes)
        if "model_overrides" in settings:
            settings["model_overrides"] = merge_settings(config.base.get("model_overrides") or {},
                                                         changes.get("model_overrides") or {},
                                                         f"{run_where}.model_overrides")
        if source is not None and stage_dir is not None:
            settings["pretrained"] = str(stage_dir / source / "model")
        run = build_config(task.config, settings, run_where)
        if context is not None:
            run = finetune.resolved(task, run, context, None if stage_dir is None else stage_dir / name)
        out[name] = run
    return out


def _run(config: CompareConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    configs, task = run_configs(config, context, stage_dir), registered(config.task)
    reports, seconds = {}, {}
    for name, run in configs.items():
        out_dir, started = stage_dir / name, time.perf_counter()
        record = out_dir / "report.json"
        if record.is_file() and (out_dir / "model").is_dir():  # finished before an interruption
            reports[name] = json.loads(record.read_text())
        else:
            reports[name] = finetune.run(task, run)
        seconds[name] = reports[name].setdefault("wall_seconds", round(time.perf_counter() - started, 1))
        write_json_atomic(record, reports[name])
    from dnabird.finetune.report import warning_lines

    warnings = [line for name, report in reports.items() for line in warning_lines(report, name)]
    table = "\n".join([task.table(reports, seconds, configs), *warnings])
    write_json_atomic(stage_dir / "results.json", {name: {**dataclasses.asdict(configs[name]), "report": report}
                                                   for name, report in reports.items()})
    write_text_atomic(stage_dir / "results.txt", table + "\n")
    print(table)
    return {"results": stage_dir / "results.json", "table": stage_dir / "results.txt"}


def _laid_out(section: Mapping, task: str, layout: str, where: str) -> tuple[dict, str]:
    """(a `CompareConfig` mapping, the key its runs are listed under) of a section laid out as `layout`; a
    section already in `CompareConfig`'s keys (a resolved config.yaml) is taken as it is."""
    section = dict(section)
    if layout == "flat" and "base" not in section:   # the base: the task's whole config, its defaults filled
        runs = {"runs": section.pop("runs")} if "runs" in section else {}
        base = dataclasses.asdict(build_config(registered(task).config, section, where))
        return {"task": task, "base": base, **runs, "seed": base.pop("seed")}, "runs"
    if layout == "models" and "runs" not in section:
        models = {"runs": section.pop("models")} if "models" in section else {}
        return {"task": task, **section, **models}, "models"
    return {"task": task, **section}, "runs"


def stage(name: str) -> Stage:
    """The comparison stage `name`: `compare`, or one of its `ALIASES`."""
    task, layout = ALIASES.get(name, (None, "runs"))

    def read(section: Mapping, where: str) -> CompareConfig:
        data, key = _laid_out(section, task, layout, where) if task is not None else (dict(section), "runs")
        if task is not None and data["task"] != task:
            raise ConfigError(f"{where}.task: {data['task']!r}: this stage compares task {task!r}")
        config = build_config(CompareConfig, data, where)
        run_configs(config, where=f"{name}: {key}")   # every run's settings fail here, when the pipeline loads
        return config

    def inputs(config: CompareConfig, context: RunContext) -> list[Path]:
        stage_dir, chosen = context.out_dir / name, registered(config.task)
        return sorted({Path(p) for run in run_configs(config, context, stage_dir).values()
                       for p in chosen.input_files(run)
                       if not Path(p).is_relative_to(stage_dir)})  # an init_from run's model is made here

    return Stage(name, CompareConfig, inputs, _run, read)
