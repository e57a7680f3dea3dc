"""Pipeline runner: stage configs and overrides, skipping by config + input content, per-part resume."""

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from dnabird.errors import ConfigError
from dnabird.pipeline import (
    STAGE_MODULES,
    Stage,
    fingerprint,
    load_pipeline,
    load_run_record,
    registered_stages,
    run_pipeline,
)

REPO = Path(__file__).resolve().parents[1]


@dataclass
class MakeConfig:
    value: int = 1
    parts: int = 4
    seed: int = 0


@dataclass
class UseConfig:
    labels: list[str] = field(default_factory=lambda: ["x"])
    scale: float = 1.0


class Recorder:
    """Two toy stages: `make` writes parts derived from an input file, `use` concatenates them."""

    def __init__(self, source: Path):
        self.source, self.calls = source, []
        self.fail_after = None  # raise after writing this many parts (an interruption)

    def stages(self):
        return [Stage("make", MakeConfig, lambda c, ctx: [self.source], self.make),
                Stage("use", UseConfig, lambda c, ctx: [ctx.output("make", "parts")], self.use)]

    def make(self, config, context, stage_dir):
        text = self.source.read_text()
        for index in range(config.parts):
            part = stage_dir / f"part-{index}.txt"
            content = f"{text}:{config.value}:{index}"
            if part.exists() and part.read_text() == content:
                continue  # resume: this part is done
            if self.fail_after is not None and index >= self.fail_after:
                raise KeyboardInterrupt
            self.calls.append(("make", index))
            part.write_text(content)
        return {"parts": stage_dir}

    def use(self, config, context, stage_dir):
        self.calls.append(("use", None))
        parts = sorted(context.output("make", "parts").glob("part-*.txt"))
        (stage_dir / "all.txt").write_text("|".join(p.read_text() for p in parts))
        return {"all": stage_dir / "all.txt"}


@pytest.fixture
def setup(tmp_path):
    source = tmp_path / "input.txt"
    source.write_text("aaaa")
    config = tmp_path / "p.yaml"
    config.write_text(yaml.safe_dump({"out_dir": str(tmp_path / "out"), "seed": 3, "make": {"value": 2},
                                      "use": None}))
    return Recorder(source), config


def test_second_run_skips_everything(setup):
    recorder, config = setup
    pipeline = load_pipeline(config, stages=recorder.stages())
    assert run_pipeline(pipeline, recorder.stages())["stages"] == {"make": "ran", "use": "ran"}
    assert recorder.calls == [("make", i) for i in range(4)] + [("use", None)]
    recorder.calls.clear()
    assert run_pipeline(pipeline, recorder.stages())["stages"] == {"make": "skipped", "use": "skipped"}
    assert recorder.calls == []
    run = json.loads((pipeline.out_dir / "run.json").read_text())
    assert run["seed"] == 3 and run["config"]["make"] == {"value": 2, "parts": 4, "seed": 3}
    assert run["config"]["use"] == {"labels": ["x"], "scale": 1.0}
    assert "numpy" in run["versions"] and "python" in run["versions"]
    assert (pipeline.out_dir / "use" / "all.txt").read_text().startswith("aaaa:2:0|")
    again = load_pipeline(pipeline.out_dir / "config.yaml", stages=recorder.stages())
    assert again.stages == pipeline.stages and again.seed == 3 and again.out_dir == pipeline.out_dir


def test_config_change_or_input_content_change_reruns(setup):
    recorder, config = setup
    run_pipeline(load_pipeline(config, stages=recorder.stages()), recorder.stages())
    changed = load_pipeline(config, ["use.scale=2"], stages=recorder.stages())
    assert run_pipeline(changed, recorder.stages())["stages"] == {"make": "skipped", "use": "ran"}
    recorder.source.write_text("bbbb")  # same size, new content
    assert run_pipeline(changed, recorder.stages())["stages"] == {"make": "ran", "use": "ran"}
    assert (changed.out_dir / "use" / "all.txt").read_text().startswith("bbbb:2:0|")
    reseeded = load_pipeline(config, ["seed=4", "use.scale=2"], stages=recorder.stages())
    # make has a seed field, so it re-runs; its parts come out byte-identical, so use is up to date
    assert run_pipeline(reseeded, recorder.stages())["stages"] == {"make": "ran", "use": "skipped"}


