"""`dnabird run`: bad pipelines and overrides fail with exit code 1 and a message naming file and key."""

from dnabird.cli import main


def test_unknown_key_and_bad_override_are_reported(tmp_path, capsys):
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text("out_dir: out\ntokenizer:\n  vocab_size: 64\n  vocab: 3\n")
    assert main(["run", str(pipeline)]) == 1
    err = capsys.readouterr().err
    assert "p.yaml: tokenizer: unknown key 'vocab'" in err
    pipeline.write_text("out_dir: out\ntokenizer:\n  vocab_size: 64\n")
    assert main(["run", str(pipeline), "tokenizer.vocab_size=many"]) == 1
    assert "tokenizer.vocab_size: expected int, got 'many'" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "missing.yaml")]) == 1
    assert "missing.yaml" in capsys.readouterr().err
