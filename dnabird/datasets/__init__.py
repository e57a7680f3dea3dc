"""Built-in data sets: the seeded toy genome that lets every stage run anywhere in minutes."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def generator_sources(generator: str) -> list[Path]:
    """The files a generator's output depends on: every module of its package (`dnabird.datasets.toy` draws
    on `toy_genome`, `toy_chromatin`, … and `writers`), or the module alone outside a package."""
    origin = Path(importlib.util.find_spec(generator).origin)
    return sorted(origin.parent.glob("*.py")) if "." in generator else [origin]