def test_a_later_stage_alone_reads_earlier_outputs_of_the_same_out_dir(setup, tmp_path):
    recorder, config = setup
    alone = tmp_path / "alone.yaml"
    alone.write_text(yaml.safe_dump({"out_dir": str(tmp_path / "out"), "use": {"scale": 3}}))
    with pytest.raises(ConfigError, match="needs output 'parts' of stage 'make'"):
        run_pipeline(load_pipeline(alone, stages=recorder.stages()), recorder.stages())
    run_pipeline(load_pipeline(config, stages=recorder.stages()), recorder.stages())
    record = run_pipeline(load_pipeline(alone, stages=recorder.stages()), recorder.stages())
    assert record["stages"] == {"use": "ran"}
    assert (tmp_path / "out" / "use" / "all.txt").read_text().startswith("aaaa:2:0|")


def test_deleted_output_reruns_the_stage(setup):
    recorder, config = setup
    pipeline = load_pipeline(config, stages=recorder.stages())
    run_pipeline(pipeline, recorder.stages())
    (pipeline.out_dir / "use" / "all.txt").unlink()
    assert run_pipeline(pipeline, recorder.stages())["stages"] == {"make": "skipped", "use": "ran"}


def test_a_failed_run_still_writes_run_json_naming_the_stage_and_its_error(setup):
    recorder, config = setup
    pipeline = load_pipeline(config, stages=recorder.stages())
    recorder.fail_after = 1
    with pytest.raises(KeyboardInterrupt):
        run_pipeline(pipeline, recorder.stages())
    run = json.loads((pipeline.out_dir / "run.json").read_text())
    assert run["status"] == "failed" and run["stages"] == {"make": "failed", "use": "not run"}
    assert run["error"] == {"stage": "make", "type": "KeyboardInterrupt", "message": ""}
    assert run["config"]["make"]["value"] == 2 and (pipeline.out_dir / "config.yaml").exists()
    recorder.fail_after = None

    def use_fails(config, context, stage_dir):
        raise ValueError("no labels to use")

    recorder.use = use_fails
    with pytest.raises(ValueError):
        run_pipeline(pipeline, recorder.stages())
    run = json.loads((pipeline.out_dir / "run.json").read_text())
    assert run["stages"] == {"make": "ran", "use": "failed"} and run["outputs"]["make"] == {"parts": "make"}
    assert run["error"] == {"stage": "use", "type": "ValueError", "message": "no labels to use"}
    recorder.source.unlink()  # a stage whose input is gone fails before it runs
    with pytest.raises(ConfigError):
        run_pipeline(pipeline, recorder.stages())
    run = json.loads((pipeline.out_dir / "run.json").read_text())
    assert run["stages"] == {"make": "failed", "use": "not run"}
    assert run["error"]["type"] == "ConfigError" and "input.txt does not exist" in run["error"]["message"]


def test_run_record_resolves_from_any_folder_and_after_a_move(setup, tmp_path, monkeypatch):
    recorder, config = setup
    monkeypatch.chdir(tmp_path)
    relative = tmp_path / "relative.yaml"
    relative.write_text(yaml.safe_dump({"out_dir": "out", "make": {"value": 2}, "use": None}))
    run_pipeline(load_pipeline(relative, stages=recorder.stages()), recorder.stages())
    raw = json.loads((tmp_path / "out" / "run.json").read_text())["outputs"]
    assert raw == {"make": {"parts": "make"}, "use": {"all": "use/all.txt"}}  # relative to the run folder
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert load_run_record(tmp_path / "out")["outputs"]["use"]["all"] == str(tmp_path / "out" / "use" / "all.txt")
    (tmp_path / "out").rename(tmp_path / "moved")
    record = load_run_record(tmp_path / "moved")
    assert Path(record["outputs"]["use"]["all"]).read_text().startswith("aaaa:2:0|")
    moved = tmp_path / "moved.yaml"
    moved.write_text(yaml.safe_dump({"out_dir": str(tmp_path / "moved"), "make": {"value": 2}, "use": None}))
    record = run_pipeline(load_pipeline(moved, stages=recorder.stages()), recorder.stages())
    assert record["stages"] == {"make": "skipped", "use": "skipped"}  # a moved run folder is still up to date
    assert record["outputs"]["make"]["parts"] == str(tmp_path / "moved" / "make")


