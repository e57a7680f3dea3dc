"""Importing Hugging Face BigBird directories of GENA-LM's layout (`from_hf_bigbird`, `import_hub_checkpoint`):
logits against transformers for safetensors and pickled weights and for classifiers; tokenizer files; bad input."""

import json
import logging
import os
import shutil

import numpy as np
import pytest
import torch

from dnabird.data.hf_tokenizer import HFTokenizer
from dnabird.errors import CheckpointError, ConfigError, InputFormatError, ParameterError
from dnabird.model import from_hf_bigbird, load_checkpoint
from dnabird.model.bp_per_token import BpPerToken, read_bp_per_token
from dnabird.model.checkpoint import read_task, read_tokenizer
from dnabird.model.heads import PretrainingModel, SequenceClassifier
from dnabird.model.hub_import import TaskOptions, import_hub_checkpoint
from tests.gena_reference import GENA_TOKENIZER, gena_config, save_as_pytorch_bin, seeded

transformers = pytest.importorskip("transformers")
from transformers import BigBirdForMaskedLM, BigBirdForSequenceClassification  # noqa: E402

# where dnabird's block-sparse attention reproduces transformers' (see dnabird.model.hf): train mode, no
# dropout, more than (5 + 2r) blocks and not 1024 tokens; full attention matches in eval mode
SETTINGS = {"original_full": dict(length=300, padded_from=250, train=False),
            "block_sparse": dict(length=768, padded_from=740, train=True)}


def inputs(length, padded_from, pad_id=3):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(6, 32000, (2, length), generator=g)
    mask = torch.ones(2, length, dtype=torch.long)
    mask[1, padded_from:] = 0
    ids[1, padded_from:] = pad_id
    return ids, mask


def masked_lm(attention_type, seed=0):
    return seeded(lambda: BigBirdForMaskedLM(gena_config(transformers, attention_type=attention_type)), seed)


def with_tokenizer(directory):
    for name in ("tokenizer.json", "special_tokens_map.json", "tokenizer_config.json"):
        shutil.copy(GENA_TOKENIZER / name, directory / name)
    return directory


def max_difference(got, expected, real):
    """Largest |difference| over the real tokens (logits [B, L, V], or [B, k] with real None)."""
    difference = (got - expected).abs()
    return float(difference.max() if real is None else difference.amax(-1)[real].max())


@pytest.mark.parametrize("attention_type, weights", [("original_full", "model.safetensors"),
                                                     ("block_sparse", "pytorch_model.bin")])
def test_gena_layout_masked_lm_logits_equal_transformers(tmp_path, attention_type, weights):
    hf_model = masked_lm(attention_type)
    hf_model.save_pretrained(tmp_path / "safetensors")
    save_as_pytorch_bin(hf_model, tmp_path / "bin")
    assert (tmp_path / "safetensors" / "model.safetensors").is_file()
    ours = from_hf_bigbird(tmp_path / ("safetensors" if weights == "model.safetensors" else "bin"))
    other = from_hf_bigbird(tmp_path / ("bin" if weights == "model.safetensors" else "safetensors"))
    assert all(torch.equal(v, other.state_dict()[k]) for k, v in ours.state_dict().items())  # either file
    assert isinstance(ours, PretrainingModel) and ours.nsp is None and ours.config.pad_token_id == 3
    setting = SETTINGS[attention_type]
    ids, mask = inputs(setting["length"], setting["padded_from"])
    hf_model.train(setting["train"])
    ours.train(setting["train"])
    with torch.no_grad():
        expected = hf_model(input_ids=ids, attention_mask=mask).logits
        got = ours(ids, mask).mlm_logits
    assert max_difference(got, expected, mask.bool()) < 1e-5


@pytest.mark.parametrize("attention_type", list(SETTINGS))
def test_gena_layout_classifier_logits_equal_transformers(tmp_path, attention_type):
    config = gena_config(transformers, attention_type=attention_type, num_labels=3)
    hf_model = seeded(lambda: BigBirdForSequenceClassification(config), 4)
    save_as_pytorch_bin(hf_model, tmp_path)
    ours = from_hf_bigbird(tmp_path)
    assert isinstance(ours, SequenceClassifier) and ours.problem == "multiclass"
    assert ours.config.pooler_activation == "gelu_new"
    setting = SETTINGS[attention_type]
    ids, mask = inputs(setting["length"], setting["padded_from"])
    hf_model.train(setting["train"])
    ours.train(setting["train"])
    with torch.no_grad():
        expected = hf_model(input_ids=ids, attention_mask=mask).logits
        got = ours(ids, mask).logits
    assert max_difference(got, expected, None) < 1e-5


