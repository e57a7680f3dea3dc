import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.train.standin import run

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("standin.py")


def _torchrun(out_dir: Path, *args) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           str(SCRIPT), str(out_dir), "--steps", "6", "--dropout", "0", *args]
    result = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]


def _losses(out_dir: Path) -> list[float]:
    return [json.loads(line)["loss"] for line in (out_dir / "metrics.jsonl").read_text().splitlines()]


def test_two_gloo_processes_match_one_process_and_resume_from_their_checkpoint(tmp_path):
    single = [r["loss"] for r in run(tmp_path / "single", steps=6, dropout=0.0)]
    ddp = tmp_path / "ddp"
    _torchrun(ddp)
    assert json.loads((ddp / "run.json").read_text())["world_size"] == 2
    assert _losses(ddp) == pytest.approx(single, rel=1e-5)
    # resume the DDP run from its step-4 checkpoint: drop the final one and recompute steps 5-6
    shutil.rmtree(ddp / "checkpoints" / "step_00000006")
    state = json.loads((ddp / "checkpoints" / "step_00000004" / "train_state.json").read_text())
    assert state["world_size"] == 2
    _torchrun(ddp, "--resume")
    assert _losses(ddp) == pytest.approx(single, rel=1e-5)
    assert (ddp / "checkpoints" / "step_00000006" / "rng_rank1.safetensors").is_file()
