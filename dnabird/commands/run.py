"""`dnabird run PIPELINE.yaml [key.sub=value ...]`: run a pipeline's stages, skipping those up to date, or
print its resolved config (`--print-config`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from dnabird.commands import add_command, add_overrides
from dnabird.pipeline import default_pipeline, load_pipeline, run_pipeline


def run(args: argparse.Namespace) -> int:
    """run the stages of a pipeline YAML (or print its config)

    Run a pipeline's stages in order, skipping those whose config and inputs are unchanged and resuming an
    interrupted one; outputs, run.json and report.md go to out_dir."""
    if args.pipeline is None and not args.print_config:
        print("dnabird run: give a PIPELINE.yaml (or --print-config for every stage's defaults)", file=sys.stderr)
        return 2
    pipeline = default_pipeline() if args.pipeline is None else load_pipeline(args.pipeline, args.overrides)
    if args.print_config:
        print(yaml.safe_dump(pipeline.resolved(), sort_keys=False), end="")
        return 0
    record = run_pipeline(pipeline, force=args.force)
    for stage in pipeline.stages:  # in run order (run.json sorts its keys)
        state = record["stages"][stage]
        took = f" in {record['seconds'][stage]:.1f} s" if stage in record["seconds"] else ""
        outputs = sorted({str(Path(p) if Path(p).is_dir() else Path(p).parent)
                          for p in record["outputs"][stage].values()})
        print(f"{stage:>10}: {state}{took} -> {', '.join(outputs)}")
    print(f"resolved config, versions and seed: {pipeline.out_dir / 'run.json'}")
    return 0


def register(subparsers) -> None:
    parser = add_command(subparsers, "run", run, resumes_itself=True)
    parser.add_argument("pipeline", nargs="?", help="pipeline YAML, e.g. pipelines/demo.yaml")
    add_overrides(parser, "tokenizer.vocab_size=512 seed=3")
    parser.add_argument("--force", action="append", default=[], metavar="STAGE",
                        help="run STAGE even when it is up to date (repeatable)")
    parser.add_argument("--print-config", action="store_true",
                        help="print the resolved config (defaults filled in, overrides applied) and exit; "
                             "without PIPELINE, every stage's defaults")