def test_classifier_problem_follows_the_config_as_transformers_reads_it(tmp_path):
    def problem(**settings):
        config = gena_config(transformers, attention_type="original_full", **settings)
        return from_hf_bigbird(seeded(lambda: BigBirdForSequenceClassification(config))).problem

    assert problem(num_labels=4, problem_type="multi_label_classification") == "multilabel"
    assert problem(num_labels=1, problem_type="multi_label_classification") == "binary"
    assert problem(num_labels=1) == problem(num_labels=2, problem_type="regression") == "regression"
    assert problem(num_labels=3) == "multiclass"
    seeded(lambda: BigBirdForSequenceClassification(gena_config(transformers, num_labels=1))).save_pretrained(tmp_path)
    stored = json.loads((tmp_path / "config.json").read_text())   # transformers itself refuses to build this one
    (tmp_path / "config.json").write_text(json.dumps({**stored, "problem_type": "single_label_classification"}))
    with pytest.raises(ConfigError, match=r"config\.json: problem_type='single_label_classification' with 1 "
                                          r"label\(s\) is not supported"):
        from_hf_bigbird(tmp_path)


def test_import_writes_the_tokenizer_and_a_classifier_task(tmp_path):
    config = gena_config(transformers, attention_type="original_full", num_labels=2)
    hf_model = seeded(lambda: BigBirdForSequenceClassification(config))
    hf_model.save_pretrained(tmp_path / "hf")
    with_tokenizer(tmp_path / "hf")
    made = import_hub_checkpoint(tmp_path / "hf", tmp_path / "out", task=TaskOptions(
        labels=("other", "promoter"), window_bp=2000, anchor="centre", task="promoter"))
    assert made["heads"] == "multiclass classifier with 2 outputs"
    task = read_task(tmp_path / "out")
    tokenizer = read_tokenizer(tmp_path / "out")
    assert isinstance(tokenizer, HFTokenizer) and tokenizer.hash == HFTokenizer.load(GENA_TOKENIZER).hash
    assert (task.labels, task.window_length, task.anchor, task.strand_rule, task.eval_length) == \
        (("other", "promoter"), 2000, "centre", "both", 4096)
    assert task.tokenizer_hash == tokenizer.hash and task.problem == "multiclass"
    ours = load_checkpoint(tmp_path / "out").eval()
    ids, mask = inputs(200, 150)
    with torch.no_grad():
        torch.testing.assert_close(ours(ids, mask).logits, hf_model.eval()(input_ids=ids, attention_mask=mask).logits,
                                   rtol=0, atol=1e-5)


def test_a_directory_without_a_tokenizer_imports_the_weights_and_says_how_to_give_one(tmp_path, caplog):
    masked_lm("original_full").save_pretrained(tmp_path / "hf")
    with caplog.at_level(logging.WARNING, logger="dnabird.model.hub_import"):
        made = import_hub_checkpoint(tmp_path / "hf", tmp_path / "out")
    assert made["tokenizer"] is None and "--tokenizer" in caplog.text and "tokenizer.json" in caplog.text
    assert isinstance(load_checkpoint(tmp_path / "out"), PretrainingModel)
    with pytest.raises(CheckpointError, match=r"no tokenizer .*--tokenizer PATH"):
        read_tokenizer(tmp_path / "out")
    assert read_bp_per_token(tmp_path / "out") is None
    with pytest.raises(ParameterError, match="bp_per_token"):
        import_hub_checkpoint(tmp_path / "hf", tmp_path / "out", bp_per_token=5.5)
    import_hub_checkpoint(tmp_path / "hf", tmp_path / "out", tokenizer=GENA_TOKENIZER / "tokenizer.json")
    assert read_tokenizer(tmp_path / "out").mask_id == 4
    # the bp per token that sizes default mlm_llr windows: the tokenizer's on random DNA, unless given
    sample = "".join(np.random.default_rng(3).choice(list("ACGT"), size=50_000))
    stored = read_bp_per_token(tmp_path / "out")
    assert stored.value == pytest.approx(len(sample) / len(read_tokenizer(tmp_path / "out").encode(sample)), rel=0.03)
    assert stored.source.startswith("reference")
    import_hub_checkpoint(tmp_path / "hf", tmp_path / "out", tokenizer=GENA_TOKENIZER / "tokenizer.json",
                          bp_per_token=5.58)
    assert read_bp_per_token(tmp_path / "out") == BpPerToken(5.58, "given at import")