def test_a_stage_reports_paths_inside_the_run_folder_relative_to_it(setup, tmp_path):
    recorder, config = setup
    use = recorder.use

    def use_reporting_its_inputs(config_, context, stage_dir):
        outputs = use(config_, context, stage_dir)
        (stage_dir / "report.json").write_text(json.dumps({"config": {
            "parts": str(context.output("make", "parts")), "source": str(recorder.source),
            "paths": [str(stage_dir / "all.txt")], "name": "all.txt"}}))
        return outputs

    recorder.use = use_reporting_its_inputs
    run_pipeline(load_pipeline(config, stages=recorder.stages()), recorder.stages())
    report = json.loads((tmp_path / "out" / "use" / "report.json").read_text())
    # inside the run folder: relative to it (a copied folder points into itself); outside it: absolute
    assert report == {"config": {"parts": "make", "source": str(tmp_path / "input.txt"), "paths": ["use/all.txt"],
                                 "name": "all.txt"}}


def test_interrupted_stage_resumes_per_part(setup):
    recorder, config = setup
    pipeline = load_pipeline(config, stages=recorder.stages())
    recorder.fail_after = 2
    with pytest.raises(KeyboardInterrupt):
        run_pipeline(pipeline, recorder.stages())
    assert recorder.calls == [("make", 0), ("make", 1)]
    assert json.loads((pipeline.out_dir / "make" / "stage.json").read_text())["finished"] is False
    recorder.calls.clear()
    recorder.fail_after = None
    assert run_pipeline(pipeline, recorder.stages())["stages"] == {"make": "ran", "use": "ran"}
    assert recorder.calls == [("make", 2), ("make", 3), ("use", None)]


def test_changed_key_starts_the_stage_afresh(setup):
    recorder, config = setup
    run_pipeline(load_pipeline(config, stages=recorder.stages()), recorder.stages())
    smaller = load_pipeline(config, ["make.parts=2"], stages=recorder.stages())
    recorder.calls.clear()
    assert run_pipeline(smaller, recorder.stages())["stages"] == {"make": "ran", "use": "ran"}
    assert sorted(p.name for p in (smaller.out_dir / "make").glob("part-*")) == ["part-0.txt", "part-1.txt"]
    assert (smaller.out_dir / "use" / "all.txt").read_text() == "aaaa:2:0|aaaa:2:1"


def test_stage_seed_defaults_to_the_pipeline_seed(setup):
    recorder, config = setup
    assert load_pipeline(config, stages=recorder.stages()).stages["make"].seed == 3
    assert load_pipeline(config, ["make.seed=9"], stages=recorder.stages()).stages["make"].seed == 9


def test_fingerprint_sees_content_beyond_the_head(tmp_path):
    big = tmp_path / "genome.fa"
    big.write_bytes(b"A" * (3 << 20))
    before = fingerprint(big)
    with big.open("r+b") as handle:  # change the tail, keep size
        handle.seek((3 << 20) - 10)
        handle.write(b"C")
    os.utime(big, ns=(before["mtime_ns"], before["mtime_ns"]))  # even with the old mtime
    after = fingerprint(big)
    assert after["size"] == before["size"]
    assert after["sha256_head_tail"] != before["sha256_head_tail"]
    os.utime(big, ns=(1, 1))  # a large file re-written (same bytes) counts as changed
    assert fingerprint(big) != after
    assert set(fingerprint(tmp_path)) == {"genome.fa"}


def test_small_files_are_fingerprinted_by_content_alone(tmp_path):
    small = tmp_path / "dna.model"
    small.write_bytes(b"ACGT" * 1000)
    before = fingerprint(small)
    os.utime(small, ns=(1, 1))
    assert fingerprint(small) == before == {"size": 4000, "sha256": hashlib.sha256(b"ACGT" * 1000).hexdigest()}
    small.write_bytes(b"ACGA" * 1000)
    assert fingerprint(small) != before


def test_override_types_are_checked_by_name(setup):
    recorder, config = setup
    with pytest.raises(ConfigError, match=r"p\.yaml: make\.value: expected int, got 'abc'"):
        load_pipeline(config, ["make.value=abc"], stages=recorder.stages())
    with pytest.raises(ConfigError, match=r"use\.labels\[1\]: expected str"):
        load_pipeline(config, ["use.labels=[a, 3]"], stages=recorder.stages())
    with pytest.raises(ConfigError, match=r"make\.value: expected int, got True"):
        load_pipeline(config, ["make.value=true"], stages=recorder.stages())
    assert load_pipeline(config, ["use.scale=2"], stages=recorder.stages()).stages["use"].scale == 2.0


