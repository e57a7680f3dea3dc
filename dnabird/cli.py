"""The `dnabird` command: a thin argparse tree over the library.

Each subcommand lives in `dnabird/commands/<name>.py` and exposes
`register(subparsers)`, which adds its parser and sets `func` to a callable taking
the parsed arguments. No logic lives here or there beyond parsing and calling.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from dnabird import __version__
from dnabird.errors import DnabirdError, Interrupted
from dnabird.progress import set_quiet

COMMAND_MODULES = tuple(f"dnabird.commands.{name}" for name in (  # in workflow order, as `dnabird --help` lists them
    "fetch", "corpus", "tokenizer", "shards", "pretrain", "evaluate", "finetune", "predict", "score",
    "benchmark_variants", "ism", "embed", "text", "run", "report", "import_hf", "info"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dnabird",
        description="Long-range DNA language modelling with block-sparse BigBird attention.",
    )
    parser.add_argument("--version", action="version", version=f"dnabird {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars, warnings only")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """Parse `argv`; `key.sub=value` words after a command's options join its overrides (argparse alone
    takes positionals only before the options once the command has a positional of its own)."""
    args, extra = parser.parse_known_args(argv)
    options = [word for word in extra if word.startswith("-")]
    if options or (extra and not isinstance(getattr(args, "overrides", None), list)):
        parser.error(f"unrecognized arguments: {' '.join(options or extra)}")
    if extra:
        args.overrides += extra
    return args


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parse(parser, argv)
    level = logging.WARNING if args.quiet else logging.DEBUG if args.verbose else logging.INFO
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    set_quiet(args.quiet)
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except DnabirdError as err:
        print(f"dnabird: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as err:  # Ctrl-C: one line, and the shell's exit status for SIGINT
        print(f"dnabird: interrupted{f' {err}' if str(err) else ''}; {resume_hint(args, err)}", file=sys.stderr)
        return 130


def resume_hint(args: argparse.Namespace, err: KeyboardInterrupt) -> str:
    """What rerunning the interrupted command does: `dnabird run` resumes by itself (`resumes_itself`), a
    command with `--resume` resumes with it; any other starts again (its outputs are written whole)."""
    step = f" from step {err.resume_step}" if isinstance(err, Interrupted) and err.resume_step else ""
    if getattr(args, "resumes_itself", False) or getattr(args, "resume", False):
        return f"rerun the same command to resume{step}"
    if hasattr(args, "resume"):
        return f"rerun the same command with --resume to continue{step or ' from its last checkpoint'}"
    return "rerun the same command to start again"


if __name__ == "__main__":
    raise SystemExit(main())