class _Planted:
    """Unpickling this calls os.mkdir: a weight file that runs code."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return os.mkdir, (str(self.path),)


def test_a_pickle_that_needs_more_than_tensors_is_refused_naming_the_file(tmp_path):
    hf_model = masked_lm("original_full")
    save_as_pytorch_bin(hf_model, tmp_path / "hf")
    state = dict(hf_model.state_dict(), planted=_Planted(tmp_path / "code_ran"))
    torch.save(state, tmp_path / "hf" / "pytorch_model.bin")
    with pytest.raises(CheckpointError, match=r"pytorch_model\.bin: refused: .*GLOBAL posix\.mkdir"):
        import_hub_checkpoint(tmp_path / "hf", tmp_path / "out")
    assert not (tmp_path / "code_ran").exists() and not (tmp_path / "out").exists()


def edit_config(directory, **changes):
    path = directory / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


@pytest.mark.parametrize("change, error, message", [
    ({"model_type": "bert"}, ConfigError, r"config\.json: model_type='bert' is not supported"),
    ({"attention_type": "sliding"}, ConfigError, r"config\.json: attention_type='sliding' is not supported"),
    ({"architectures": ["BigBirdForQuestionAnswering"]}, ConfigError, r"config\.json: architectures=.*not supported"),
    ({"vocab_size": 32001}, CheckpointError, r"tensor 'encoder\.embeddings\.word\.weight' has shape"),
    ({"pad_token_id": 0}, ConfigError, r"tokenizer\.json against .*config\.json: the tokenizer's \[PAD\] is id 3, "
                                       r"the model's pad_token_id=0"),
])
def test_bad_configs_are_errors_naming_file_and_setting_before_anything_is_written(tmp_path, change, error, message):
    masked_lm("original_full").save_pretrained(tmp_path / "hf")
    with_tokenizer(tmp_path / "hf")
    edit_config(tmp_path / "hf", **change)
    with pytest.raises(error, match=message):
        import_hub_checkpoint(tmp_path / "hf", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_tokenizer_whose_vocabulary_disagrees_with_the_embeddings_is_refused(tmp_path):
    small = seeded(lambda: BigBirdForMaskedLM(gena_config(transformers, attention_type="original_full",
                                                          vocab_size=31000)))
    small.save_pretrained(tmp_path / "hf")
    with_tokenizer(tmp_path / "hf")
    with pytest.raises(ConfigError, match=r"tokenizer\.json against .*config\.json: the tokenizer has 32000 ids, "
                                          r"the model's embeddings vocab_size=31000"):
        import_hub_checkpoint(tmp_path / "hf", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_classifier_without_labels_window_or_anchor_is_refused(tmp_path):
    config = gena_config(transformers, attention_type="original_full", num_labels=2)
    seeded(lambda: BigBirdForSequenceClassification(config)).save_pretrained(tmp_path / "hf")
    with_tokenizer(tmp_path / "hf")
    with pytest.raises(ConfigError, match=r"config\.json: a BigBirdForSequenceClassification checkpoint needs "
                                          r"labels, anchor .*--labels"):
        import_hub_checkpoint(tmp_path / "hf", tmp_path / "out", task=TaskOptions(window_bp=1000))
    with pytest.raises(ConfigError, match=r"the classifier has 2 outputs, but 3 labels"):
        import_hub_checkpoint(tmp_path / "hf", tmp_path / "out",
                              task=TaskOptions(labels=("a", "b", "c"), window_bp=1000, anchor="centre"))
    masked_lm("original_full").save_pretrained(tmp_path / "mlm")
    with pytest.raises(ConfigError, match=r"labels describe a classifier's task, but this checkpoint has none"):
        import_hub_checkpoint(tmp_path / "mlm", tmp_path / "out", task=TaskOptions(labels=("a",)))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("remove, message", [
    ("config.json", r"config\.json: missing from the Hugging Face directory"),
    ("model.safetensors", r"no weights: expected model\.safetensors or pytorch_model\.bin"),
    ("special_tokens_map.json", r"special_tokens_map\.json \(or tokenizer_config\.json\) beside tokenizer\.json "
                                r"must name each special token"),
])
def test_missing_files_are_errors_naming_them(tmp_path, remove, message):
    masked_lm("original_full").save_pretrained(tmp_path / "hf")
    with_tokenizer(tmp_path / "hf")
    (tmp_path / "hf" / remove).unlink()
    with pytest.raises((CheckpointError, InputFormatError), match=message):
        import_hub_checkpoint(tmp_path / "hf", tmp_path / "out")
    assert not (tmp_path / "out").exists()
