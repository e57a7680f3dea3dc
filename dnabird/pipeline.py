"""`dnabird run PIPELINE.yaml`: named stages in a fixed order, each skipped when nothing it reads changed.

A pipeline YAML has `out_dir`, `seed` and one section per stage (stage name -> its config keys); stages run in
`STAGE_MODULES` order (adding a stage is one line there: a module of `dnabird.stages` defines one stage,
`STAGE`, or, generic, `stage(name)`: the task stage and the comparison stage), each in `out_dir/<stage>/`
with its `stage.json`.
Skipping, resuming, seeds, `run.json` and relative paths: docs/configuration.md, "How a run behaves".

The fingerprint of a file up to 2 MiB is the sha256 of its content; of a larger file, its size, modification
time and the sha256 of its first and last MiB; of a directory, that of every file below it. So a small output
rewritten with the same bytes (a retrained tokenizer) does not re-run later stages, while a regenerated large
file does.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import yaml

from dnabird.config import apply_overrides, build_config, coerce, read_yaml
from dnabird.errors import ConfigError
from dnabird.io import check_outputs, file_fingerprint, write_json_atomic, write_text_atomic
from dnabird.provenance import versions

STAGE_MODULES = {  # stage name -> the module making it (its `STAGE`, or `stage(name)`), in run order
    "fetch": "fetch", "corpus": "corpus", "tokenizer": "tokenizer", "shards": "shards", "pretrain": "pretrain",
    "promoter": "finetune", "promoter_compare": "compare", "chromatin": "finetune", "chromatin_compare": "compare",
    "predict": "predict", "variants": "variants", "text_data": "text_data", "text_tokenizer": "text_tokenizer",
    "text_mlm": "text_mlm", "text_classify": "compare", "text_qa": "text_qa", "text_summarise": "compare",
    "charlm": "charlm", "listops_data": "listops_data", "listops": "compare", "labelled_data": "labelled_data",
    "labelled": "finetune", "compare": "compare", "report": "report"}
PIPELINE_KEYS = ("out_dir", "seed")
STAGE_RECORD = "stage.json"
RESOLVED_CONFIG = "config.yaml"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Stage:
    """A pipeline stage: its config dataclass, the paths whose content it reads, and what it runs.

    `inputs(config, context)` returns files or directories; `run(config, context, stage_dir)` does
    the work and returns its outputs as a name -> path mapping (paths later stages can read); `read(section,
    where)` builds the config from a pipeline section (None: `build_config` of `config`'s keys).
    """

    name: str
    config: type
    inputs: Callable[[object, RunContext], Sequence[Path]]
    run: Callable[[object, RunContext, Path], Mapping[str, str | os.PathLike]]
    read: Callable[[Mapping, str], object] | None = None


@dataclass
class RunContext:
    """What a stage sees of the run: the output root (made absolute, so every path a stage is given
    resolves from anywhere) and earlier stages' outputs as recorded (see `recorded_path`)."""

    out_dir: Path
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)

    def __post_init__(self):
        self.out_dir = Path(os.path.abspath(self.out_dir))

    def output(self, stage: str, name: str) -> Path:
        """The path an earlier stage recorded as `name`, in this run or a finished earlier run into
        the same `out_dir`; a clear error if there is none."""
        if stage not in self.outputs:
            record = _load_record(self.out_dir / stage / STAGE_RECORD) or {}
            if record.get("finished"):
                self.outputs[stage] = record["outputs"]
        try:
            return self.out_dir / self.outputs[stage][name]  # recorded relative to out_dir, or absolute
        except KeyError:
            raise ConfigError(f"this stage needs output {name!r} of stage {stage!r}: add a {stage!r} "
                              f"section, or run it once into {self.out_dir}") from None


@dataclass
class Pipeline:
    """A validated pipeline: output root, seed, and each stage's config object in run order."""

    source: str
    out_dir: Path
    seed: int
    stages: dict[str, object]

    def resolved(self) -> dict:
        """The full config, defaults filled in, as plain JSON-able data (what `run.json` records)."""
        return json.loads(json.dumps({"out_dir": str(self.out_dir), "seed": self.seed,
                                      **{name: dataclasses.asdict(c) for name, c in self.stages.items()}},
                                     default=str))


