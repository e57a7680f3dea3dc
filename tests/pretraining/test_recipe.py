import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dnabird.errors import CheckpointError, ConfigError
from dnabird.pretraining.recipe import load_config, pretrain
from dnabird.stages.pretrain import from_pipeline

ROOT = Path(__file__).resolve().parents[2]


def _config_file(tmp_path: Path, embedded_default, **extra) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    lines = ["model: tiny", f"tokenizer: {embedded_default.tokenizer}",
             f"train_shards: {embedded_default.train_shards}", f"heldout_shards: {embedded_default.heldout_shards}",
             "max_length: 128", "eval_examples: 4", "eval_batch_size: 4",
             "train:", f"  out_dir: {tmp_path / 'run'}", "  max_steps: 2", "  global_batch_size: 4",
             "  micro_batch_size: 2", "  warmup_steps: 1", "  checkpoint_every: 1", "  progress: false"]
    lines += [f"{key}: {value}" for key, value in extra.items()]
    path = tmp_path / "pretrain.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _dnabird(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dnabird", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_embedded_default_model_trains_and_its_report_holds_every_baseline(embedded_default):
    """The fixture's model is trained for seconds, which teaches it the token frequencies and to copy the
    tokens BERT masking leaves visible, not to read its context: at the positions shown as [MASK] it
    stays at the unigram figure (+0.002 bits/bp after 600 steps of 8 x 128 tokens, measured; the demo's
    1200 steps of 16 x 512 tokens get about +0.1). So this test checks training and the report over all
    selected positions; `make demo` enforces the [MASK]-only margin (`min_margin_bits` in
    pipelines/demo.yaml; its failure path: `test_a_missed_margin_fails_the_run_after_saving_everything`)."""
    records = [json.loads(line) for line in (embedded_default.pretrain / "metrics.jsonl").read_text().splitlines()]
    first = sum(r["mlm_loss"] for r in records[:10]) / 10
    last = sum(r["mlm_loss"] for r in records[-10:]) / 10
    assert last < first - 0.3
    report = json.loads((embedded_default.pretrain / "report.json").read_text())
    assert report["model"]["bits_per_base"] < report["unigram"]["bits_per_base"]
    assert report["model"]["mlm_loss"] < report["unigram"]["mlm_loss"]
    assert report["mask_rate"] == 0.15 and report["max_length"] == 128
    for where in (report, report["at_mask"]):
        assert set(where["margin_bits_per_base"]) == {"unigram", "one_sentence", *(f"markov_{k}" for k in range(1, 7))}


def test_pretrain_command_resumes_and_evaluate_reads_its_model(tmp_path, embedded_default):
    config = _config_file(tmp_path, embedded_default)
    result = _dnabird("-q", "pretrain", "--config", config)
    assert result.returncode == 0, result.stderr[-2000:]
    result = _dnabird("-q", "pretrain", "--config", config, "--resume", "train.max_steps=3")
    assert result.returncode == 0, result.stderr[-2000:]
    run = tmp_path / "run"
    assert [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()] == [1, 2, 3]
    assert "MLM acc" in result.stdout and "unigram" in result.stdout
    saved = json.loads((run / "run.json").read_text())
    assert saved["seed"] == 0 and saved["pretrain"]["max_length"] == 128 and "torch" in saved["versions"]
    result = _dnabird("evaluate", run / "model", "--shards", embedded_default.heldout_shards,
                      "--max-length", 128, "--examples", 4, "--out", tmp_path / "eval.json")
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads((tmp_path / "eval.json").read_text())
    trained = json.loads((run / "report.json").read_text())  # the pretraining run's own held-out report
    assert report["examples"] == 4
    for key in ("mlm_accuracy", "bits_per_base", "nsp_accuracy"):
        assert report["model"][key] == pytest.approx(trained["model"][key], abs=1e-6)


def test_resume_with_a_changed_model_config_names_the_field(tmp_path, embedded_default):
    config = load_config(_config_file(tmp_path, embedded_default), ["train.max_steps=1", "eval_examples=0"])
    pretrain(config)
    changed = load_config(_config_file(tmp_path, embedded_default),
                          ["train.max_steps=2", "model_overrides={intermediate_size: 64}"])
    with pytest.raises(CheckpointError, match="intermediate_size is 256 in the checkpoint and 64 in the config"):
        pretrain(changed, resume=True)


