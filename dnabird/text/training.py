"""What the text recipes share around the one recipe shell (`dnabird.train.recipe`): batched evaluation."""

from __future__ import annotations

from collections.abc import Iterator

from dnabird.progress import progress_bar
from dnabird.train.data import stack_examples


def device_batches(examples, count: int, batch_size: int, device, desc: str) -> Iterator[tuple[range, dict]]:
    """(rows, their stacked batch on `device`) for examples 0…count−1, `batch_size` at a time, with a progress bar."""
    for start in progress_bar(range(0, count, batch_size), desc=desc, unit=" batches"):
        rows = range(start, min(count, start + batch_size))
        yield rows, {k: v.to(device) for k, v in stack_examples([examples[i] for i in rows]).items()}

