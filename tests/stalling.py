"""Kill a `dnabird` stand-in subprocess once it has stalled after saving its first chunk (the stand-ins create
the file named by $BLOCKED_MARKER, then sleep), for the SIGKILL tests of resumable runs."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def kill_once_stalled(standin: Path, args: list[str], marker: Path, timeout: float = 120) -> None:
    """Run `standin` with `args`, wait (at most `timeout` s) until it creates `marker`, then SIGKILL it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "BLOCKED_MARKER": str(marker)}
    proc = subprocess.Popen([sys.executable, str(standin), *args], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + timeout
    while not marker.exists():                           # stalls once its first chunk is saved
        assert proc.poll() is None and time.time() < deadline, proc.stderr.read().decode()[-2000:]
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
