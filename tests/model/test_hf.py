"""Hugging Face BigBird import/export, with output parity through `save_pretrained` directories."""

import dataclasses
import json
import logging

import pytest
import torch

from dnabird.errors import CheckpointError, ConfigError
from dnabird.model import Encoder, from_hf_bigbird, to_hf_bigbird

transformers = pytest.importorskip("transformers")
from transformers import BigBirdConfig, BigBirdForMaskedLM, BigBirdForPreTraining, BigBirdModel  # noqa: E402


def hf_config(attention_type, attention_dropout=0.0, max_positions=2048):
    return BigBirdConfig(vocab_size=120, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=128, max_position_embeddings=max_positions, hidden_dropout_prob=0.0,
                         attention_probs_dropout_prob=attention_dropout, attention_type=attention_type,
                         block_size=64, num_random_blocks=3, initializer_range=0.1)


def build(cls, attention_type, seed=0, attention_dropout=0.0, max_positions=2048):
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return cls(hf_config(attention_type, attention_dropout, max_positions))


def inputs(length, padded_from):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(5, 120, (2, length), generator=g)
    mask = torch.ones(2, length, dtype=torch.long)
    mask[1, padded_from:] = 0
    ids[1, padded_from:] = 0
    segments = torch.zeros_like(ids)
    segments[:, length // 2:] = 1
    return ids, mask, segments


def compare(hf_model, ours, length, padded_from, train):
    ids, mask, segments = inputs(length, padded_from)
    hf_model.train(train)
    ours.train(train)
    with torch.no_grad():
        hf_out = hf_model(input_ids=ids, attention_mask=mask, token_type_ids=segments)
        hf_hidden = hf_model.bert(input_ids=ids, attention_mask=mask, token_type_ids=segments).last_hidden_state
        hidden = ours.encoder(ids, mask, segments)
        out = ours(ids, mask, segments)
    real = mask.bool()
    assert hf_hidden.shape == hidden.shape
    torch.testing.assert_close(hidden[real], hf_hidden[real], rtol=0, atol=1e-4)
    torch.testing.assert_close(out.mlm_logits[real], hf_out.prediction_logits[real], rtol=0, atol=1e-4)
    torch.testing.assert_close(out.nsp_logits, hf_out.seq_relationship_logits, rtol=0, atol=1e-4)
    return hidden, hf_hidden


def test_original_full_parity_in_eval(tmp_path):
    hf_model = build(BigBirdForPreTraining, "original_full")
    hf_model.save_pretrained(tmp_path)
    stored = set(json.loads((tmp_path / "config.json").read_text()))
    assert "attention_type" in stored
    ours = from_hf_bigbird(tmp_path)
    assert ours.config.pattern().type_name == "full"
    compare(hf_model, ours, 300, 250, train=False)


def test_block_sparse_parity_in_train_mode(tmp_path):
    """Train mode (HF's eval puts every random block at 0), dropout 0, same random tables, 1436 tokens."""
    hf_model = build(BigBirdForPreTraining, "block_sparse")
    hf_model.save_pretrained(tmp_path)
    ours = from_hf_bigbird(tmp_path)
    assert ours.config.attention["random_mode"] == "hf"
    hidden, _ = compare(hf_model, ours, 1436, 1200, train=True)
    # the same weights under uniform random blocks differ, so the match depends on the tables
    uniform = Encoder(dataclasses.replace(ours.config, attention={**ours.config.attention, "random_mode": "uniform"}))
    uniform.load_state_dict(ours.encoder.state_dict())
    with torch.no_grad():
        ids, mask, segments = inputs(1436, 1200)
        other = uniform.train()(ids, mask, segments)
    assert (other - hidden)[mask.bool()].abs().max() > 1e-3


def test_block_sparse_applies_no_attention_dropout_like_transformers(tmp_path):
    """transformers' block-sparse path ignores attention_probs_dropout_prob; the import does too."""
    hf_model = build(BigBirdForPreTraining, "block_sparse", attention_dropout=0.5)
    hf_model.save_pretrained(tmp_path)
    ours = from_hf_bigbird(tmp_path)
    assert ours.config.attention_dropout == 0.0
    compare(hf_model, ours, 1436, 1200, train=True)  # train mode: any attention dropout would break parity
    full = from_hf_bigbird(build(BigBirdForPreTraining, "original_full", attention_dropout=0.5))
    assert full.config.attention_dropout == 0.5


@pytest.mark.parametrize("cls", [BigBirdForMaskedLM, BigBirdModel])
def test_import_from_objects_without_all_heads(cls):
    hf_model = build(cls, "original_full").eval()
    ours = from_hf_bigbird(hf_model).eval()
    ids, mask, segments = inputs(200, 150)
    base = hf_model if cls is BigBirdModel else hf_model.bert
    with torch.no_grad():
        expected = base(input_ids=ids, attention_mask=mask, token_type_ids=segments).last_hidden_state
        hidden = ours.encoder(ids, mask, segments)
    real = mask.bool()
    torch.testing.assert_close(hidden[real], expected[real], rtol=0, atol=1e-4)
    if cls is BigBirdForMaskedLM:
        with torch.no_grad():
            logits = hf_model(input_ids=ids, attention_mask=mask, token_type_ids=segments).logits
        torch.testing.assert_close(ours(ids, mask, segments).mlm_logits[real], logits[real], rtol=0, atol=1e-4)


def logit_difference(hf_model, ours, length, train):
    """Largest |logit| difference on one unpadded sequence of `length` tokens."""
    ids = torch.randint(5, 120, (1, length), generator=torch.Generator().manual_seed(2))
    hf_model.train(train)
    ours.train(train)
    with torch.no_grad():
        return (hf_model(input_ids=ids).prediction_logits - ours(ids).mlm_logits).abs().max().item()


@pytest.mark.parametrize("max_positions, length, train, case", [
    (4096, 896, False, "in eval mode"),
    (4096, 704, True, "at lengths ≤ 704 tokens"),
    (4096, 1024, True, "at 1024 tokens"),
    (8192, 3072, True, "max_position_embeddings=8192"),
])
def test_block_sparse_import_warns_of_each_case_where_outputs_differ(caplog, max_positions, length, train, case):
    hf_model = build(BigBirdForPreTraining, "block_sparse", max_positions=max_positions)
    with caplog.at_level(logging.WARNING, logger="dnabird.model.hf"):
        ours = from_hf_bigbird(hf_model)
    assert case in caplog.text
    assert logit_difference(hf_model, ours, length, train) > 1e-3  # the warned case does differ


def test_block_sparse_import_warns_only_of_what_differs(caplog):
    """At max_position_embeddings = 4096 the paper's lengths 3072 and 4096 match in train mode."""
    hf_model = build(BigBirdForPreTraining, "block_sparse", max_positions=4096)
    with caplog.at_level(logging.WARNING, logger="dnabird.model.hf"):
        ours = from_hf_bigbird(hf_model)
    assert "in eval mode" in caplog.text and "max_position_embeddings" not in caplog.text
    assert logit_difference(hf_model, ours, 3072, True) < 1e-4
    assert logit_difference(hf_model, ours, 4096, True) < 1e-4
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="dnabird.model.hf"):
        from_hf_bigbird(build(BigBirdForPreTraining, "original_full"))
    assert not caplog.records  # full attention matches everywhere


