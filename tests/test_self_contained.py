"""The project's files stand alone: every Markdown file they name is in the repository."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ["README.md", "Makefile", "pyproject.toml", "dnabird", "tests", "benchmarks", "pipelines",
           "data_manifests"]
MARKDOWN_NAME = re.compile(r"[A-Za-z0-9_./-]+\.md\b")
# what the `report` stage writes into a run folder and benchmarks/gpu_check.py's usual `--out`: outputs, not documents
GENERATED = {"report.md", "gpu_check.md"}


def scanned_files():
    for entry in SCANNED:
        path = ROOT / entry
        yield from (sorted(p for p in path.rglob("*") if p.suffix in (".py", ".md", ".yaml", ".toml"))
                    if path.is_dir() else [path])


def test_every_markdown_file_named_exists():
    present = {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.md")
               if not {".venv", "runs"} & set(p.relative_to(ROOT).parts)}
    missing = []
    for path in scanned_files():
        for name in MARKDOWN_NAME.findall(path.read_text(errors="replace")):
            if name.rsplit("/", 1)[-1] not in GENERATED and not any(p == name or p.endswith("/" + name)
                                                                      for p in present):
                missing.append(f"{path.relative_to(ROOT)}: {name}")
    assert not missing, f"files named but not in the repository: {missing}"
