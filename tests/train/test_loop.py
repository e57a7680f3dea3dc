import json
import math
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from dnabird.errors import CheckpointError, ConfigError, Interrupted, NonFiniteLossError, ParameterError
from dnabird.train import TrainConfig, train
from dnabird.train.loop import LossOutput
from tests.train.standin import StandinDataset, StandinModel, collate, run

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("standin.py")


def _losses(out_dir: Path) -> list[float]:
    return [json.loads(line)["loss"] for line in (out_dir / "metrics.jsonl").read_text().splitlines()]


def _script(*args, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, str(SCRIPT), *map(str, args)], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def test_run_writes_checkpoints_metrics_plot_and_config(tmp_path):
    records = run(tmp_path, steps=5, checkpoint_every=2)
    assert [r["step"] for r in records] == [1, 2, 3, 4, 5]
    assert {"loss", "lr", "acc", "tokens_per_s", "grad_norm"} <= set(records[0])
    # keep_last=2 of the checkpoints at steps 2, 4 and 5 (the end)
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["step_00000004", "step_00000005"]
    assert (tmp_path / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads((tmp_path / "run.json").read_text())
    assert saved["seed"] == 3 and saved["train"]["max_steps"] == 5


def test_training_reduces_the_loss(tmp_path):
    records = run(tmp_path, steps=40, dropout=0.0, checkpoint_every=40, lr=3e-2)
    first, last = sum(r["loss"] for r in records[:5]) / 5, sum(r["loss"] for r in records[-5:]) / 5
    assert last < 0.8 * first


def test_sigkill_mid_run_then_resume_gives_bit_identical_losses(tmp_path):
    reference = tmp_path / "uninterrupted"
    assert _script(reference, "--steps", 7).wait(timeout=120) == 0
    killed = tmp_path / "killed"
    proc = _script(killed, "--steps", 7, "--block-at-step", 5)
    deadline = time.time() + 120
    while not (killed / "blocked").exists():        # stalls while fetching step 6's data
        assert proc.poll() is None and time.time() < deadline, proc.stderr.read().decode()
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert len(_losses(killed)) == 5                 # step 5 logged but only step 4 checkpointed
    assert _script(killed, "--steps", 7, "--resume").wait(timeout=120) == 0
    assert _losses(killed) == _losses(reference)     # exact float equality, steps 1-7


def test_evaluate_runs_every_n_steps_and_at_the_end_without_disturbing_training(tmp_path):
    calls = []

    def evaluate(model, step):
        calls.append((step, model.training))
        model.eval()                                   # the loop puts it back in training mode
        with torch.no_grad():
            value = float(model.head.weight.sum())
        return {"val_weight_sum": value}

    records = run(tmp_path / "a", steps=7, log_every=5, eval_every=3, evaluate=evaluate)
    assert calls == [(3, True), (6, True), (7, True)]
    # logged at log_every (5), at every evaluation and at the end
    assert [(r["step"], "val_weight_sum" in r) for r in records] == [(3, True), (5, False), (6, True), (7, True)]
    plain = run(tmp_path / "b", steps=7, log_every=1)  # same dropout masks and updates without evaluations
    assert [r["loss"] for r in plain if r["step"] in (3, 5, 6, 7)] == [r["loss"] for r in records]


def test_resume_without_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint to resume from"):
        run(tmp_path, steps=2, resume=True)


def test_corrupt_or_missing_checkpoint_files_are_clear_errors(tmp_path):
    run(tmp_path, steps=2)
    ckpt = tmp_path / "checkpoints" / "step_00000002"
    (ckpt / "optimizer.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(CheckpointError, match="optimizer.safetensors: corrupt"):
        run(tmp_path, steps=3, resume=True)
    (ckpt / "model" / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="model.safetensors: file is missing"):
        run(tmp_path, steps=3, resume=True)


def test_resume_with_a_changed_model_names_the_tensor(tmp_path):
    run(tmp_path, steps=2)
    config = TrainConfig(out_dir=str(tmp_path), max_steps=3, global_batch_size=8, micro_batch_size=2,
                         progress=False)
    wider = torch.nn.Sequential(torch.nn.Linear(3, 4))
    with pytest.raises(CheckpointError, match="'0.weight' is missing"):
        train(wider, None, StandinDataset(), config, collate_fn=collate, resume=True)


def test_nan_loss_stops_naming_the_step_and_keeps_the_last_good_checkpoint(tmp_path):
    run(tmp_path, steps=2)
    good = (tmp_path / "checkpoints" / "step_00000002" / "model" / "model.safetensors").read_bytes()

    def poisoned(model, batch, step):
        loss = torch.nn.functional.cross_entropy(model(batch["ids"]), batch["label"])
        return LossOutput(loss * (math.nan if step == 3 else 1.0), batch["ids"].numel())

    config = TrainConfig(out_dir=str(tmp_path), max_steps=6, global_batch_size=8, micro_batch_size=2,
                         checkpoint_every=1, progress=False)
    with pytest.raises(NonFiniteLossError, match=r"loss is nan at step 4.*step_00000003"):
        train(StandinModel(), poisoned, StandinDataset(), config, collate_fn=collate, resume=True)
    assert (tmp_path / "checkpoints" / "step_00000002" / "model" / "model.safetensors").read_bytes() == good
    assert not (tmp_path / "checkpoints" / "step_00000004").exists()


def test_ctrl_c_says_where_training_stopped_and_which_checkpoint_a_rerun_resumes_from(tmp_path):
    def interrupted_at_step_5(model, batch, step):
        if step == 4:
            raise KeyboardInterrupt
        return LossOutput(torch.nn.functional.cross_entropy(model(batch["ids"]), batch["label"]), batch["ids"].numel())

    config = TrainConfig(out_dir=str(tmp_path), max_steps=6, global_batch_size=8, micro_batch_size=2,
                         checkpoint_every=3, progress=False)
    with pytest.raises(Interrupted, match=r"during step 5 of 6 \(last checkpoint: step 3\)") as caught:
        train(StandinModel(), interrupted_at_step_5, StandinDataset(), config, collate_fn=collate)
    assert caught.value.resume_step == 3 and isinstance(caught.value, KeyboardInterrupt)


def test_training_checkpoints_follow_the_umask(tmp_path):
    previous = os.umask(0o027)
    try:
        run(tmp_path, steps=2, checkpoint_every=2)
    finally:
        os.umask(previous)
    step = tmp_path / "checkpoints" / "step_00000002"
    modes = {str(p.relative_to(step)): stat.S_IMODE(p.stat().st_mode) for p in [step, *step.rglob("*")]}
    assert modes["."] == 0o750 and modes["model"] == 0o750
    assert {name: mode for name, mode in modes.items() if name not in (".", "model")} == {
        name: 0o640 for name in modes if name not in (".", "model")}
    assert "model/model.safetensors" in modes and "optimizer.safetensors" in modes


@pytest.mark.parametrize("key, value, expected", [
    ("log_every", 0, "train.log_every=0 is invalid: expected an integer >= 1"),
    ("device", "gpu", "train.device='gpu' is invalid: expected one of auto, cpu, cuda"),
    ("precision", "fp16", "train.precision='fp16' is invalid"),
])
def test_bad_settings_are_refused_by_name(key, value, expected):
    with pytest.raises(ParameterError, match=re.escape(expected)):
        TrainConfig(**{key: value})


def test_a_pipeline_with_log_every_zero_fails_when_it_loads():
    from dnabird.pipeline import load_pipeline

    demo = Path(__file__).resolve().parents[2] / "pipelines" / "demo.yaml"
    with pytest.raises(ConfigError, match=r"demo.yaml: pretrain.train: train.log_every=0 is invalid"):
        load_pipeline(demo, ["pretrain.train.log_every=0"])


def test_device_names_resolve_or_are_refused():
    from dnabird.train.distributed import resolve_device

    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ParameterError, match="device='cuda:1' is invalid: expected one of auto, cpu, cuda"):
        resolve_device("cuda:1")
    if not torch.cuda.is_available():
        with pytest.raises(ParameterError, match="torch sees no CUDA device"):
            resolve_device("cuda")
