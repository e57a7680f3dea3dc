"""Every Python block of README.md and docs/*.md runs, against the embedded-default fixture's run folder
(linked as `runs/demo`, the demo's own layout), in a fresh namespace and an empty working directory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _blocks() -> list:
    found = []
    for page in PAGES:
        text = page.read_text()
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(pytest.param(match.group(1), id=f"{page.relative_to(ROOT)}:{line}"))
    return found


def test_the_pages_have_python_blocks():
    assert len(_blocks()) >= 5


@pytest.mark.parametrize("code", _blocks())
def test_python_block_runs(code, embedded_default, tmp_path, monkeypatch):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "demo").symlink_to(embedded_default.root, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "<snippet>", "exec"), {"__name__": "__snippet__"})
