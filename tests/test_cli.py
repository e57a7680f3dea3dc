import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from dnabird.cli import main
from dnabird.errors import InputFormatError, ParameterError

WORKFLOW = ["fetch", "corpus", "tokenizer", "shards", "pretrain", "evaluate", "finetune", "predict", "score",
            "benchmark-variants", "ism", "embed", "text", "run", "report", "import-hf", "info"]


def test_help_lists_every_command_in_workflow_order(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    listed = re.findall(r"^    (\S+)(?: |$)", capsys.readouterr().out, flags=re.MULTILINE)  # a long name: help below
    assert listed == WORKFLOW


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


def test_evaluate_names_a_missing_checkpoint_and_a_bad_device(tmp_path, capsys):
    assert main(["evaluate", str(tmp_path / "runs" / "model"), "--shards", str(tmp_path)]) == 1
    assert f"{tmp_path / 'runs' / 'model'}: checkpoint directory not found" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["evaluate", str(tmp_path / "empty"), "--shards", str(tmp_path)]) == 1
    assert f"{tmp_path / 'empty' / 'config.json'}: missing from the checkpoint directory" in capsys.readouterr().err
    assert main(["evaluate", str(tmp_path / "empty"), "--shards", str(tmp_path), "--device", "gpu"]) == 1
    assert "device='gpu' is invalid: expected one of auto, cpu, cuda" in capsys.readouterr().err


def test_overrides_may_follow_a_commands_options(capsys):
    from dnabird.cli import build_parser, parse

    parser = build_parser()
    args = parse(parser, ["finetune", "promoter", "--config", "c.yaml", "a.b=1", "--resume", "c=2"])
    assert (args.task, args.config, args.resume, args.overrides) == ("promoter", "c.yaml", True, ["a.b=1", "c=2"])
    args = parse(parser, ["run", "p.yaml", "--force", "corpus", "seed=3"])
    assert (args.force, args.overrides) == (["corpus"], ["seed=3"])
    with pytest.raises(SystemExit):
        parse(parser, ["finetune", "promoter", "--config", "c.yaml", "a=1", "--bogus"])
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse(parser, ["info", "x=1"])


def test_every_command_describes_itself_in_its_help(capsys):
    for command in WORKFLOW:
        with pytest.raises(SystemExit):
            main([command, "--help"])
        usage, _, rest = capsys.readouterr().out.partition("\n\n")
        assert rest.split("\n")[0] and not rest.startswith(("positional arguments", "options")), command


def test_ctrl_c_prints_one_line_and_exits_130(monkeypatch, capsys):
    from dnabird.commands import info, run
    from dnabird.errors import Interrupted

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(info, "run", interrupted)
    assert main(["info"]) == 130
    assert capsys.readouterr().err == "dnabird: interrupted; rerun the same command to start again\n"

    def stopped_training(args):
        raise Interrupted("during step 57 of 100 (last checkpoint: step 50)", 50)

    monkeypatch.setattr(run, "run", stopped_training)
    assert main(["run", "pipeline.yaml"]) == 130
    assert capsys.readouterr().err == ("dnabird: interrupted during step 57 of 100 (last checkpoint: step 50); "
                                       "rerun the same command to resume from step 50\n")


def test_finetune_with_a_pipeline_yaml_asks_for_the_tasks_section_in_an_override(capsys):
    pipeline = Path(__file__).parents[1] / "pipelines" / "labelled.yaml"
    assert main(["finetune", "labelled", "--config", str(pipeline), "data.path=my.csv", "seed=1"]) == 1
    assert (f"data.path=my.csv: {pipeline} is a pipeline YAML, whose labelled section holds the task's keys: "
            "write labelled.data.path=my.csv") in capsys.readouterr().err