def test_block_sparse_export_reproduces_in_transformers_train_mode(tmp_path):
    ours = from_hf_bigbird(build(BigBirdForPreTraining, "block_sparse", seed=5))
    to_hf_bigbird(ours, tmp_path / "exported")
    reloaded = BigBirdForPreTraining.from_pretrained(tmp_path / "exported")
    compare(reloaded, ours, 896, 850, train=True)


def with_setting(model, setting, value):
    """`model` rebuilt with one setting changed and its weights copied (an encoder builds its patterns once)."""
    changes = {"attention": {**model.config.attention, setting: value}} if setting == "random_mode" \
        else {setting: value}
    changed = type(model)(dataclasses.replace(model.config, **changes))
    changed.load_state_dict(model.state_dict())
    return changed


@pytest.mark.parametrize("setting, value, named", [
    ("random_mode", "uniform", "random_mode='uniform'"),
    ("reseed_each_step", True, "reseed_each_step=True"),
    ("base_seed", 3, "base_seed=3"),
])
def test_export_refuses_random_blocks_transformers_would_not_draw(tmp_path, setting, value, named):
    ours = with_setting(from_hf_bigbird(build(BigBirdForPreTraining, "block_sparse")), setting, value)
    with pytest.raises(ConfigError, match=named):
        to_hf_bigbird(ours, tmp_path / "refused")
    assert not (tmp_path / "refused").exists()


