"""What a run records about where it ran: versions of Python, dnabird and key dependencies, devices."""

from __future__ import annotations

import importlib.metadata
import platform

PACKAGES = ("dnabird", "torch", "numpy", "sentencepiece", "pyfaidx", "h5py", "xformers")


def versions() -> dict[str, str]:
    """Versions of Python, dnabird and the main dependencies, plus the devices torch sees."""
    import torch

    report = {"python": platform.python_version()}
    for package in PACKAGES:
        try:
            report[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            report[package] = "not installed"
    report["cuda"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    report["cpu threads"] = str(torch.get_num_threads())
    return report
