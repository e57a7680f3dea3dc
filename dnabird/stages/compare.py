"""Stage `compare`: one task trained several ways on the same data, and one results table.

Its config: `task`, `base` (the task's settings shared by every run), `runs` (name -> the settings that run
changes, mappings merged key by key, `model_overrides` as encoder settings merge) and `seed`; a run with
`init_from: <an earlier run>` starts from that run's fine-tuned weights. Each run trains into `<stage>/<name>/`
(a finished one is not trained again, an interrupted one resumes), then `results.json` and `results.txt`
(docs/configuration.md). `promoter_compare`, `chromatin_compare`, `text_classify`, `text_summarise` and
`listops` are this stage with the task fixed.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import ClassVar, NamedTuple

from dnabird.config import build_config
from dnabird.errors import ConfigError, ParameterError
from dnabird.io import write_json_atomic, write_text_atomic
from dnabird.pipeline import RunContext, Stage
from dnabird.stages import finetune

TRACKS = {"text_classification": "dnabird.stages.text_classify", "summarise": "dnabird.stages.text_summarise",
          "listops": "dnabird.stages.listops"}


@dataclass(frozen=True)
class Track:
    """What `compare` needs of a task: its config class; `resolve(config, context, out_dir)`, the config with
    its null paths taken from earlier stages, writing into `out_dir`; `inputs(config, context)`, the files a
    resolved run reads; `train(config, out_dir)` -> its report; `table(reports, seconds, configs)` -> the
    results table."""

    config: type
    resolve: Callable
    inputs: Callable
    train: Callable
    table: Callable


def _finetune_table(reports: dict, seconds: dict, configs: dict) -> str:
    from dnabird.finetune.report import comparison_table

    return comparison_table(reports)


def track(task: str) -> Track:
    """The track of `task`."""
    if task in ("promoter", "chromatin"):
        from dnabird.tasks import task_module

        return Track(task_module(task).CONFIG, partial(finetune.resolved, task), partial(finetune.input_paths, task),
                     partial(finetune.run, task), _finetune_table)
    if task not in TRACKS:
        raise ParameterError("task", task, f"one of {sorted(['promoter', 'chromatin', *TRACKS])}")
    return importlib.import_module(TRACKS[task]).TRACK


class Plan(NamedTuple):
    """A comparison config read uniformly: its task, shared settings, named runs, seed, and where it is."""

    task: str
    base: dict
    runs: dict
    seed: int
    where: str


def run_configs(config, context: RunContext | None = None, stage_dir: Path | None = None) -> dict[str, object]:
    """Each named run's full config (null paths from earlier stages when `context` is given; written into
    `stage_dir/<name>` and an `init_from` run starting from its source's model when `stage_dir` is given)."""
    from dnabird.model.config import merge_settings

    plan = config.plan()
    chosen, names, out = track(plan.task), list(plan.runs), {}
    for position, (name, changes) in enumerate(plan.runs.items()):
        where = f"{plan.where}.{name}"
        if changes is not None and not isinstance(changes, dict):
            raise ConfigError(f"{where}: expected a mapping of settings, got {changes!r}")
        changes = dict(changes or {})
        source = changes.pop("init_from", None)
        if source is not None and source not in names[:position]:
            raise ConfigError(f"{where}.init_from: {source!r} is not a run listed before it "
                              f"(earlier runs: {names[:position]})")
        settings = finetune.merge({**plan.base, "seed": plan.seed}, changes)
        if "model_overrides" in settings:
            settings["model_overrides"] = merge_settings(plan.base.get("model_overrides") or {},
                                                         changes.get("model_overrides") or {},
                                                         f"{where}.model_overrides")
        if source is not None and stage_dir is not None:
            settings["pretrained"] = str(stage_dir / source / "model")
        run = build_config(chosen.config, settings, where)
        if context is not None:
            run = chosen.resolve(run, context, None if stage_dir is None else stage_dir / name)
        out[name] = run
    return out


