"""The notebooks run top to bottom against the shared fixture's run folder (`DNABIRD_DEMO_DIR`), with
their figures; in git they are stored without outputs."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
MIN_FIGURES = {"01_quickstart": 2, "02_attention_patterns": 3, "03_variant_effects": 3}


def test_every_notebook_is_listed_and_stored_without_outputs():
    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    assert [p.stem for p in paths] == sorted(MIN_FIGURES)
    for path in paths:
        book = nbformat.read(path, as_version=4)
        code = [c for c in book.cells if c.cell_type == "code"]
        assert code and all(not c.outputs and c.execution_count is None for c in code), path.name


@pytest.mark.parametrize("name", sorted(MIN_FIGURES))
def test_notebook_runs_top_to_bottom_with_its_figures(name, embedded_default, monkeypatch):
    monkeypatch.setenv("DNABIRD_DEMO_DIR", str(embedded_default.root))
    book = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    NotebookClient(book, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()  # raises on any failing cell
    figures = [o for c in book.cells if c.cell_type == "code" for o in c.outputs
               if "image/png" in o.get("data", {})]
    assert len(figures) >= MIN_FIGURES[name]
