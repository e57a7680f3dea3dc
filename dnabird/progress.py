"""Progress bars: every long loop in dnabird draws its bar through `progress_bar`, so one switch silences all.

A bar is drawn when its caller asks for one (`enabled`), the process is not quiet (`set_quiet`, which
`dnabird -q` calls) and stderr is a terminal.
"""

from __future__ import annotations

from collections.abc import Iterable

from tqdm import tqdm

_quiet = False


def set_quiet(quiet: bool) -> None:
    """Silence (True) or allow (False) every progress bar of this process."""
    global _quiet
    _quiet = bool(quiet)


def progress_bar(iterable: Iterable | None = None, *, enabled: bool = True, **options) -> tqdm:
    """A tqdm bar over `iterable` (or updated by hand, given `total=`); `options` go to tqdm."""
    return tqdm(iterable, disable=True if _quiet or not enabled else None, **options)
