"""The one comparison stage: named runs merged over a base, written into one results table that report.md
and the results page read."""

import json
from pathlib import Path

import pytest

from dnabird.errors import ConfigError, ParameterError
from dnabird.pipeline import build_pipeline, run_pipeline
from dnabird.results import figures
from dnabird.stages.compare import CompareConfig, run_configs
from dnabird.stages.promoter_compare import STAGE as PROMOTER_COMPARE


def test_runs_merge_over_the_base_key_by_key():
    config = CompareConfig(task="listops", seed=3, base={"max_length": 64, "train": {"max_steps": 9, "lr": 0.5},
                                                          "model_overrides": {"attention": {"type": "bigbird_itc",
                                                                                            "block_size": 16}}},
                           runs={"a": {}, "b": {"train": {"lr": 0.25}, "seed": 7,
                                                "model_overrides": {"attention": {"block_size": 8}}}})
    a, b = run_configs(config).values()
    assert (a.max_length, a.train.max_steps, a.train.lr, a.seed) == (64, 9, 0.5, 3)
    assert (b.max_length, b.train.max_steps, b.train.lr, b.seed) == (64, 9, 0.25, 7)
    assert b.model_overrides["attention"] == {"type": "bigbird_itc", "block_size": 8}


def test_bad_comparisons_fail_when_the_pipeline_loads():
    with pytest.raises(ParameterError, match="task"):
        CompareConfig(task="nope")
    with pytest.raises(ConfigError, match="at least one"):
        CompareConfig(task="listops", runs={})
    with pytest.raises(ConfigError, match="compare: runs.a: expected a mapping"):
        CompareConfig(task="listops", runs={"a": 3})
    with pytest.raises(ConfigError, match="compare: runs.b: unknown key 'max_lenght'"):
        CompareConfig(task="listops", runs={"a": {}, "b": {"max_lenght": 3}})
    with pytest.raises(ConfigError, match="promoter_compare: runs.x.init_from"):
        PROMOTER_COMPARE.config(runs={"x": {"init_from": "y"}})


def test_compare_stage_on_listops_writes_one_table_that_report_md_and_the_results_page_read(tmp_path):
    data = {"train": 30, "validation": 10, "test": 10, "min_length": 8, "max_length": 30, "max_depth": 3}
    few = {"max_steps": 2, "global_batch_size": 4, "micro_batch_size": 4, "warmup_steps": 1, "progress": False}
    base = {"max_length": 32, "train": few, "model_overrides": {"attention": {"type": "full"}}}
    pipeline = build_pipeline({"out_dir": str(tmp_path), "listops_data": data,
                               "compare": {"task": "listops", "base": base,
                                           "runs": {"short": {}, "long": {"max_length": 48}}},
                               "report": {"stages": ["compare"]}}, Path("p.yaml"))
    run_pipeline(pipeline)
    stage = tmp_path / "compare"
    table = (stage / "results.txt").read_text()
    rows = [line for line in table.splitlines()[2:] if line.startswith("|")]
    assert [line.split(" | ")[0] for line in rows] == ["| short", "| long", "| majority class (of train)"]
    assert "WARNING (short): AT CHANCE" in table   # two steps on 10 validation examples: both below the bound
    results = json.loads((stage / "results.json").read_text())
    assert (results["short"]["max_length"], results["long"]["max_length"]) == (32, 48)
    assert (stage / "short" / "model").is_dir() and (stage / "long" / "report.json").is_file()
    assert table.strip() in (tmp_path / "report.md").read_text()
    found = {(f.row, f.column) for f in figures(stage)}
    assert {("short: model", "test accuracy"), ("long: majority class", "test accuracy")} <= found
    again = run_pipeline(pipeline)          # finished: skipped, not trained again
    assert again["stages"]["compare"] == "skipped"
