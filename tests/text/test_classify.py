"""Classification inputs, labels, baseline features and the task's data for the fine-tuning recipe,
against hand-made cases."""

import numpy as np
import pytest

from dnabird.data.text_tokenizer import TextTokenizer
from dnabird.errors import ParameterError
from dnabird.model.config import build_encoder_config
from dnabird.text.classify import (
    LabelledData,
    TextClassifyConfig,
    bag_of_words,
    build,
    encode_documents,
    encoder_overrides,
    label_spec,
    label_targets,
)

WORDS = "one two three four five six seven eight nine ten".split()


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(WORDS, size=12)) for _ in range(200)]
    return TextTokenizer.train(lines, tmp_path_factory.mktemp("cls") / "w.model", vocab_size=20, model_type="word",
                               byte_fallback=False, num_threads=1)


def test_documents_keep_their_head_or_their_tail(tokenizer):
    text = " ".join(WORDS)  # ten words, one token each
    word = {w: tokenizer.encode(w)[0] for w in WORDS}
    head = encode_documents(tokenizer, [text, "two"], max_length=6, keep="head")
    tail = encode_documents(tokenizer, [text], max_length=6, keep="tail")
    cls, sep, pad = tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id
    assert head[0].tolist() == [cls, *(word[w] for w in WORDS[:4]), sep]
    assert tail[0].tolist() == [cls, *(word[w] for w in WORDS[-4:]), sep]
    assert head[1].tolist() == [cls, word["two"], sep, pad, pad, pad]


def test_documents_keep_both_ends(tokenizer):
    """keep="ends": the first half of the room and the last half (the larger half at the end)."""
    text = " ".join(WORDS)
    word = {w: tokenizer.encode(w)[0] for w in WORDS}
    cls, sep, pad = tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id
    even = encode_documents(tokenizer, [text, "two three"], max_length=6, keep="ends")
    odd = encode_documents(tokenizer, [text], max_length=7, keep="ends")
    assert even[0].tolist() == [cls, word["one"], word["two"], word["nine"], word["ten"], sep]
    assert odd[0].tolist() == [cls, word["one"], word["two"], word["eight"], word["nine"], word["ten"], sep]
    assert even[1].tolist() == [cls, word["two"], word["three"], sep, pad, pad]  # short: kept whole


def test_label_sets_become_binary_or_multiclass_specs():
    binary = label_spec(["neg", "pos", "pos"], max_length=64, positive=None, tokenizer_hash="0" * 64)
    assert binary.problem == "binary" and binary.labels == ("pos",)
    assert label_targets(binary, ["pos", "neg", "pos"], "test").tolist() == [1, 0, 1]
    assert label_spec(["a", "b"], max_length=64, positive="a", tokenizer_hash="0" * 64).labels == ("a",)
    multi = label_spec(["c", "a", "b"], max_length=64, positive=None, tokenizer_hash="0" * 64)
    assert multi.problem == "multiclass" and multi.labels == ("a", "b", "c")
    assert label_targets(multi, ["b", "c"], "test").tolist() == [1, 2]
    with pytest.raises(ParameterError, match="test labels"):
        label_targets(multi, ["d"], "test")
    with pytest.raises(ParameterError, match="at least two"):
        label_spec(["a", "a"], max_length=64, positive=None, tokenizer_hash="0" * 64)
    with pytest.raises(ParameterError, match="positive_label"):
        label_spec(["a", "b"], max_length=64, positive="c", tokenizer_hash="0" * 64)


def test_bag_of_words_counts_the_whole_document(tokenizer):
    word = {w: tokenizer.encode(w)[0] for w in WORDS}
    features = bag_of_words(tokenizer, ["two two five", "ten"], buckets=10_000)
    assert features.shape == (2, tokenizer.vocab_size)
    expected = np.zeros((2, tokenizer.vocab_size), np.float32)
    expected[0, word["two"]], expected[0, word["five"]], expected[1, word["ten"]] = np.log(3), np.log(2), np.log(2)
    np.testing.assert_allclose(features, expected, rtol=1e-6)
    folded = bag_of_words(tokenizer, ["two two five"], buckets=4)  # ids folded modulo 4
    assert folded.shape == (1, 4) and folded[0, word["two"] % 4] >= np.log(3) - 1e-6


def test_longformer_gets_global_attention_at_cls_and_bigbird_needs_none():
    longformer = build_encoder_config("tiny", {"attention": {"type": "longformer", "window": 32, "block_size": 16,
                                                             "global_positions": [5]}})
    assert encoder_overrides(longformer)["attention"]["global_positions"] == [0, 5]
    assert encoder_overrides(longformer)["attention"]["window"] == 32
    bigbird = build_encoder_config("tiny", {"attention": {"type": "bigbird_itc", "block_size": 16}})
    assert encoder_overrides(bigbird) == {}


