"""One module per `dnabird` subcommand; see `dnabird.cli`. The helpers below hold the shape they share."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable, Iterable


def add_command(subparsers, name: str, run: Callable[[argparse.Namespace], int | None], help: str | None = None,
                description: str | None = None, **defaults) -> argparse.ArgumentParser:
    """The parser of subcommand `name`, which runs `run(args)` (its exit status; None is 0, and `dnabird.cli.main`
    turns its dnabird errors into exit status 1). Without `help`, `run`'s docstring gives the help (its first
    line) and the description (the rest); `defaults`: more attributes for `args`."""
    if help is None:
        help, _, rest = (inspect.getdoc(run) or "").partition("\n\n")  # no docstrings under python -OO
        description = description or rest or None
    parser = subparsers.add_parser(name, help=help, description=description)
    parser.set_defaults(func=run, **defaults)
    return parser


def add_group(subparsers, name: str, help: str, description: str | None = None):
    """A command `name` made of subcommands (`dnabird NAME COMMAND ...`): the subparsers to add them to."""
    parser = subparsers.add_parser(name, help=help, description=description)
    return parser.add_subparsers(title=f"{name} commands", metavar="COMMAND", required=True)


def options(args: argparse.Namespace, *names: str) -> dict:
    """The parsed values of the options `names` (their dests), as keyword arguments."""
    return {name: getattr(args, name) for name in names}


def add_overrides(parser: argparse.ArgumentParser, example: str | None = None, resume: bool = False) -> None:
    """The trailing `key.sub=value …` arguments that override config values (`example`: shown in the help),
    after `--resume` (continue a training run) when `resume`."""
    if resume:
        parser.add_argument("--resume", action="store_true", help="continue from the newest checkpoint in out_dir")
    parser.add_argument("overrides", nargs="*", metavar="key.sub=value",
                        help="override config values" + (f", e.g. {example}" if example else ""))


def print_token_ids(texts: Iterable[str], encode: Callable[[str, int], list[int]],
                    offsets: Callable[[str], list[tuple[int, int]]] | None = None) -> None:
    """Print one line per text: its ids (`encode(text, number)`, numbered from 1), or with `offsets` (a text's
    token spans) `id:start-end` per token."""
    for number, text in enumerate(texts, start=1):
        ids = encode(text, number)
        if offsets is None:
            print(" ".join(map(str, ids)))
        else:
            print(" ".join(f"{token}:{start}-{end}" for token, (start, end) in zip(ids, offsets(text), strict=True)))