def registered_stages() -> list[Stage]:
    """Every stage dnabird knows, in run order."""
    modules = {name: importlib.import_module(f"dnabird.stages.{module}") for name, module in STAGE_MODULES.items()}
    return [module.STAGE if hasattr(module, "STAGE") else module.stage(name) for name, module in modules.items()]


def load_pipeline(path: str | os.PathLike, overrides: Sequence[str] = (),
                  stages: Sequence[Stage] | None = None) -> Pipeline:
    """Read and validate a pipeline YAML, applying `key.sub=value` overrides first."""
    path = Path(path)
    return build_pipeline(apply_overrides(read_yaml(path), overrides, str(path)), path, stages)


def default_pipeline(stages: Sequence[Stage] | None = None) -> Pipeline:
    """Every stage with its default config (what `dnabird run --print-config` shows without a pipeline)."""
    stages = registered_stages() if stages is None else list(stages)
    return build_pipeline({stage.name: {} for stage in stages}, Path("defaults.yaml"), stages)


def build_pipeline(data: Mapping, path: Path, stages: Sequence[Stage] | None = None) -> Pipeline:
    """Validate a pipeline mapping that was read from `path` (named in errors)."""
    stages = registered_stages() if stages is None else list(stages)
    by_name = {stage.name: stage for stage in stages}
    for key in data:
        if key not in by_name and key not in PIPELINE_KEYS:
            raise ConfigError(f"{path}: unknown key {key!r} (known: {', '.join([*PIPELINE_KEYS, *by_name])})")
    seed = coerce(data.get("seed", 0), int, f"{path}: seed")
    out_dir = coerce(data.get("out_dir", "runs/" + path.stem), str, f"{path}: out_dir")
    configs = {}
    for stage in stages:
        if stage.name in data:
            section = dict(data[stage.name] or {})
            if "seed" in {f.name for f in dataclasses.fields(stage.config)}:
                section.setdefault("seed", seed)
            configs[stage.name] = (stage.read or partial(build_config, stage.config))(section, f"{path}: {stage.name}")
    return Pipeline(str(path), Path(out_dir), seed, configs)


# ---- fingerprints and stage records ---------------------------------------------------------------

def fingerprint(path: str | os.PathLike) -> dict:
    """Cheap content fingerprint: `dnabird.io.file_fingerprint` of a file (see the module docstring).

    A directory maps each file below it to its fingerprint, leaving out temporary `*.tmp` files
    and stage records (a stage's output folder may be its own stage folder).
    """
    path = Path(path)
    if path.is_dir():
        return {str(p.relative_to(path)): fingerprint(p) for p in sorted(path.rglob("*"))
                if p.is_file() and not p.name.endswith(".tmp") and p.name != STAGE_RECORD}
    if not path.is_file():
        raise ConfigError(f"input {path} does not exist")
    return file_fingerprint(path)


def recorded_path(path: str | os.PathLike, out_dir: Path) -> str:
    """How `path` is recorded in a run folder: relative to `out_dir` when inside it, else absolute."""
    path, root = Path(os.path.abspath(path)), Path(os.path.abspath(out_dir))
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def relative_paths(data, out_dir: Path):
    """`data` (JSON-like) with every absolute path string inside `out_dir` recorded relative to it."""
    if isinstance(data, dict):
        return {key: relative_paths(value, out_dir) for key, value in data.items()}
    if isinstance(data, list):
        return [relative_paths(value, out_dir) for value in data]
    if isinstance(data, str) and os.path.isabs(data) and Path(data).is_relative_to(out_dir):
        return recorded_path(data, out_dir)
    return data


def load_run_record(out_dir: str | os.PathLike) -> dict:
    """`out_dir/run.json` with every output path resolved to an absolute path."""
    out_dir = Path(os.path.abspath(out_dir))
    record = _load_record(out_dir / "run.json")
    if record is None:
        raise ConfigError(f"{out_dir}: no readable run.json (has `dnabird run` written here?)")
    record["outputs"] = {stage: {name: str(out_dir / path) for name, path in outputs.items()}
                         for stage, outputs in record["outputs"].items()}
    return record


