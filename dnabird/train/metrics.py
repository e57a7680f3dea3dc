"""Training metrics: an append-only JSONL log that survives resume, and the learning-curve PNG."""

from __future__ import annotations

import json
from pathlib import Path

from dnabird.io import atomic_output, write_text_atomic


class MetricsLog:
    """`metrics.jsonl`, one JSON object per logged step.

    Resuming from step S first drops records with `step > S` (written after the checkpoint by a run
    that was killed), so the file always describes one uninterrupted run.
    """

    def __init__(self, path: Path, *, resume_step: int | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if resume_step is None:
            self.path.write_text("")
        elif self.path.exists():
            kept = [line for line in self.path.read_text().splitlines()
                    if line.strip() and json.loads(line)["step"] <= resume_step]
            write_text_atomic(self.path, "".join(line + "\n" for line in kept))

    def append(self, record: dict) -> None:
        with self.path.open("a") as handle:
            handle.write(json.dumps(record) + "\n")
            handle.flush()

    def records(self) -> list[dict]:
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]


def plot_learning_curve(records: list[dict], path: Path, keys: tuple[str, ...] = ("loss",)) -> Path:
    """Plot each key of `records` against `step` (one panel per key) to a PNG; written atomically."""
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

    keys = tuple(k for k in keys if any(k in r for r in records))
    fig = Figure(figsize=(4.5 * max(1, len(keys)), 3.5))
    axes = fig.subplots(1, max(1, len(keys)), squeeze=False)
    for ax, key in zip(axes[0], keys, strict=False):
        points = [(r["step"], r[key]) for r in records if key in r]
        ax.plot([s for s, _ in points], [v for _, v in points])
        ax.set_xlabel("optimizer step")
        ax.set_title(key)
        ax.grid(alpha=0.3)
    save_png(fig, path)
    return path


def save_png(fig, path, dpi: int = 100) -> None:
    """Lay out a matplotlib `Figure` and write it to `path` as a PNG, atomically."""
    fig.tight_layout()
    with atomic_output(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi)