def test_task_data_for_the_recipe(tokenizer, tmp_path):
    rows = {"train": [("one two three", "pos"), ("four five", "neg"), ("six", "pos")],
            "validation": [("seven", "neg")], "test": [("one two three four five six seven eight", "neg")]}
    paths = {}
    for split, items in rows.items():
        paths[split] = tmp_path / f"{split}.tsv"
        paths[split].write_text("text\tlabel\n" + "".join(f"{t}\t{label}\n" for t, label in items))
    config = TextClassifyConfig(tokenizer=str(tokenizer.path), data=LabelledData(
        **{k: str(v) for k, v in paths.items()}, max_length=8, keep="tail"))
    data = build(config, tokenizer, block_size=4, out_dir=tmp_path)
    assert data.spec.problem == "binary" and data.spec.labels == ("pos",) and data.spec.eval_length == 8
    assert data.train.labels.tolist() == [1, 0, 1] and data.test.labels.tolist() == [0]
    word = {w: tokenizer.encode(w)[0] for w in WORDS}
    assert data.test.example(0, 0)["input_ids"].tolist() == [tokenizer.cls_id, *(word[w] for w in WORDS[2:8]),
                                                             tokenizer.sep_id]
    assert sorted(data.train[i]["labels"] for i in range(3)) == [0, 1, 1] and data.train.shuffle
    assert not data.validation.shuffle and data.summary["splits"]["test"]["filling_the_input"] == 1
    linear, perceptron = (data.baseline_features[name] for name in ("bag of words (whole document)",
                                                                      "bag of words, perceptron (whole document)"))
    assert linear.train.shape[0] == 3 and linear.test[0, word["one"]] == pytest.approx(np.log(2))  # before truncation
    assert (linear.model, perceptron.model) == ("logistic", "mlp") and np.array_equal(perceptron.test, linear.test)
    with pytest.raises(ParameterError, match="block size 16"):
        build(config, tokenizer, block_size=16, out_dir=tmp_path)


def test_fine_tunes_a_pretrained_text_checkpoint_with_global_cls(tokenizer, tmp_path):
    """The recipe reads the checkpoint's text tokenizer and gives its Longformer pattern a global [CLS]
    (here with three labels: a multi-class head scored by accuracy and macro F1)."""
    import json

    from dnabird.model import PretrainingModel
    from dnabird.model.checkpoint import read_tensors, save_checkpoint
    from dnabird.text.classify import classify
    from dnabird.train import TrainConfig

    settings = build_encoder_config("tiny", {"vocab_size": tokenizer.vocab_size, "attention": {
        "type": "longformer", "window": 8, "block_size": 4}})
    pretrained = PretrainingModel(settings, nsp=False, seed=1)
    save_checkpoint(pretrained, tmp_path / "mlm", tokenizer_files=(tokenizer.path,))
    paths = {}
    for split in ("train", "validation", "test"):
        paths[split] = tmp_path / f"{split}.jsonl"
        paths[split].write_text("".join(json.dumps({"text": " ".join(WORDS[i:i + 3]), "label": "abc"[i % 3]}) + "\n"
                                        for i in range(6)))
    config = TextClassifyConfig(pretrained=str(tmp_path / "mlm"), bootstrap_resamples=5,
                                data=LabelledData(**{k: str(v) for k, v in paths.items()}, max_length=8),
                                train=TrainConfig(out_dir=str(tmp_path / "run"), max_steps=1, global_batch_size=2,
                                                  micro_batch_size=2, warmup_steps=0, progress=False))
    report = classify(config)
    assert report["task"]["task"] == "text_classification" and report["selection"]["step"] == 1
    assert report["task"]["problem"] == "multiclass" and report["task"]["labels"] == ["a", "b", "c"]
    assert set(report["test"]["rows"]["fine-tuned model"]) >= {"accuracy", "macro_f1"}
    saved = json.loads((tmp_path / "run" / "model" / "config.json").read_text())
    assert saved["attention"]["global_positions"] == [0] and saved["attention"]["window"] == 8
    # the encoder starts from the checkpoint: one step at lr 1e-4 moves a weight by about 1e-4, while a fresh
    # initialisation differs from it by about the init's 0.02 spread
    before, after = read_tensors(tmp_path / "mlm"), read_tensors(tmp_path / "run" / "model")
    name = "encoder.embeddings.word.weight"
    assert (after[name] - before[name]).abs().max() < 2e-3 and before[name].std() > 0.01
    assert (tmp_path / "run" / "model" / tokenizer.path.name).is_file()