def test_export_with_strict_false_warns_and_transformers_differs(tmp_path, caplog):
    ours = with_setting(from_hf_bigbird(build(BigBirdForPreTraining, "block_sparse")), "random_mode", "uniform")
    with caplog.at_level(logging.WARNING, logger="dnabird.model.hf"):
        to_hf_bigbird(ours, tmp_path / "exported", strict=False)
    assert "random_mode='uniform'" in caplog.text
    reloaded = BigBirdForPreTraining.from_pretrained(tmp_path / "exported")
    assert logit_difference(reloaded, ours, 896, True) > 1e-3  # the warning is true


def test_export_loads_in_transformers(tmp_path):
    ours = from_hf_bigbird(build(BigBirdForPreTraining, "original_full", seed=3))
    to_hf_bigbird(ours, tmp_path / "exported")
    reloaded = BigBirdForPreTraining.from_pretrained(tmp_path / "exported")
    compare(reloaded, ours, 200, 180, train=False)


def test_weights_that_are_neither_safetensors_nor_a_pytorch_pickle_are_refused(tmp_path):
    build(BigBirdModel, "original_full").save_pretrained(tmp_path, safe_serialization=True)
    (tmp_path / "model.safetensors").rename(tmp_path / "pytorch_model.bin")
    with pytest.raises(CheckpointError, match=r"pytorch_model\.bin: refused: .*dnabird never unpickles code"):
        from_hf_bigbird(tmp_path)


def test_a_dnabird_trained_model_exports_with_its_tokenizer_for_autotokenizer(embedded_default, tmp_path):
    """Trained by dnabird on the embedded default's shards and tokenizer (the fixture's own model has rotary
    positions and pre-LN blocks, which Hugging Face BigBird cannot hold): exported, then transformers'
    AutoTokenizer and BigBirdForMaskedLM give dnabird's ids and logits (full attention at <= 5 blocks, eval)."""
    from dnabird.data.tokenizer import Tokenizer
    from dnabird.genome.reference import Genome
    from dnabird.model import load_checkpoint
    from dnabird.pretraining.recipe import PretrainConfig, pretrain
    from dnabird.train import TrainConfig

    pretrain(PretrainConfig(model="tiny", model_overrides={"num_layers": 1, "attention": {"random_mode": "hf"},
                                                           "reseed_each_step": False},
                            tokenizer=str(embedded_default.tokenizer), train_shards=str(embedded_default.train_shards),
                            max_length=128, eval_examples=0,
                            train=TrainConfig(out_dir=str(tmp_path / "run"), max_steps=2, global_batch_size=4,
                                              micro_batch_size=4, warmup_steps=1, lr=1e-3, progress=False)))
    ours, tokenizer = load_checkpoint(tmp_path / "run" / "model").eval(), Tokenizer.load(embedded_default.tokenizer)
    to_hf_bigbird(ours, tmp_path / "hf", tokenizer=tokenizer)
    auto = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf")
    reloaded = BigBirdForPreTraining.from_pretrained(tmp_path / "hf").eval()
    genome = Genome(embedded_default.fasta)
    windows = [genome.fetch(chrom, start, start + 600).sequence for chrom in ("chr1", "chr8")
               for start in range(20_000, 200_000, 9_000)]
    assert any(c.islower() for c in "".join(windows))  # soft-masked bases: upper-cased on both sides
    for window in windows:
        assert auto(window)["input_ids"] == [tokenizer.cls_id, *tokenizer.encode(window), tokenizer.sep_id]
    ids, mask = tokenizer.encode_batch(windows[:8], block_size=64, length=320)
    batch = auto(windows[:8], padding="max_length", max_length=320, return_tensors="pt")
    assert (batch["input_ids"].numpy() == ids).all() and (batch["attention_mask"].numpy() == mask).all()
    with torch.no_grad():
        expected = reloaded(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).prediction_logits
        got = ours(torch.from_numpy(ids), torch.from_numpy(mask)).mlm_logits
    real = torch.from_numpy(mask)
    torch.testing.assert_close(got[real], expected[real], rtol=0, atol=1e-4)


