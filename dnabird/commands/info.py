"""`dnabird info`: versions of dnabird and its key dependencies, and the compute devices seen."""

from __future__ import annotations

import argparse
import importlib.metadata
import platform


def environment_report() -> dict[str, str]:
    """Versions of Python, dnabird and the main dependencies, plus the devices torch sees."""
    import torch

    report = {"python": platform.python_version()}
    for package in ("dnabird", "torch", "numpy", "sentencepiece", "pyfaidx", "h5py", "xformers"):
        try:
            report[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            report[package] = "not installed"
    report["cuda"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    report["cpu threads"] = str(torch.get_num_threads())
    return report


def run(args: argparse.Namespace) -> int:
    for key, value in environment_report().items():
        print(f"{key:>14}: {value}")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("info", help="show versions and compute devices")
    parser.set_defaults(func=run)
