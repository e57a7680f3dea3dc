"""`dnabird run`: bad pipelines and overrides fail with exit code 1 and a message naming file and key."""

import yaml

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


def test_print_config_shows_every_stages_defaults_and_runs_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--print-config"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    dna = ["fetch", "corpus", "tokenizer", "shards", "pretrain", "promoter", "promoter_compare", "chromatin",
           "chromatin_compare", "predict", "variants"]
    text = ["text_data", "text_tokenizer", "text_mlm", "text_classify", "text_qa", "text_summarise", "charlm"]
    assert list(printed) == ["out_dir", "seed", *dna, *text, "listops_data", "listops", "labelled_data", "labelled",
                             "compare", "report"]
    # the documented defaults: the paper's 32000-piece vocabulary, GENA-LM's 10 passes, Table 21's model
    assert printed["tokenizer"]["vocab_size"] == 32000 and printed["corpus"]["passes"] == 10
    assert printed["pretrain"]["model"] == "bigbird-base" and printed["pretrain"]["train"]["lr"] == 1e-4
    (tmp_path / "defaults.yaml").write_text(yaml.safe_dump(printed))
    assert main(["run", str(tmp_path / "defaults.yaml"), "--print-config"]) == 0  # accepted again as a pipeline
    assert yaml.safe_load(capsys.readouterr().out) == printed
    assert not (tmp_path / "runs").exists()


def test_print_config_applies_overrides_to_a_pipeline(tmp_path, capsys):
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text(f"out_dir: {tmp_path / 'out'}\ntokenizer:\n  vocab_size: 64\n")
    assert main(["run", str(pipeline), "tokenizer.seed=7", "seed=3", "--print-config"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    assert printed["seed"] == 3 and printed["tokenizer"] == {"vocab_size": 64, "max_piece_length": 16,
                                                               "sample_sentences": 100000,
                                                               "heldout_sentences": 20000, "seed": 7}
    assert list(printed) == ["out_dir", "seed", "tokenizer"] and not (tmp_path / "out").exists()


def test_run_without_a_pipeline_says_what_to_give(capsys):
    assert main(["run"]) == 2
    assert "give a PIPELINE.yaml" in capsys.readouterr().err
