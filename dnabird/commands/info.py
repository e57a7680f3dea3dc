"""`dnabird info`: versions of dnabird and its key dependencies, and the compute devices seen."""

from __future__ import annotations

import argparse

from dnabird.commands import add_command
from dnabird.provenance import versions


def run(args: argparse.Namespace) -> None:
    """show versions and compute devices

    Print the versions of dnabird and its key dependencies, and the compute devices torch sees."""
    for key, value in versions().items():
        print(f"{key:>14}: {value}")


def register(subparsers) -> None:
    add_command(subparsers, "info", run)
