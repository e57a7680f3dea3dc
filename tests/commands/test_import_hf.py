import json

import pytest
import torch

from dnabird.cli import main
from dnabird.model import load_checkpoint

transformers = pytest.importorskip("transformers")


def test_import_hf_writes_a_loadable_checkpoint(tmp_path, capsys):
    config = transformers.BigBirdConfig(vocab_size=50, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                        intermediate_size=64, max_position_embeddings=256,
                                        attention_type="original_full", hidden_dropout_prob=0.0)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        hf_model = transformers.BigBirdForPreTraining(config).eval()
    hf_model.save_pretrained(tmp_path / "hf")
    assert main(["import-hf", str(tmp_path / "hf"), str(tmp_path / "ckpt")]) == 0
    assert "parameters" in capsys.readouterr().out
    ours = load_checkpoint(tmp_path / "ckpt").eval()
    ids = torch.randint(5, 50, (1, 40), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = hf_model(input_ids=ids).prediction_logits
        torch.testing.assert_close(ours(ids).mlm_logits, expected, rtol=0, atol=1e-4)


def test_import_hf_reports_missing_directory(tmp_path, capsys):
    assert main(["import-hf", str(tmp_path / "absent"), str(tmp_path / "ckpt")]) == 1
    assert "absent" in capsys.readouterr().err


def test_import_hf_takes_a_classifiers_task_options_and_refuses_it_without_them(tmp_path, capsys):
    config = transformers.BigBirdConfig(vocab_size=50, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                        intermediate_size=64, max_position_embeddings=256, num_labels=2,
                                        attention_type="original_full", hidden_dropout_prob=0.0)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        transformers.BigBirdForSequenceClassification(config).save_pretrained(tmp_path / "hf")
    assert main(["import-hf", str(tmp_path / "hf"), str(tmp_path / "ckpt"), "--labels", "a,b"]) == 1
    assert "needs window_bp, anchor" in capsys.readouterr().err and not (tmp_path / "ckpt").exists()
    assert main(["import-hf", str(tmp_path / "hf"), str(tmp_path / "ckpt"), "--labels", "other,promoter",
                 "--window", "300", "--anchor", "centre", "--eval-length", "128"]) == 0
    assert "multiclass classifier with 2 outputs" in capsys.readouterr().out
    task = json.loads((tmp_path / "ckpt" / "task.json").read_text())
    assert (task["labels"], task["window_length"], task["eval_length"], task["strand_rule"]) == \
        (["other", "promoter"], 300, 128, "both")