def test_a_missed_margin_fails_the_run_after_saving_everything(tmp_path, embedded_default):
    from dnabird.errors import DnabirdError

    config = load_config(_config_file(tmp_path, embedded_default), ["min_margin_bits={unigram: 5.0}"])
    with pytest.raises(DnabirdError, match=r"shown as \[MASK\].* below the unigram baseline, 5.0 required"):
        pretrain(config)
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    # the check reads the [MASK]-only margin: 2 steps of training are far from 5 bits/bp below unigram
    assert report["at_mask"]["margin_bits_per_base"]["unigram"] < 5.0
    assert (tmp_path / "run" / "model" / "model.safetensors").exists()


def test_unknown_config_keys_fail_by_name(tmp_path, embedded_default):
    with pytest.raises(ConfigError, match="trian"):
        load_config(_config_file(tmp_path, embedded_default, trian="{}"))
    with pytest.raises(ConfigError, match="max_stepz"):
        load_config(_config_file(tmp_path, embedded_default), ["train.max_stepz=3"])


def test_a_pipeline_yaml_gives_its_pretrain_section_with_paths_from_earlier_stages(embedded_default):
    from tests.conftest import FIXTURE_OVERRIDES

    config = from_pipeline(ROOT / "pipelines" / "demo.yaml",
                           [f"out_dir={embedded_default.root}", "pretrain.train.max_steps=7", *FIXTURE_OVERRIDES[:1]])
    assert Path(config.tokenizer) == embedded_default.tokenizer
    assert Path(config.train_shards) == embedded_default.train_shards
    assert Path(config.heldout_shards) == embedded_default.heldout_shards
    assert Path(config.train.out_dir) == embedded_default.pretrain
    assert config.train.max_steps == 7 and config.model == "tiny" and config.max_length == 128


@pytest.mark.slow   # three pretraining subprocesses, about a minute; the loop's own kill test is fast
def test_pretrain_killed_mid_run_resumes_to_bit_identical_losses(tmp_path, embedded_default):
    steps = ["train.max_steps=12", "train.checkpoint_every=4", "eval_examples=0"]
    reference = _config_file(tmp_path / "a", embedded_default)
    assert _dnabird("-q", "pretrain", "--config", reference, *steps).returncode == 0
    killed = _config_file(tmp_path / "b", embedded_default)
    command = [sys.executable, "-m", "dnabird", "-q", "pretrain", "--config", str(killed), *steps]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    checkpoint = tmp_path / "b" / "run" / "checkpoints" / "step_00000004"
    deadline = time.time() + 240
    while not checkpoint.exists():
        assert proc.poll() is None and time.time() < deadline, proc.stderr.read().decode()[-2000:]
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (tmp_path / "b" / "run" / "checkpoints" / "step_00000012").exists()   # really cut short
    assert _dnabird("-q", "pretrain", "--config", killed, "--resume", *steps).returncode == 0

    def losses(run):
        return [json.loads(line)["loss"] for line in (run / "metrics.jsonl").read_text().splitlines()]

    assert losses(tmp_path / "b" / "run") == losses(tmp_path / "a" / "run")


def test_nested_model_overrides_merge_and_bad_ones_fail_when_the_pipeline_loads():
    from dnabird.errors import ConfigError
    from dnabird.model.config import recipe_encoder_config as encoder_config
    from dnabird.pipeline import load_pipeline

    demo = ROOT / "pipelines" / "demo.yaml"
    config = load_pipeline(demo, ["pretrain.model_overrides.attention.block_size=32"]).stages["pretrain"]
    pattern = encoder_config(config, vocab_size=100).pattern()
    assert (pattern.block_size, pattern.window_blocks, pattern.num_random_blocks) == (32, 3, 3)
    assert encoder_config(config).positional == "rotary"  # the demo's other overrides are kept
    for override, message in [
        ("pretrain.model_overrides.hiden_size=64", "pretrain: model_overrides: unknown key 'hiden_size'"),
        ("pretrain.model_overrides.attention.blocksize=32", "attention.blocksize=32 is invalid"),
        ("pretrain.model_overrides.num_layers=two", "model_overrides.num_layers: expected int, got 'two'"),
        ("pretrain.model=huge", "model='huge' is invalid: expected one of"),
        ("pretrain.max_length=500", "max_length=500 is invalid: expected a multiple of the attention block size"),
    ]:
        with pytest.raises(ConfigError, match=message):
            load_pipeline(demo, [override])