def test_unknown_keys_fail_by_name_with_the_file(setup):
    recorder, config = setup
    with pytest.raises(ConfigError, match=r"p\.yaml: make: unknown key 'valeu'"):
        load_pipeline(config, ["make.valeu=3"], stages=recorder.stages())
    with pytest.raises(ConfigError, match=r"p\.yaml: unknown key 'mkae'"):
        load_pipeline(config, ["mkae.value=3"], stages=recorder.stages())


SHIPPED = sorted((REPO / "pipelines").glob("*.yaml"))


def test_pipelines_are_shipped():
    assert {p.name for p in SHIPPED} >= {"demo.yaml", "grch37.yaml"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_pipeline_validates(path):
    pipeline = load_pipeline(path)
    assert list(pipeline.stages) == [s.name for s in registered_stages() if s.name in pipeline.stages]
    first = path.read_text().splitlines()[0]
    assert first.startswith("#")
    assert f"dnabird run pipelines/{path.name}" in path.read_text().split("\n\n")[0]


def test_registry_lists_stage_modules_in_order():
    names = [stage.name for stage in registered_stages()]
    assert names[:4] == ["fetch", "corpus", "tokenizer", "shards"]
    assert len(names) == len(STAGE_MODULES)



def test_out_of_range_values_fail_at_load_time_naming_file_and_field():
    with pytest.raises(ConfigError, match=r"demo\.yaml: tokenizer: vocab_size=5 is invalid"):
        load_pipeline(REPO / "pipelines" / "demo.yaml", ["tokenizer.vocab_size=5"])
    with pytest.raises(ConfigError, match=r"demo\.yaml: corpus: passes=0 is invalid"):
        load_pipeline(REPO / "pipelines" / "demo.yaml", ["corpus.passes=0"])


def test_demo_pipeline_end_to_end(tmp_path):
    """The shipped demo, shortened to one corpus pass: shards hold every corpus document; a rerun skips all."""
    from dnabird.data.shards import ShardReader

    overrides = [f"out_dir={tmp_path / 'demo'}", f"fetch.dest={tmp_path / 'data'}", "corpus.passes=1",
                 "tokenizer.vocab_size=256", "pretrain.max_length=128", "pretrain.train.max_steps=1",
                 "pretrain.eval_examples=2", "pretrain.min_margin_bits={}", "promoter.data.anchor=tss:-200:+100",
                 "promoter.data.kmer=2", "promoter.train.max_steps=1", "promoter.train.warmup_steps=0",
                 "promoter.bootstrap_resamples=20", "chromatin.train.max_steps=1", "chromatin.train.warmup_steps=0",
                 "chromatin.train.global_batch_size=8", "chromatin.train.micro_batch_size=8",
                 "chromatin.data.slab_rows=64", "chromatin.data.baseline_rows=100", "chromatin.bootstrap_resamples=20",
                 "predict.region=[chr1:120001-122000]",
                 "variants.mlm_window_bp=100", "variants.bootstrap_resamples=20", "variants.ism_margin_bp=0"]
    pipeline = load_pipeline(REPO / "pipelines" / "demo.yaml", overrides)
    stages = ("fetch", "corpus", "tokenizer", "shards", "pretrain", "promoter", "chromatin", "predict", "variants",
              "report")
    assert run_pipeline(pipeline)["stages"] == dict.fromkeys(stages, "ran")
    report = json.loads((tmp_path / "demo" / "corpus" / "report.json").read_text())
    for split in ("train", "heldout"):
        with ShardReader(tmp_path / "demo" / "shards" / split) as reader:
            assert len(reader) == report["splits"][split]["documents"] > 0
            assert {reader[i].chrom for i in range(len(reader))} == set(report["splits"][split]["contigs"])
    tokenizer_report = json.loads((tmp_path / "demo" / "tokenizer" / "report.json").read_text())
    assert tokenizer_report["vocab_size"] == 256 and tokenizer_report["heldout_bp_per_token"] > 2
    assert set(run_pipeline(pipeline)["stages"].values()) == {"skipped"}
    assert load_pipeline(tmp_path / "demo" / "config.yaml").stages == pipeline.stages
