"""Learning-rate schedule: linear warmup to the peak, then linear decay to zero (BERT / BigBird App. F)."""

from __future__ import annotations

from dnabird.errors import reject


def warmup_linear_decay(step: int, *, peak_lr: float, warmup_steps: int, total_steps: int) -> float:
    """LR of 0-based step `step`: ramps to `peak_lr` over `warmup_steps`, reaches 0 at `total_steps`."""
    reject(warmup_steps < 0, "warmup_steps", warmup_steps, "an integer >= 0")
    reject(total_steps < 1, "total_steps", total_steps, "an integer >= 1")
    if step < warmup_steps:
        return peak_lr * (step + 1) / warmup_steps
    return peak_lr * max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))
