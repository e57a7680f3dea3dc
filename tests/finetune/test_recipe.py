"""The fine-tuning recipe on a stand-in task (tests/finetune/standin_task.py): model selection, resume,
the report and its bad inputs."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from dnabird.data.tokenizer import Tokenizer
from dnabird.errors import CheckpointError, ParameterError
from dnabird.finetune.evaluate import Selection, predict
from dnabird.finetune.metrics import binary_metrics
from dnabird.model.checkpoint import load_checkpoint, read_task, save_checkpoint
from dnabird.tasks import finetune
from tests.finetune import standin_task

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("standin_task.py")


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory):
    root = tmp_path_factory.mktemp("tokenizers")
    rng = np.random.default_rng(0)
    sentences = ["".join(rng.choice(list("ACGT"), 300)) for _ in range(200)]
    return (Tokenizer.train(sentences, root / "a.model", vocab_size=64, sample_size=200),
            Tokenizer.train(sentences, root / "b.model", vocab_size=80, sample_size=200))


@pytest.fixture(scope="module")
def standin_run(tokenizers, tmp_path_factory):
    standin_task.register()
    out = tmp_path_factory.mktemp("standin") / "run"
    report = finetune("standin", standin_task.config(tokenizers[0].path, out))
    return out, report


def test_selection_keeps_the_weights_of_the_best_step():
    model = torch.nn.Linear(2, 1)
    selection = Selection("auroc")
    for step, value in ((3, 0.6), (6, 0.8), (9, 0.7), (12, None)):
        with torch.no_grad():
            model.weight.fill_(step)
        selection.offer(step, {"auroc": value}, model)
    assert (selection.step, selection.value) == (6, 0.8) and selection.state["weight"].eq(6).all()
    lowest = Selection("loss")
    for step, value in ((1, 0.5), (2, 0.3), (3, 0.4)):
        lowest.offer(step, {"loss": value}, model)
    assert lowest.step == 2


def test_the_selected_model_is_the_best_validation_step(standin_run):
    out, report = standin_run
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    validated = [(r["step"], r["val_auroc"]) for r in records if "val_auroc" in r]
    assert [s for s, _ in validated] == [3, 6, 9, 12]
    best = max(validated, key=lambda sv: sv[1])               # the first of equal values
    assert (report["selection"]["step"], report["selection"]["value"]) == best
    model = load_checkpoint(out / "model")                    # model/ holds that step's weights
    standin_task.register()
    tokenizer = Tokenizer.load(next((out / "model").glob("*.model")))
    task = standin_task.build(standin_task.config(out, out), tokenizer, block_size=16, out_dir=out)
    labels, scores, _ = predict(model, task.validation, task.spec, batch_size=16, pad_id=tokenizer.pad_id)
    assert binary_metrics(labels, scores)["auroc"] == pytest.approx(best[1])
    assert read_task(out / "model").task == "standin"


def test_report_rows_intervals_baseline_and_plots(standin_run):
    out, report = standin_run
    rows = report["test"]["rows"]
    assert set(rows) == {"fine-tuned model", "token count baseline"}
    for row in rows.values():
        assert row["examples"] == 32 and set(row["ci95"]) >= {"accuracy", "f1", "auroc"}
        low, high = row["ci95"]["accuracy"]
        assert low <= row["accuracy"] <= high
    assert json.loads((out / "report.json").read_text())["test"] == report["test"]
    for name in ("roc.png", "pr.png", "learning_curve.png"):
        assert (out / name).read_bytes()[:4] == b"\x89PNG"


def _script(*args) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, str(SCRIPT), *map(str, args)], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_killed_fine_tune_resumes_to_the_same_report(tokenizers, tmp_path):
    tokenizer = tokenizers[0].path
    reference = _script(tokenizer, tmp_path / "a", "--steps", 10)
    assert reference.wait(timeout=300) == 0, reference.stderr.read().decode()[-2000:]
    killed = _script(tokenizer, tmp_path / "b", "--steps", 10, "--block-at-step", 6)
    deadline = time.time() + 300
    while not (tmp_path / "b" / "blocked").exists():   # stalls fetching step 7's data, after step 6's validation
        assert killed.poll() is None and time.time() < deadline, killed.stderr.read().decode()[-2000:]
        time.sleep(0.1)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert sorted(p.name for p in (tmp_path / "b" / "checkpoints").iterdir()) == ["step_00000004"]
    resumed = _script(tokenizer, tmp_path / "b", "--steps", 10, "--resume")
    assert resumed.wait(timeout=300) == 0, resumed.stderr.read().decode()[-2000:]
    a, b = (json.loads((tmp_path / run / "report.json").read_text()) for run in "ab")
    assert a["test"] == b["test"] and a["selection"] == b["selection"]
    losses = [[json.loads(line)["loss"] for line in (tmp_path / run / "metrics.jsonl").read_text().splitlines()]
              for run in "ab"]
    assert losses[0] == losses[1]


def test_bad_settings_are_clear_errors(tokenizers, tmp_path):
    standin_task.register()
    with pytest.raises(ParameterError, match="train.warmup_steps=10000"):
        config = standin_task.config(tokenizers[0].path, tmp_path)
        config.train.warmup_steps = 10_000
        finetune("standin", config)
    from dnabird.model.config import tiny
    from dnabird.model.heads import PretrainingModel

    pretrained = tmp_path / "pretrained"   # pretrained with tokenizer a, data encoded with tokenizer b
    save_checkpoint(PretrainingModel(tiny(vocab_size=64, **{k: v for k, v in standin_task.MODEL.items()})),
                    pretrained, tokenizer_files=(tokenizers[0].path,))
    config = standin_task.config(tokenizers[1].path, tmp_path, pretrained=str(pretrained))
    with pytest.raises(CheckpointError, match=f"{tokenizers[0].hash}.*{tokenizers[1].hash}"):
        finetune("standin", config)


def test_epochs_set_the_number_of_steps(tokenizers, tmp_path):
    standin_task.register()
    config = standin_task.config(tokenizers[0].path, tmp_path, epochs=0.5)   # 64 examples, batch 8
    finetune("standin", config)
    steps = [json.loads(line)["step"] for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert steps[-1] == 4


def test_pooling_is_a_fine_tuning_setting_kept_with_the_model(tokenizers, tmp_path):
    standin_task.register()
    from dnabird.model.config import tiny
    from dnabird.model.heads import PretrainingModel

    pretrained = tmp_path / "pretrained"   # a [CLS]-pooling checkpoint, fine-tuned with mean pooling
    save_checkpoint(PretrainingModel(tiny(vocab_size=64, **standin_task.MODEL)), pretrained,
                    tokenizer_files=(tokenizers[0].path,))
    config = standin_task.config(tokenizers[0].path, tmp_path / "run", steps=3, pretrained=str(pretrained),
                                 pooling="mean")
    finetune("standin", config)
    model = load_checkpoint(tmp_path / "run" / "model")
    assert model.config.pooling == "mean" and model.encoder.pooler is None
    with pytest.raises(ParameterError, match="pooling='max'"):
        standin_task.config(tokenizers[0].path, tmp_path, pooling="max")


def test_a_centre_checkpoint_fine_tuned_with_other_pooling_drops_its_centre_width(tokenizers, tmp_path):
    from dnabird.finetune.recipe import encoder_config
    from dnabird.model.config import tiny
    from dnabird.model.heads import PretrainingModel

    pretrained = tmp_path / "pretrained"   # a checkpoint that reads the 8 central tokens
    save_checkpoint(PretrainingModel(tiny(vocab_size=64, **standin_task.MODEL, pooling="centre", pool_tokens=8)),
                    pretrained, tokenizer_files=(tokenizers[0].path,))

    def fine_tuned(**changes):
        config = standin_task.config(tokenizers[0].path, tmp_path / "run", pretrained=str(pretrained), **changes)
        model = encoder_config(config)
        return model.pooling, model.pool_tokens

    assert fine_tuned() == ("centre", 8)
    assert fine_tuned(pool_tokens=4) == ("centre", 4)
    assert fine_tuned(pooling="mean") == ("mean", 0)
    assert fine_tuned(pooling="cls") == ("cls", 0)
    assert fine_tuned(pooling="centre_max") == ("centre_max", 8)


def test_a_checkpoint_fine_tuned_takes_the_pattern_of_model_overrides_and_nothing_else(tokenizers, tmp_path, caplog):
    from dnabird.finetune.recipe import encoder_config
    from dnabird.model.checkpoint import read_config
    from dnabird.model.config import tiny
    from dnabird.model.heads import PretrainingModel

    pretrained = tmp_path / "pretrained"   # pretrained with BigBird ITC, fine-tuned with a Longformer pattern
    itc = {"type": "bigbird_itc", "block_size": 16, "window_blocks": 3, "num_random_blocks": 2}
    save_checkpoint(PretrainingModel(tiny(vocab_size=64, **{**standin_task.MODEL, "attention": itc})), pretrained,
                    tokenizer_files=(tokenizers[0].path,))
    longformer = {"type": "longformer", "window": 32, "block_size": 16}
    config = standin_task.config(tokenizers[0].path, tmp_path / "run", pretrained=str(pretrained),
                                 model_overrides={"attention": longformer, "hidden_size": 256})
    with caplog.at_level("WARNING"):
        model = encoder_config(config)
    assert {key: model.attention[key] for key in longformer} == longformer
    assert model.hidden_size == standin_task.MODEL["hidden_size"]      # the checkpoint's, not the override's
    assert "model_overrides hidden_size ignored" in caplog.text
    from dnabird.model.checkpoint import load_encoder_for_finetuning, read_tensors
    from dnabird.model.task_spec import TaskSpec

    spec = TaskSpec(task="standin", problem="binary", labels=("positive",), eval_length=64)
    loaded, _ = load_encoder_for_finetuning(pretrained, spec, config=model)
    stored, weights = read_tensors(pretrained), loaded.state_dict()
    for kind in ("query", "key", "value"):   # Longformer's start: global projections copy the local ones
        local = f"encoder.layers.0.attention.{kind}.weight"
        assert torch.equal(weights[local.replace(f".{kind}.", f".global_{kind}.")], stored[local])
    config = standin_task.config(tokenizers[0].path, tmp_path / "run", pretrained=str(pretrained),
                                 model_overrides={"attention": {"num_random_blocks": 1}})
    stored = read_config(pretrained).attention
    assert stored["num_random_blocks"] == 2
    assert encoder_config(config).attention == {**stored, "num_random_blocks": 1}   # merged key by key


def test_the_recipe_takes_a_task_and_a_task_name_goes_through_the_registry():
    from dnabird import tasks
    from dnabird.finetune import recipe
    from dnabird.tasks import chromatin

    with pytest.raises(TypeError, match=r"'promoter' by name call dnabird.tasks.finetune"):
        recipe.finetune("promoter", None)
    assert tasks.task("chromatin") is chromatin.TASK and chromatin.TASK.name == "chromatin"
    with pytest.raises(ParameterError, match="task='nope' is invalid: expected one of"):
        tasks.task("nope")


def _gc_run(tokenizer, out_dir, *, precision="fp32", steps=20, shuffle_labels=False):
    """The stand-in recipe on the GC-rich task (64 validation examples, validated every 5 steps): (records, report)."""
    standin_task.register()
    data = standin_task.StandinData(gc_rich=True, shuffle_labels=shuffle_labels,
                                    examples={"train": 64, "validation": 64, "test": 32})
    config = standin_task.config(tokenizer.path, out_dir, steps=steps, data=data)
    config.train.precision, config.train.eval_every, config.train.checkpoint_every = precision, 5, steps
    report = finetune("standin", config)
    return [json.loads(line) for line in (out_dir / "metrics.jsonl").read_text().splitlines()], report


def test_bf16_fine_tuning_on_cpu_learns_the_task_as_fp32_does(tokenizers, tmp_path):
    runs = {precision: _gc_run(tokenizers[0], tmp_path / precision, precision=precision)
            for precision in ("fp32", "bf16")}
    losses = {precision: np.array([r["loss"] for r in records]) for precision, (records, _) in runs.items()}
    assert not np.array_equal(losses["fp32"], losses["bf16"])          # autocast really ran
    assert np.abs(losses["fp32"] - losses["bf16"]).max() < 0.01        # and followed the fp32 run step by step
    for records, report in runs.values():
        last = records[-1]
        assert last["val_auroc"] >= 0.95 and last["val_accuracy"] >= 0.75, last
        assert report["warnings"] == []


def test_a_run_on_shuffled_labels_warns_that_it_stayed_at_chance(tokenizers, tmp_path, caplog, capsys):
    _, report = _gc_run(tokenizers[0], tmp_path, steps=12, shuffle_labels=True)
    (warning,) = report["warnings"]
    chance = 0.5 + 3 * (129 / (12 * 32 * 32)) ** 0.5       # AUROC 0.5 + 3 standard errors, 32 + 32 examples
    assert warning["kind"] == "at_chance" and warning["metrics"]["auroc"]["best"] <= chance
    assert "AT CHANCE" in caplog.text and "train.lr" in caplog.text                   # the log
    assert "WARNING: AT CHANCE" in capsys.readouterr().out                             # the printed table
    assert json.loads((tmp_path / "report.json").read_text())["warnings"] == [warning]  # report.json


def test_chance_bounds_are_the_majority_class_and_auroc_half_with_three_standard_errors():
    from dnabird.finetune.chance import chance_bounds, chance_warning

    labels = np.array([1] * 30 + [0] * 70)
    bounds = chance_bounds(labels, "binary")
    assert bounds["accuracy"] == pytest.approx(0.7 + 3 * (0.7 * 0.3 / 100) ** 0.5)
    assert bounds["auroc"] == pytest.approx(0.5 + 3 * (101 / (12 * 30 * 70)) ** 0.5)
    history = [(5, {"accuracy": 0.95, "auroc": 0.99}), (10, {"accuracy": 0.7, "auroc": 0.55})]
    assert chance_warning(history, labels, "binary", warmup_steps=0) is None
    assert chance_warning(history, labels, "binary", warmup_steps=5)["kind"] == "at_chance"   # warm-up left out
    ranks = chance_warning([(10, {"accuracy": 0.7, "auroc": 0.9})], labels, "binary", warmup_steps=0)
    assert ranks["kind"] == "one_class" and "predicts (nearly) one class" in ranks["message"]


def test_a_regression_at_chance_is_a_pearson_r_within_three_standard_errors_of_zero():
    from dnabird.finetune.chance import chance_bounds, chance_warning

    labels = np.random.default_rng(0).normal(size=(101, 2))
    assert chance_bounds(labels, "regression") == {"pearson": pytest.approx(3 / 10)}   # 1 / sqrt(N - 1) = 0.1
    stuck = chance_warning([(5, {"pearson": 0.6}), (10, {"pearson": 0.25})], labels, "regression", warmup_steps=5)
    assert stuck["kind"] == "at_chance" and stuck["metrics"] == {"pearson": {"best": 0.25, "chance_up_to": 0.3}}
    assert chance_warning([(10, {"pearson": 0.35})], labels, "regression", warmup_steps=5) is None


def test_a_warmup_as_long_as_the_run_is_refused_saying_what_to_set():
    from dnabird.finetune.config import FinetuneConfig
    from dnabird.train import TrainConfig

    config = FinetuneConfig(pretrained="none", train=TrainConfig(warmup_steps=20, max_steps=20))
    with pytest.raises(ParameterError, match=r"train.warmup_steps=20 is invalid: expected fewer than the run's 20 "
                                             r"steps .*; lower it, as train.warmup_steps=2"):
        config.check_schedule(20)
