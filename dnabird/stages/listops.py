"""Stage `listops`: ListOps classifiers (`dnabird.text.listops`) on the `listops_data` splits, one results table.

A `compare` stage (`dnabird.stages.compare`) with task `listops`; `results.txt` holds per model its positional
scheme, attention kernel, validation and test accuracy and training time, then the majority class.
"""

from __future__ import annotations

from dnabird.pipeline import RunContext
from dnabird.stages import filled, resuming
from dnabird.stages.compare import Track, named_models_stage
from dnabird.text.listops import ListOpsConfig, train_listops

SPLITS = ("train", "validation", "test")


def resolve(config: ListOpsConfig, context: RunContext, out_dir=None) -> ListOpsConfig:
    """Null splits from the `listops_data` stage, unless `data.directory` holds them."""
    splits = {} if config.data.directory is not None else {f"data.{split}": ("listops_data", split) for split in SPLITS}
    return filled(config, context, out_dir, splits)


def describe(config: ListOpsConfig) -> tuple[str, str]:
    """(positional scheme, kernel) of a run, e.g. ("sine SPE, gated", "performer")."""
    model = config.encoder()
    positional = model.positional
    if positional == "spe":
        spe = model.spe_spec()
        positional = f"{spe.kind}SPE R={spe.realizations}" + (", gated" if spe.gated else "")
    attention = model.attention["type"]
    if attention == "bigbird_itc":
        attention += f" b={model.attention.get('block_size')}"
    return positional, attention


def results_table(reports: dict, seconds: dict, settings: dict) -> str:
    lines = ["| model | positions | attention | validation accuracy | test accuracy | train time (s) |",
             "|---|---|---|---|---|---|"]
    for name, report in reports.items():
        positional, attention = describe(settings[name])
        lines.append(f"| {name} | {positional} | {attention} | {report['validation']['model']['accuracy']:.3f} | "
                     f"{report['test']['model']['accuracy']:.3f} | {seconds[name]:.0f} |")
    first = next(iter(reports.values()))
    lines.append(f"| majority class (of train) | — | — | {first['validation']['majority_class']['accuracy']:.3f} | "
                 f"{first['test']['majority_class']['accuracy']:.3f} | — |")
    return "\n".join(lines)


TRACK = Track(ListOpsConfig, resolve, lambda config, context: [config.data.path(split) for split in SPLITS],
              resuming(train_listops), results_table)
STAGE = named_models_stage("listops", "listops", ListOpsConfig)