def _stage_key(config, inputs: Sequence[Path], out_dir: Path) -> dict:
    return {"config": json.loads(json.dumps(dataclasses.asdict(config), default=str)),
            "inputs": {recorded_path(p, out_dir): fingerprint(p) for p in inputs}}


def _load_record(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


# ---- running --------------------------------------------------------------------------------------

def run_pipeline(pipeline: Pipeline, stages: Sequence[Stage] | None = None, *,
                 force: Sequence[str] = ()) -> dict:
    """Run (or skip) each configured stage in order; `force` names stages to run afresh regardless.

    Writes `out_dir/run.json` — resolved config, seed, versions, `status` ("finished" | "failed"), each
    stage's status ("ran" | "skipped" | "failed" | "not run"), seconds and outputs, and for a failed run
    `error` (the stage and its message) — also when a stage raises, before the exception propagates.
    Returns that record as `load_run_record` reads it (output paths absolute).
    """
    stages = [s for s in (registered_stages() if stages is None else stages) if s.name in pipeline.stages]
    check_outputs(folders=[pipeline.out_dir])  # a clear error now rather than a traceback after hours
    context = RunContext(pipeline.out_dir)
    status, seconds = {stage.name: "not run" for stage in stages}, {}
    environment = versions()
    record = {"pipeline": pipeline.source, "config": pipeline.resolved(), "seed": pipeline.seed,
              "versions": environment, "status": "failed", "stages": status, "seconds": seconds,
              "outputs": context.outputs}
    current = None
    try:
        for stage in stages:
            current = stage.name
            status[current] = _run_stage(stage, pipeline.stages[current], context, seconds, environment, force)
        record["status"] = "finished"
    except BaseException as err:  # an interruption too: the record says where the run stopped
        status[current] = "failed"
        record["error"] = {"stage": current, "type": type(err).__name__, "message": str(err)}
        raise
    finally:
        write_json_atomic(pipeline.out_dir / "run.json", record)
        resolved = pipeline.out_dir / RESOLVED_CONFIG
        write_text_atomic(resolved, f"# Resolved from {pipeline.source}; rerun: dnabird run {resolved}\n"
                          + yaml.safe_dump(pipeline.resolved(), sort_keys=False))
    return load_run_record(pipeline.out_dir)


def _run_stage(stage: Stage, config, context: RunContext, seconds: dict, environment: dict,
               force: Sequence[str]) -> str:
    """Run or skip one stage, recording its outputs in `context` and `seconds`; returns "ran" or "skipped"."""
    stage_dir = context.out_dir / stage.name
    record_path = stage_dir / STAGE_RECORD
    key = _stage_key(config, stage.inputs(config, context), context.out_dir)
    record = _load_record(record_path) or {}
    same_key = record.get("key") == key and stage.name not in force
    if same_key and record.get("finished") \
            and all((context.out_dir / p).exists() for p in record["outputs"].values()):
        log.info("stage %s: up to date, skipped (%s)", stage.name, record_path)
        context.outputs[stage.name] = record["outputs"]
        return "skipped"
    if same_key:
        log.info("stage %s: resuming an interrupted run in %s", stage.name, stage_dir)
    else:
        log.info("stage %s: running afresh into %s", stage.name, stage_dir)
        shutil.rmtree(stage_dir, ignore_errors=True)
    write_json_atomic(record_path, {"key": key, "finished": False})
    started = time.perf_counter()
    outputs = {name: recorded_path(path, context.out_dir)
               for name, path in stage.run(config, context, stage_dir).items()}
    report = stage_dir / "report.json"
    if report.is_file():  # the stage's config as it ran holds the absolute paths it was given
        write_json_atomic(report, relative_paths(json.loads(report.read_text()), context.out_dir))
    seconds[stage.name] = round(time.perf_counter() - started, 2)
    context.outputs[stage.name] = outputs
    write_json_atomic(record_path, {"key": key, "finished": True, "outputs": outputs,
                                    "seconds": seconds[stage.name], "versions": environment})
    log.info("stage %s: done in %.1f s", stage.name, seconds[stage.name])
    return "ran"