def test_global_tail_marks_each_documents_last_real_tokens(tokenizer, tmp_path):
    from dnabird.text.classify import tail_mask

    pad = tokenizer.pad_id
    ids = np.array([[7, 8, 9, 10, 11, 12], [7, 8, 9, pad, pad, pad], [7, pad, pad, pad, pad, pad]])
    assert tail_mask(ids, pad, 2).astype(int).tolist() == [[0, 0, 0, 0, 1, 1], [0, 1, 1, 0, 0, 0],
                                                          [1, 0, 0, 0, 0, 0]]
    paths = {}
    for split in ("train", "validation", "test"):
        paths[split] = tmp_path / f"{split}.tsv"
        paths[split].write_text("text\tlabel\none two three\tpos\nfour\tneg\n")
    config = TextClassifyConfig(tokenizer=str(tokenizer.path), data=LabelledData(
        **{k: str(v) for k, v in paths.items()}, max_length=8, global_tail=2))
    data = build(config, tokenizer, block_size=4, out_dir=tmp_path)
    # [CLS] one two three [SEP] pad pad pad: "three" and [SEP] are global; [CLS] four [SEP]: "four" and [SEP]
    assert data.test.example(0, 0)["global_attention_mask"].astype(int).tolist() == [0, 0, 0, 1, 1, 0, 0, 0]
    assert data.test.example(1, 0)["global_attention_mask"].astype(int).tolist() == [0, 1, 1, 0, 0, 0, 0, 0]
    with pytest.raises(ParameterError, match="global_tail"):
        LabelledData(max_length=8, global_tail=8)


def test_the_recipe_hands_each_examples_global_mask_to_the_model(tokenizer):
    """Training loss and test predictions read the examples' own global tokens: equal to the model called
    with a hand-built `global_attention_mask`, and different from [CLS] alone."""
    import torch

    from dnabird.finetune.data import TokenExamples, collate
    from dnabird.finetune.evaluate import predict
    from dnabird.finetune.recipe import classification_loss
    from dnabird.model.heads import SequenceClassifier
    from dnabird.model.task_spec import TaskSpec

    config = build_encoder_config("tiny", {"vocab_size": tokenizer.vocab_size, "dropout": 0.0, "attention": {
        "type": "longformer", "window": 4, "block_size": 4, "global_positions": [0]}})
    model = SequenceClassifier(config, 1, problem="binary", seed=3).eval()
    with torch.no_grad():
        model.classifier.weight.mul_(100.0)  # logits far from 0, so that the global tokens move them visibly
    rng = np.random.default_rng(0)
    ids = rng.integers(5, tokenizer.vocab_size, size=(3, 16))
    ids[1, 10:] = tokenizer.pad_id
    hand = np.zeros((3, 16), bool)
    hand[0, 13:], hand[1, 7:10], hand[2, 13:] = True, True, True
    examples = TokenExamples(ids, np.array([1.0, 0.0, 1.0], np.float32), global_mask=hand)
    batch = collate([examples.example(i, 0) for i in range(3)], pad_id=tokenizer.pad_id)
    with torch.no_grad():
        own = torch.from_numpy(hand)
        direct = model(batch["input_ids"], batch["attention_mask"], global_attention_mask=own).logits
        hidden = model.encoder(batch["input_ids"], batch["attention_mask"], global_attention_mask=own)
        cls_only = model.encoder(batch["input_ids"], batch["attention_mask"])
        loss = classification_loss("binary")(model, batch, 0).loss
    expected_loss = torch.nn.functional.binary_cross_entropy_with_logits(direct, batch["labels"])
    spec = TaskSpec(task="text_classification", problem="binary", labels=("pos",), eval_length=16,
                    tokenizer_hash="0" * 64)
    _, scores, _ = predict(model, examples, spec, batch_size=2, pad_id=tokenizer.pad_id)
    np.testing.assert_allclose(scores, torch.sigmoid(direct).numpy(), rtol=1e-5, atol=1e-6)
    assert float(loss) == pytest.approx(float(expected_loss), rel=1e-5)
    assert (hidden - cls_only)[0, 5].abs().max() > 1e-2  # token 5 now also reads the global tokens 13-15
    assert (direct - model.classifier(model.encoder.pool(cls_only)).squeeze(-1)).abs().min() > 5e-4
    with pytest.raises(ParameterError, match="global_mask"):
        TokenExamples(ids, np.zeros(3), global_mask=hand[:, :8])
