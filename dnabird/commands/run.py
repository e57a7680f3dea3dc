"""`dnabird run PIPELINE.yaml [key.sub=value ...]`: run a pipeline's stages, skipping those up to date."""

from __future__ import annotations

import argparse
from pathlib import Path

from dnabird.pipeline import load_pipeline, run_pipeline


def run(args: argparse.Namespace) -> int:
    pipeline = load_pipeline(args.pipeline, args.overrides)
    record = run_pipeline(pipeline, force=args.force)
    for stage, state in record["stages"].items():
        took = f" in {record['seconds'][stage]:.1f} s" if stage in record["seconds"] else ""
        outputs = sorted({str(Path(p) if Path(p).is_dir() else Path(p).parent)
                          for p in record["outputs"][stage].values()})
        print(f"{stage:>10}: {state}{took} -> {', '.join(outputs)}")
    print(f"resolved config, versions and seed: {pipeline.out_dir / 'run.json'}")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("run", help="run the stages of a pipeline YAML")
    parser.add_argument("pipeline", help="pipeline YAML, e.g. pipelines/demo.yaml")
    parser.add_argument("overrides", nargs="*", metavar="key.sub=value",
                        help="override config values, e.g. tokenizer.vocab_size=512 seed=3")
    parser.add_argument("--force", action="append", default=[], metavar="STAGE",
                        help="run STAGE even when it is up to date (repeatable)")
    parser.set_defaults(func=run)