def _run(config, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    configs, chosen = run_configs(config, context, stage_dir), track(config.plan().task)
    reports, seconds = {}, {}
    for name, run in configs.items():
        out_dir, started = stage_dir / name, time.perf_counter()
        record = out_dir / "report.json"
        if record.is_file() and (out_dir / "model").is_dir():  # finished before an interruption
            reports[name] = json.loads(record.read_text())
        else:
            reports[name] = chosen.train(run, out_dir)
        seconds[name] = reports[name].setdefault("wall_seconds", round(time.perf_counter() - started, 1))
        write_json_atomic(record, reports[name])
    from dnabird.finetune.report import warning_lines

    warnings = [line for name, report in reports.items() for line in warning_lines(report, name)]
    table = "\n".join([chosen.table(reports, seconds, configs), *warnings])
    write_json_atomic(stage_dir / "results.json", {name: {**dataclasses.asdict(configs[name]), "report": report}
                                                   for name, report in reports.items()})
    write_text_atomic(stage_dir / "results.txt", table + "\n")
    print(table)
    return {"results": stage_dir / "results.json", "table": stage_dir / "results.txt"}


def comparison_stage(name: str, config: type) -> Stage:
    """The pipeline stage `name` comparing the named runs of `config` (a class with `plan()`)."""

    def inputs(config, context: RunContext) -> list[Path]:
        stage_dir, chosen = context.out_dir / name, track(config.plan().task)
        return sorted({Path(p) for run in run_configs(config, context, stage_dir).values()
                       for p in chosen.inputs(run, context)
                       if not Path(p).is_relative_to(stage_dir)})  # an init_from run's model is made here

    return Stage(name, config, inputs, _run)


@dataclass
class NamedModels:
    """The text stages' layout (`named_models_stage`): base: the task's settings shared by every model; models:
    name -> the settings that model changes (or `init_from` an earlier model; by default one model, `model`,
    with the base's settings); seed: every model's seed."""

    base: dict = field(default_factory=dict)
    models: dict = field(default_factory=lambda: {"model": {}})
    seed: int = 0
    STAGE: ClassVar[str]
    TASK: ClassVar[str]

    def __post_init__(self):
        if not self.models:
            raise ConfigError(f"{self.STAGE}: models: expected at least one named model")
        run_configs(self)  # every model's settings fail here, when the pipeline loads

    def plan(self) -> Plan:
        return Plan(self.TASK, self.base, self.models, self.seed, f"{self.STAGE}: models")


def named_models_stage(name: str, task: str, task_config: type) -> Stage:
    """The stage `name` comparing models of `task` (its config: `task_config`) laid out as `NamedModels`."""
    config = dataclass(type(f"{task_config.__name__.removesuffix('Config')}StageConfig", (NamedModels,),
                            {"__doc__": f"`NamedModels` of `{task_config.__name__}` keys.",
                             "__module__": f"dnabird.stages.{name}", "STAGE": name, "TASK": task}))
    return comparison_stage(name, config)


@dataclass
class FlatRuns:
    """Base of `promoter_compare`'s and `chromatin_compare`'s configs (`flat_comparison_stage`): the task's
    config, shared by every run, and `runs` (name -> that run's changes)."""

    runs: dict = field(default_factory=dict)
    STAGE: ClassVar[str]
    TASK: ClassVar[str]

    def __post_init__(self):
        super().__post_init__()
        run_configs(self)  # each run's settings validate when the pipeline loads

    def plan(self) -> Plan:
        base = {k: v for k, v in dataclasses.asdict(self).items() if k not in ("runs", "seed")}
        return Plan(self.TASK, base, self.runs, self.seed, f"{self.STAGE}: runs")


def flat_comparison_stage(name: str, task: str) -> Stage:
    """The stage `name` comparing runs of `task` whose config is the task's keys, flat, beside `runs`."""
    task_config = track(task).config
    config = dataclass(type(f"{task_config.__name__.removesuffix('Config')}CompareConfig", (FlatRuns, task_config),
                            {"__doc__": f"`{task_config.__name__}` shared by every run, and `runs`: name -> that "
                                        "run's overrides.", "__module__": f"dnabird.stages.{name}",
                             "STAGE": name, "TASK": task}))
    return comparison_stage(name, config)


@dataclass
class CompareConfig:
    """task: promoter, chromatin, text_classification, summarise or listops; base: its settings shared by
    every run; runs: name -> the settings that run changes; seed: every run's seed."""

    task: str = "promoter"
    base: dict = field(default_factory=dict)
    runs: dict = field(default_factory=lambda: {"model": {}})
    seed: int = 0

    def __post_init__(self):
        if not self.runs:
            raise ConfigError("compare: runs: expected at least one named run")
        run_configs(self)

    def plan(self) -> Plan:
        return Plan(self.task, self.base, self.runs, self.seed, "compare: runs")


STAGE = comparison_stage("compare", CompareConfig)
