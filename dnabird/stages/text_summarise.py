"""Stage `text_summarise`: several summarisation models on the same splits, and one results table.

Each entry of `models` names a run and the settings it changes from `base` (any `SummariseConfig` key, e.g.
`data.max_length` for a truncated encoder, `model_overrides` for the attention pattern); every run goes through
the `summarise` task (`dnabird.text.summarise_task`) into `<stage>/<name>/`, resuming from its checkpoints when
interrupted. Null paths come from the `text_data` stage (its summarisation task) and the `text_tokenizer`
stage. `results.json` and `results.txt` (a Markdown table) hold per model its encoder's attention and length,
the selected step and its validation ROUGE-L, its test ROUGE-1/2/L with 95 % bootstrap intervals and its wall
time, then the lead-k baseline on the same test documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dnabird.config import build_config
from dnabird.errors import ConfigError
from dnabird.pipeline import RunContext, Stage
from dnabird.stages.named_runs import named_settings, run_each
from dnabird.text.summarise_task import MODEL_ROW, SPLITS, SummariseConfig, rouge_cell


@dataclass
class TextSummariseStageConfig:
    """base: `SummariseConfig` keys shared by every model; models: name -> the keys that model changes;
    seed: every model's seed."""

    base: dict = field(default_factory=dict)
    models: dict = field(default_factory=lambda: {"model": {}})
    seed: int = 0

    def __post_init__(self):
        if not self.models:
            raise ConfigError("text_summarise: models: expected at least one named model")
        self.configs()  # every model's settings fail here, when the pipeline loads

    def configs(self, context: RunContext | None = None) -> dict[str, SummariseConfig]:
        out = {}
        for name, changes in self.models.items():
            merged = named_settings(self.base, name, changes, self.seed, "text_summarise")
            if context is not None:
                data = dict(merged.get("data") or {})
                for split in SPLITS:
                    data[split] = data.get(split) or str(context.output("text_data", f"summaries_{split}"))
                merged["data"] = data
                merged["tokenizer"] = merged.get("tokenizer") or str(context.output("text_tokenizer", "model"))
            out[name] = build_config(SummariseConfig, merged, f"text_summarise: models.{name}")
        return out


def inputs(config: TextSummariseStageConfig, context: RunContext) -> list[Path]:
    paths = set()
    for model in config.configs(context).values():
        paths |= {*(getattr(model.data, split) for split in SPLITS), model.tokenizer}
        if model.pretrained != "none":
            paths.add(model.pretrained)
    return sorted(Path(p) for p in paths if p is not None)


def results_table(reports: dict[str, dict], seconds: dict[str, float], settings: dict[str, SummariseConfig]) -> str:
    """A Markdown table: each model's test ROUGE-1/2/L (95 % intervals), then the lead-k baseline."""
    lines = ["| model | attention | encoder tokens | selected step | validation ROUGE-L | test ROUGE-1 | "
             "test ROUGE-2 | test ROUGE-L | wall time (s) |", "|---|---|---|---|---|---|---|---|---|"]
    for name, report in reports.items():
        config = settings[name]
        attention = config.model_overrides.get("attention", {}).get("type", config.model)
        row = report["test"]["rows"][MODEL_ROW]
        validation = report["selection"]["value"]
        lines.append(f"| {name} | {attention} | {config.data.max_length} | {report['selection']['step']} | "
                     f"{'n/a' if validation is None else f'{validation:.3f}'} | "
                     + " | ".join(rouge_cell(row, t) for t in ("rouge1", "rouge2", "rougeL"))
                     + f" | {seconds[name]:.0f} |")
    first = next(iter(reports.values()))
    for scorer, row in first["test"]["rows"].items():
        if scorer != MODEL_ROW:
            lines.append(f"| {scorer} | — | — | — | — | " + " | ".join(rouge_cell(row, t) for t in ("rouge1", "rouge2",
                                                                                            "rougeL")) + " | — |")
    return "\n".join(lines)


def run(config: TextSummariseStageConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    from dnabird.text.summarise_task import finetune

    def train_one(model: SummariseConfig, out_dir: Path) -> dict:
        resume = (out_dir / "checkpoints").is_dir() and any((out_dir / "checkpoints").glob("step_*"))
        return finetune(model, resume=resume)

    return run_each(config.configs(context), stage_dir, train_one, results_table)


STAGE = Stage("text_summarise", TextSummariseStageConfig, inputs, run)