def test_an_imported_tokenizer_json_is_exported_unchanged(tmp_path):
    from dnabird.data.hf_tokenizer import HFTokenizer
    from tests.gena_reference import GENA_TOKENIZER, gena_config, seeded

    gena = HFTokenizer.load(GENA_TOKENIZER)
    config = gena_config(transformers, attention_type="original_full")
    ours = from_hf_bigbird(seeded(lambda: BigBirdForMaskedLM(config)))
    to_hf_bigbird(ours, tmp_path, tokenizer=gena)
    assert (tmp_path / "tokenizer.json").read_bytes() == (GENA_TOKENIZER / "tokenizer.json").read_bytes()
    config = json.loads((tmp_path / "config.json").read_text())
    assert (config["architectures"], config["pad_token_id"], config["sep_token_id"]) == (["BigBirdForMaskedLM"], 3, 2)
    assert HFTokenizer.load(tmp_path).hash == gena.hash


@pytest.mark.parametrize("problem, outputs", [("regression", 2), ("multilabel", 3), ("binary", 1),
                                              ("multiclass", 3)])
def test_a_classifier_exports_to_transformers_with_its_problem_type_and_imports_back(tmp_path, problem, outputs):
    """A dnabird head (its own initialisation) written as BigBirdForSequenceClassification: transformers' logits
    (and, for a regression, its MSE loss) equal dnabird's; imported back, the same problem and weights."""
    from transformers import BigBirdForSequenceClassification

    from dnabird.model.heads import SequenceClassifier
    from dnabird.model.hf import config_from_hf
    from dnabird.model.task_spec import TaskSpec

    config = config_from_hf(hf_config("original_full").to_dict())
    config = dataclasses.replace(config, pooler_activation=config.activation)
    ours = SequenceClassifier(config, outputs, problem=problem, seed=3).eval()
    labels = [f"target_{i}" for i in range(outputs)]
    transform = {"log1p": True, "mean": [0.5] * outputs, "std": [2.0] * outputs, "link": "identity"}
    task = TaskSpec(task="t", problem=problem, labels=labels, eval_length=320,
                    target_transform=transform if problem == "regression" else None)
    to_hf_bigbird(ours, tmp_path, task=task)
    stored = json.loads((tmp_path / "config.json").read_text())
    expected_type = {"regression": "regression", "multiclass": "single_label_classification"}.get(
        problem, "multi_label_classification")
    assert stored["problem_type"] == expected_type and list(stored["id2label"].values()) == labels
    assert stored.get("dnabird_target_transform") == (transform if problem == "regression" else None)
    theirs = BigBirdForSequenceClassification.from_pretrained(tmp_path).eval()
    ids, mask, segments = inputs(300, 250)
    targets = torch.randn(2, outputs)
    with torch.no_grad():
        hf_out = theirs(input_ids=ids, attention_mask=mask, token_type_ids=segments,
                        labels=targets if problem == "regression" else None)
        out = ours(ids, mask, segments, labels=targets if problem == "regression" else None)
    torch.testing.assert_close(out.logits.reshape(2, outputs), hf_out.logits, rtol=0, atol=1e-5)
    if problem == "regression":
        torch.testing.assert_close(out.loss, hf_out.loss, rtol=1e-5, atol=1e-6)
    back = from_hf_bigbird(tmp_path)
    assert back.problem == problem and back.classifier.out_features == outputs
    assert all(torch.equal(v, back.state_dict()[k]) for k, v in ours.state_dict().items())


def test_a_classifier_whose_pooler_transformers_cannot_express_is_refused(tmp_path):
    from dnabird.model.heads import SequenceClassifier
    from dnabird.model.hf import config_from_hf

    tanh = config_from_hf(hf_config("original_full").to_dict())
    with pytest.raises(ConfigError, match="classification head is dense \\+ the encoder's activation"):
        to_hf_bigbird(SequenceClassifier(tanh, 1, problem="regression"), tmp_path)
