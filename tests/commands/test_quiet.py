"""Progress bars: each long command draws one on a terminal, `dnabird -q` silences them all, and no module
draws a bar except through `dnabird.progress` (so the switch reaches every loop, the training loop included)."""

import io
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from dnabird.cli import main
from dnabird.progress import progress_bar, set_quiet

PACKAGE = Path(__file__).resolve().parents[2] / "dnabird"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch):
    """A terminal for stderr, swapped in by the test itself (pytest's capture resets sys.stderr after setup)."""
    def swap() -> Terminal:
        monkeypatch.setattr(sys, "stderr", Terminal())
        return sys.stderr

    yield swap
    set_quiet(False)


def stderr_of(terminal: Terminal, *argv) -> str:
    terminal.seek(0)
    terminal.truncate()
    assert main([str(a) for a in argv]) == 0, terminal.getvalue()
    return terminal.getvalue()


def test_each_long_command_draws_a_bar_that_quiet_silences(tmp_path, terminal, embedded_default):
    terminal = terminal()
    rng = np.random.default_rng(0)
    genome = {name: "".join(rng.choice(list("ACGT"), size=size)) for name, size in (("chr1", 20000), ("chr8", 6000))}
    (tmp_path / "g.fa").write_text("".join(f">{name}\n{seq}\n" for name, seq in genome.items()))
    steps = [
        ("corpus", ["corpus", "--fasta", tmp_path / "g.fa", "--out", tmp_path / "corpus", "--passes", "1",
                    "--document-sentences", "2", "4", "--held-out", "chr8"]),
        ("tokenizer sample", ["tokenizer", "train", tmp_path / "corpus", "--out", tmp_path / "dna.model",
                              "--vocab-size", "40", "--heldout-sentences", "3"]),
        ("shards train", ["shards", tmp_path / "corpus", "--tokenizer", tmp_path / "dna.model",
                          "--out", tmp_path / "shards"]),
        ("evaluate", ["evaluate", embedded_default.checkpoint, "--shards", embedded_default.heldout_shards,
                      "--examples", "2", "--batch-size", "2", "--max-length", "128"]),
        ("toy genome", ["fetch", "toy", "--dest", tmp_path / "toy"]),
    ]
    for bar, argv in steps:
        drawn = stderr_of(terminal, *argv)
        assert re.search(rf"\r{bar}: ", drawn), f"no {bar!r} bar in: {drawn[-500:]}"
        assert stderr_of(terminal, "-q", *argv) == ""


def test_quiet_disables_bars_asked_for_and_nothing_else_draws_one(terminal):
    terminal()
    assert not progress_bar(range(3)).disable
    assert progress_bar(range(3), enabled=False).disable
    set_quiet(True)
    assert progress_bar(range(3)).disable
    direct = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
              if p.name != "progress.py" and re.search(r"^\s*(from tqdm|import tqdm)", p.read_text(), re.MULTILINE)]
    assert direct == []
