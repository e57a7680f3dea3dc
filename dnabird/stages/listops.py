"""Stage `listops`: ListOps classifiers (`dnabird.text.listops`) on the same splits, and one results table.

Each entry of `models` names a run and the settings it changes from `base` (any `ListOpsConfig` key;
`model_overrides` and `train` merge key by key). Data paths left null come from the `listops_data` stage.
`results.txt` is a Markdown table: per model its positional scheme, attention kernel, validation and test
accuracy and training time, then the majority class of the training labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dnabird.config import build_config
from dnabird.errors import ConfigError
from dnabird.pipeline import RunContext, Stage
from dnabird.stages.named_runs import named_settings, run_each
from dnabird.text.listops import ListOpsConfig, train_listops
from dnabird.text.training import resumable


@dataclass
class ListOpsStageConfig:
    """base: `ListOpsConfig` keys shared by every model; models: name -> the keys it changes; seed."""

    base: dict = field(default_factory=dict)
    models: dict = field(default_factory=lambda: {"model": {}})
    seed: int = 0

    def __post_init__(self):
        if not self.models:
            raise ConfigError("listops: models: expected at least one named model")
        self.configs()

    def configs(self, context: RunContext | None = None) -> dict[str, ListOpsConfig]:
        out = {}
        for name, changes in self.models.items():
            merged = named_settings(self.base, name, changes, self.seed, "listops")
            if context is not None:
                data = dict(merged.get("data") or {})
                if data.get("directory") is None:
                    for split in ("train", "validation", "test"):
                        data[split] = data.get(split) or str(context.output("listops_data", split))
                merged["data"] = data
            out[name] = build_config(ListOpsConfig, merged, f"listops: models.{name}")
        return out


def inputs(config: ListOpsStageConfig, context: RunContext) -> list[Path]:
    paths = set()
    for model in config.configs(context).values():
        paths |= {model.data.path(split) for split in ("train", "validation", "test")}
    return sorted(paths)


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


def run(config: ListOpsStageConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    return run_each(config.configs(context), stage_dir,
                    lambda model, out_dir: train_listops(model, resume=resumable(model.train)), results_table)


STAGE = Stage("listops", ListOpsStageConfig, inputs, run)
