import subprocess
import sys

from dnabird.cli import main
from dnabird.errors import InputFormatError, ParameterError


def test_help_lists_commands(capsys):
    try:
        main(["--help"])
    except SystemExit as exit_:
        assert exit_.code == 0
    out = capsys.readouterr().out
    assert "info" in out


def test_python_dash_m_runs_info():
    result = subprocess.run([sys.executable, "-m", "dnabird", "info"], capture_output=True, text=True,
                            check=True)
    assert "torch" in result.stdout and "python" in result.stdout


def test_no_command_prints_help_and_fails(capsys):
    assert main([]) == 2
    assert "usage" in capsys.readouterr().out


def test_error_messages_name_the_culprit():
    err = InputFormatError("expected 3 columns, got 2", path="peaks.bed", line=7)
    assert str(err) == "peaks.bed, line 7: expected 3 columns, got 2"
    err = ParameterError("block_size", 0, "a positive integer")
    assert "block_size=0" in str(err) and "positive integer" in str(err)
