"""The one comparison stage: named runs merged over a base, written into one results table that report.md
and the results page read."""

import json
from pathlib import Path

import pytest

from dnabird.config import read_yaml
from dnabird.errors import ConfigError, ParameterError
from dnabird.pipeline import build_pipeline, load_pipeline, run_pipeline
from dnabird.results import figures
from dnabird.stages.compare import ALIASES, CompareConfig, run_configs

SHIPPED = sorted((Path(__file__).resolve().parents[2] / "pipelines").glob("*.yaml"))


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
    def load(**sections):
        return build_pipeline(sections, Path("p.yaml"))

    with pytest.raises(ParameterError, match="task"):
        CompareConfig(task="nope")
    with pytest.raises(ConfigError, match="at least one"):
        load(compare={"task": "listops", "runs": {}})
    with pytest.raises(ConfigError, match="compare: runs.a: expected a mapping"):
        load(compare={"task": "listops", "runs": {"a": 3}})
    with pytest.raises(ConfigError, match="compare: runs.b: unknown key 'max_lenght'"):
        load(compare={"task": "listops", "runs": {"a": {}, "b": {"max_lenght": 3}}})
    with pytest.raises(ConfigError, match="promoter_compare: runs.x.init_from"):
        load(promoter_compare={"runs": {"x": {"init_from": "y"}}})
    with pytest.raises(ConfigError, match="listops: models.a: expected a mapping"):
        load(listops={"models": {"a": 3}})
    with pytest.raises(ConfigError, match="this stage compares task 'promoter'"):
        load(promoter_compare={"task": "chromatin", "base": {}})


def test_an_alias_reads_its_older_layout_as_the_one_comparison_config():
    flat = load_stage("promoter_compare", {"model": "tiny", "train": {"lr": 0.5}, "seed": 4, "runs": {"a": {}}})
    assert (flat.task, flat.seed, flat.runs, flat.base["model"], flat.base["train"]["lr"]) == \
        ("promoter", 4, {"a": {}}, "tiny", 0.5)
    assert flat.base["eval_batch_size"] == 8 and "seed" not in flat.base   # the base: the whole task config
    models = load_stage("listops", {"base": {"max_length": 64}, "models": {"b": {}}})
    assert models == CompareConfig(task="listops", base={"max_length": 64}, runs={"b": {}}, seed=0)
    assert load_stage("listops", {}).runs == {"model": {}}      # one model with the base's settings
    assert load_stage("listops", {"base": {}, "runs": {"c": {}}}).runs == {"c": {}}  # a resolved config.yaml


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_pipelines_compare_in_the_one_compare_layout(path):
    sections = read_yaml(path)
    assert not set(ALIASES) & set(sections), f"{path.name}: an alias section instead of compare:"
    if "compare" in sections:
        assert set(sections["compare"]) <= {"task", "base", "runs", "seed"} and "task" in sections["compare"]
        config = load_pipeline(path).stages["compare"]
        assert config.base == sections["compare"]["base"] and list(config.runs) == list(sections["compare"]["runs"])


def test_one_pipeline_holds_several_comparisons_each_in_its_own_stage():
    """`compare` and the aliases are separate stages (own folder, own place in the run order); an alias reads
    `compare`'s layout, and the older one resolves to the same runs."""
    runs = {"a": {}, "b": {"train": {"max_steps": 3}, "data": {"negatives": "genomic"}}}
    canonical = {"task": "promoter", "base": {"model": "tiny", "train": {"lr": 0.5}}, "runs": runs, "seed": 2}
    pipeline = build_pipeline({"compare": {"task": "listops", "base": {"max_length": 64}},
                               "text_classify": {"task": "text_classification", "runs": {"c": {}}},
                               "promoter_compare": canonical}, Path("p.yaml"))
    assert list(pipeline.stages) == ["promoter_compare", "text_classify", "compare"]   # the stages' run order
    assert [c.task for c in pipeline.stages.values()] == ["promoter", "text_classification", "listops"]
    assert load_stage("promoter_compare", {"task": "promoter", "runs": {"a": {}}}).base == {}   # no base: taken as is
    flat = load_stage("promoter_compare", {"model": "tiny", "train": {"lr": 0.5}, "seed": 2, "runs": runs})
    configs = {"flat": flat, "canonical": CompareConfig(**canonical), "alias": pipeline.stages["promoter_compare"]}
    resolved = {name: run_configs(config) for name, config in configs.items()}
    assert resolved["flat"] == resolved["canonical"] == resolved["alias"]
    a, b = resolved["canonical"].values()
    assert (a.model, a.train.lr, a.data.negatives, a.seed) == ("tiny", 0.5, "deepromoter", 2)   # the default
    assert (b.model, b.train.lr, b.train.max_steps, b.data.negatives) == ("tiny", 0.5, 3, "genomic")


def load_stage(name: str, section: dict) -> CompareConfig:
    return build_pipeline({name: section}, Path("p.yaml")).stages[name]


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
