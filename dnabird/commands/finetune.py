"""`dnabird finetune TASK --config FILE`: fine-tune a pretrained encoder (or one from scratch) on a task; FILE
may be a pipeline YAML (`dnabird.stages.finetune.from_pipeline`)."""

from __future__ import annotations

import argparse
import dataclasses

from dnabird.commands import add_command, add_overrides
from dnabird.config import read_yaml
from dnabird.errors import ConfigError
from dnabird.tasks import TASKS


def run(args: argparse.Namespace) -> None:
    """fine-tune an encoder: promoter, chromatin, your own labelled data (labelled), text tasks

    Fine-tune a pretrained (or fresh) encoder on a supervised task; writes the selected model with its task.json,
    report.json and plots to the output folder. Tasks: promoter (EPDnew TSS windows), chromatin (DeepSEA's 919
    labels), labelled (your own sequence or region tables, FASTA, BED: docs/own-data.md), text_classification,
    summarise, listops. Overrides name the config's keys: with a task YAML `data.path=my_table.csv`, with a pipeline
    YAML its task's section, `labelled.data.path=my_table.csv`."""
    from dnabird.stages.finetune import from_pipeline
    from dnabird.tasks import finetune, load_config, task

    overrides = list(args.overrides)
    pipeline = args.task in read_yaml(args.config)   # a pipeline file: its TASK section
    prefix = args.task + "." if pipeline else ""
    if pipeline:
        from dnabird.pipeline import PIPELINE_KEYS

        fields = {field.name for field in dataclasses.fields(task(args.task).config)}
        for override in overrides:
            if override.split("=", 1)[0].split(".", 1)[0] in fields - {*read_yaml(args.config), *PIPELINE_KEYS}:
                raise ConfigError(f"{override}: {args.config} is a pipeline YAML, whose {args.task} section holds "
                                  f"the task's keys: write {prefix}{override}")
    if args.pretrained is not None:
        overrides.append(f"{prefix}pretrained={args.pretrained}")
    if args.source is not None:
        if args.task != "chromatin":
            raise ConfigError(f"--source is an option of the chromatin task, not of {args.task!r}")
        overrides.append(f"{prefix}data.source={args.source}")
    config = (from_pipeline if pipeline else load_config)(args.task, args.config, overrides)
    if args.out is not None:
        config = dataclasses.replace(config, train=dataclasses.replace(config.train, out_dir=args.out))
    finetune(args.task, config, resume=args.resume)


def register(subparsers) -> None:
    parser = add_command(subparsers, "finetune", run)
    parser.add_argument("task", choices=sorted(TASKS), help="the task")
    parser.add_argument("--config", required=True, help="task config YAML, or a pipeline YAML with a TASK section")
    parser.add_argument("--pretrained", help="pretrained checkpoint directory, or 'none' to train from scratch")
    parser.add_argument("--source", choices=("bundle", "windows"),
                        help="chromatin: the .mat bundle's 1000-bp rows, or windows of the genome around each bin")
    parser.add_argument("--out", help="output folder (default: train.out_dir, or the pipeline's OUT_DIR/TASK)")
    add_overrides(parser, "train.lr=1e-4, or with a pipeline YAML labelled.train.lr=1e-4", resume=True)
