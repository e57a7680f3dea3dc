import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from dnabird.cli import main
from dnabird.errors import InputFormatError, ParameterError

ROOT = Path(__file__).resolve().parents[1]


def test_help_lists_every_subcommand_and_each_has_help(capsys):
    """Each module of dnabird/commands is a subcommand that `dnabird --help` lists and that has its own help."""
    commands = sorted(path.stem.replace("_", "-") for path in (ROOT / "dnabird" / "commands").glob("*.py")
                      if path.stem != "__init__")
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    listed = re.findall(r"^    ([a-z][a-z-]*)\s", capsys.readouterr().out, flags=re.MULTILINE)
    assert sorted(listed) == commands
    for command in commands:
        with pytest.raises(SystemExit) as exit_:
            main([command, "--help"])
        assert exit_.value.code == 0
        assert capsys.readouterr().out.startswith(f"usage: dnabird {command}")


def test_python_dash_m_runs_info_and_names_the_cpu_kernels_in_use():
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default")  # torch's kernels capped to no vector extension
    result = subprocess.run([sys.executable, "-m", "dnabird", "info"], capture_output=True, text=True,
                            check=True, env=env)
    assert f"torch: {torch.__version__}" in result.stdout and "python" in result.stdout
    assert "cpu kernels: DEFAULT (ATEN_CPU_CAPABILITY=default)" in result.stdout


def test_no_command_prints_help_and_fails(capsys):
    assert main([]) == 2
    assert "usage" in capsys.readouterr().out


def test_error_messages_name_the_culprit():
    err = InputFormatError("expected 3 columns, got 2", path="peaks.bed", line=7)
    assert str(err) == "peaks.bed, line 7: expected 3 columns, got 2"
    err = ParameterError("block_size", 0, "a positive integer")
    assert "block_size=0" in str(err) and "positive integer" in str(err)
