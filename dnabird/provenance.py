"""What a run records about where it ran: versions of Python, dnabird and key dependencies, devices."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path

PACKAGES = ("dnabird", "torch", "numpy", "sentencepiece", "pyfaidx", "h5py", "xformers")
# environment variables that cap the vector instructions of torch's own, MKL's and oneDNN's CPU kernels
ISA_CAPS = ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA")


def cpu_description() -> dict[str, str]:
    """The CPU model, its widest vector instructions, and those torch's CPU kernels use (with any caps set)."""
    import torch

    model, flags = platform.processor() or "unknown", set()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                key, _, value = (part.strip() for part in line.partition(":"))
                if key == "model name":
                    model = value
                elif key == "flags":
                    flags = set(value.split())
                    break
    except OSError:  # not Linux: the model from platform, the instructions unknown
        pass
    widest = next((name for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("neon", "NEON"))
                   if flag in flags), "unknown")
    caps = [f"{name}={os.environ[name]}" for name in ISA_CAPS if name in os.environ]
    used = torch.backends.cpu.get_cpu_capability() + (f" ({', '.join(caps)})" if caps else "")
    return {"cpu": f"{model}, {os.cpu_count()} cores, {widest}", "cpu kernels": used}


def source_commit() -> str:
    """The git commit of the dnabird source tree ("+modified" when it has uncommitted changes to tracked
    files), or "unknown" outside a git checkout (an installed wheel)."""
    root = Path(__file__).resolve().parents[1]

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()

    try:
        if Path(git("rev-parse", "--show-toplevel")).resolve() != root:  # e.g. installed into a venv in a repo
            return "unknown"
        commit = git("rev-parse", "--short=12", "HEAD")
        return commit + ("+modified" if git("status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def versions() -> dict[str, str]:
    """Versions of Python, dnabird and the main dependencies, plus the devices torch sees."""
    import torch

    report = {"python": platform.python_version(), "commit": source_commit()}
    for package in PACKAGES:
        try:
            report[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            report[package] = "not installed"
    report["cuda"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    report.update(cpu_description())
    report["cpu threads"] = str(torch.get_num_threads())
    return report
