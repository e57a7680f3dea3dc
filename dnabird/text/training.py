"""What the text recipes share around the one recipe shell (`dnabird.train.recipe`): batched evaluation, and
the rows their comparison tables share."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from dnabird.finetune.report import MODEL_ROW
from dnabird.progress import progress_bar
from dnabird.train.data import stack_examples


def device_batches(examples, count: int, batch_size: int, device, desc: str) -> Iterator[tuple[range, dict]]:
    """(rows, their stacked batch on `device`) for examples 0…count−1, `batch_size` at a time, with a progress bar."""
    for start in progress_bar(range(0, count, batch_size), desc=desc, unit=" batches"):
        rows = range(start, min(count, start + batch_size))
        yield rows, {k: v.to(device) for k, v in stack_examples([examples[i] for i in rows]).items()}



def model_rows(reports: dict[str, dict], seconds: dict[str, float], settings: dict, validation: Callable,
               scores: Callable, extra: Callable = lambda config: ()) -> list[str]:
    """Each text model's table row: its name, attention, input tokens and `extra(config)`, the selected step and
    `validation(report)`, then `scores(its test row)` (the test cells) and its wall time."""
    rows = []
    for name, report in reports.items():
        config, value = settings[name], validation(report)
        attention = config.model_overrides.get("attention", {}).get("type", config.model)
        rows.append(" | ".join([f"| {name}", attention, str(config.data.max_length), *extra(config),
                                str(report["selection"]["step"]), "n/a" if value is None else f"{value:.3f}",
                                scores(report["test"]["rows"][MODEL_ROW]), f"{seconds[name]:.0f} |"]))
    return rows
