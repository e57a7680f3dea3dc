"""`dnabird report --results FILE RUN_DIR ...`: the results page of finished runs (docs/results.md)."""

from __future__ import annotations

import argparse
import shlex

from dnabird.commands import add_command
from dnabird.io import write_text_atomic


def run(args: argparse.Namespace) -> None:
    """write the results page of finished runs

    Write one Markdown page with the headline figures of finished `dnabird run` folders, read from their records:
    runs of one pipeline are grouped, several seeds give mean and range."""
    from dnabird.results import render_results

    command = "dnabird report --results " + shlex.join([args.results, *args.runs])
    text = render_results(args.runs, command=command)
    write_text_atomic(args.results, text)
    print(f"wrote {args.results} ({len(args.runs)} runs)")


def register(subparsers) -> None:
    parser = add_command(subparsers, "report", run)
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run folders (each with run.json)")
    parser.add_argument("--results", required=True, metavar="FILE", help="the page to write, e.g. docs/results.md")
