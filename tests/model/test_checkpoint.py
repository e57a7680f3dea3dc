import dataclasses
import json
import os
import stat

import pytest
import torch
from safetensors.torch import load_file, save_file

from dnabird.errors import CheckpointError
from dnabird.model import (
    PretrainingModel,
    SequenceClassifier,
    TaskSpec,
    load_checkpoint,
    load_encoder_for_finetuning,
    save_checkpoint,
    tiny,
)
from dnabird.model.checkpoint import read_config

CONFIG = tiny(num_layers=1, hidden_size=32, num_heads=2, intermediate_size=64, vocab_size=64,
              max_positions=512,
              attention={"type": "bigbird_itc", "block_size": 16, "window_blocks": 3,
                         "num_random_blocks": 1, "random_mode": "uniform"})


def _inputs():
    ids = torch.randint(5, 64, (2, 150), generator=torch.Generator().manual_seed(0))
    mask = torch.ones(2, 150, dtype=torch.bool)
    mask[1, 120:] = False
    return ids, mask


@pytest.fixture
def saved(tmp_path):
    model = PretrainingModel(CONFIG, seed=3).eval()
    (tmp_path / "tokenizer.model").write_bytes(b"spm")
    save_checkpoint(model, tmp_path / "ckpt", tokenizer_files=[tmp_path / "tokenizer.model"])
    return model, tmp_path / "ckpt"


def test_round_trip_gives_identical_outputs(saved):
    model, directory = saved
    names = sorted(p.name for p in directory.iterdir())
    assert names == ["config.json", "model.safetensors", "tokenizer.model"]
    loaded = load_checkpoint(directory).eval()
    ids, mask = _inputs()
    with torch.no_grad():
        a, b = model(ids, mask), loaded(ids, mask)
    assert torch.equal(a.mlm_logits, b.mlm_logits) and torch.equal(a.nsp_logits, b.nsp_logits)
    # a differently seeded model really differs, so equality above is not vacuous
    with torch.no_grad():
        assert not torch.equal(PretrainingModel(CONFIG, seed=4).eval()(ids, mask).mlm_logits, a.mlm_logits)


def test_overwrite_is_atomic_and_leaves_no_temporaries(saved):
    model, directory = saved
    save_checkpoint(model, directory)
    assert sorted(p.name for p in directory.parent.iterdir()) == ["ckpt", "tokenizer.model"]


def test_missing_files(saved, tmp_path):
    _, directory = saved
    with pytest.raises(CheckpointError, match="nowhere"):
        load_checkpoint(tmp_path / "nowhere")
    (directory / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="model.safetensors"):
        load_checkpoint(directory)
    (directory / "config.json").unlink()
    with pytest.raises(CheckpointError, match="config.json"):
        load_checkpoint(directory)


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_corrupt_weights(saved, damage):
    _, directory = saved
    path = directory / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"\x00\x01garbage" * 10)
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        load_checkpoint(directory)


def test_shape_mismatch_names_tensor(saved):
    _, directory = saved
    tensors = load_file(directory / "model.safetensors")
    tensors["encoder.layers.0.ffn_in.weight"] = torch.zeros(65, 32)
    save_file(tensors, directory / "model.safetensors")
    with pytest.raises(CheckpointError, match=r"encoder\.layers\.0\.ffn_in\.weight.*\(65, 32\).*\(64, 32\)"):
        load_checkpoint(directory)


def test_missing_and_unexpected_keys_are_listed(saved):
    _, directory = saved
    tensors = load_file(directory / "model.safetensors")
    del tensors["nsp.bias"]
    tensors["extra.weight"] = torch.zeros(2)
    save_file(tensors, directory / "model.safetensors")
    expected = r"missing keys \['nsp.bias'\].*unexpected keys \['extra.weight'\]"
    with pytest.raises(CheckpointError, match=expected):
        load_checkpoint(directory)


def test_invalid_config_json(saved):
    _, directory = saved
    data = json.loads((directory / "config.json").read_text())
    data["layers"] = 3
    (directory / "config.json").write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match="layers"):
        load_checkpoint(directory)


def test_finetuning_load_reports_loaded_dropped_initialised(saved, tmp_path):
    model, directory = saved
    task = TaskSpec(task="promoter", problem="binary", labels=["promoter"], eval_length=160)
    classifier, report = load_encoder_for_finetuning(directory, head=task, seed=1)
    assert set(report.dropped) == {"mlm.bias", "mlm.transform.weight", "mlm.transform.bias",
                                   "mlm.norm.weight", "mlm.norm.bias", "nsp.weight", "nsp.bias"}
    assert set(report.initialised) == {"classifier.weight", "classifier.bias"}
    assert all(k.startswith("encoder.") for k in report.loaded)
    assert len(report.loaded) == len(model.encoder.state_dict())
    for name, tensor in model.encoder.state_dict().items():
        assert torch.equal(classifier.encoder.state_dict()[name], tensor)
    # the fine-tuned model saves with its task.json and loads back as a classifier
    save_checkpoint(classifier, tmp_path / "tuned", task=task)
    reloaded = load_checkpoint(tmp_path / "tuned")
    assert isinstance(reloaded, SequenceClassifier) and reloaded.problem == "binary"
    ids, mask = _inputs()
    with torch.no_grad():
        assert torch.equal(reloaded.eval()(ids, mask).logits, classifier.eval()(ids, mask).logits)
    stored = read_config(directory)
    dropped_out, _ = load_encoder_for_finetuning(directory, head=task, seed=1,
                                                 config=dataclasses.replace(stored, dropout=0.3))
    assert dropped_out.config.dropout == 0.3 and dropped_out.dropout.p == 0.3
    assert torch.equal(dropped_out.classifier.weight, classifier.classifier.weight)
    with pytest.raises(CheckpointError, match="shape"):   # a field that changes the weights cannot be overridden
        load_encoder_for_finetuning(directory, head=task, config=dataclasses.replace(stored, intermediate_size=48))


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_written_files_and_folders_follow_the_umask(tmp_path, umask):
    previous = os.umask(umask)
    try:
        directory = save_checkpoint(PretrainingModel(CONFIG), tmp_path / "model")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o777 & ~umask
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in directory.iterdir()} == {
        "config.json": 0o666 & ~umask, "model.safetensors": 0o666 & ~umask}


def test_a_fine_tuned_checkpoint_without_task_json_names_the_missing_file(tmp_path):
    task = TaskSpec(task="stub", problem="multilabel", labels=["a", "b"], eval_length=64)
    directory = save_checkpoint(SequenceClassifier(CONFIG, 2, problem="multilabel"), tmp_path / "head", task=task)
    (directory / "task.json").unlink()
    with pytest.raises(CheckpointError, match=r"task.json: missing: the weights hold a fine-tuned head \(classifier"):
        load_checkpoint(directory)


def test_read_tokenizer_with_a_task_tokenizer_class_reads_the_one_model_file(tmp_path):
    from dnabird.data.text_tokenizer import TextTokenizer
    from dnabird.model.checkpoint import read_tokenizer

    lines = [f"the {word} fox jumps over the lazy dog {i}" for i, word in enumerate(["quick", "slow", "red"] * 40)]
    trained = TextTokenizer.train(lines, tmp_path / "ckpt" / "text.model", vocab_size=300, sample_size=100,
                                  num_threads=1)
    read = read_tokenizer(tmp_path / "ckpt", TextTokenizer)
    assert isinstance(read, TextTokenizer) and read.hash == trained.hash
    assert read.path == tmp_path / "ckpt" / "text.model"
    (tmp_path / "ckpt" / "second.model").write_bytes((tmp_path / "ckpt" / "text.model").read_bytes())
    with pytest.raises(CheckpointError, match="expected one tokenizer .model file, found 2"):
        read_tokenizer(tmp_path / "ckpt", TextTokenizer)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="found 0"):
        read_tokenizer(tmp_path / "empty", TextTokenizer)
