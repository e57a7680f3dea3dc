"""Text MLM: packing, masking (dnabird's and an imported tokenizer's special ids), and the report's figures
against hand-computed values for a model whose predictions are uniform."""

import io
import json
import math

import numpy as np
import pytest
import sentencepiece as spm
import torch

from dnabird.config import build_config
from dnabird.data.text_tokenizer import TextTokenizer
from dnabird.errors import ConfigError
from dnabird.model import IGNORE_INDEX, PretrainingModel, tiny
from dnabird.text.mlm import (
    PackedTextExamples,
    TextMLMConfig,
    evaluate_mlm,
    pack_documents,
    pretrain_text,
    unigram_log_probs,
)

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def documents(count, seed=0):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(20, 60)))) for _ in range(count)]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return TextTokenizer.train(documents(200), tmp_path_factory.mktemp("mlm") / "t.model", vocab_size=290,
                               num_threads=1)


def test_documents_are_packed_with_a_separator(tokenizer):
    docs = documents(3, seed=1)
    stream = pack_documents(tokenizer, docs)
    expected = [t for doc in docs for t in [*tokenizer.encode(doc), tokenizer.sep_id]]
    assert stream.tolist() == expected


def test_examples_cut_the_stream_and_mask_only_real_tokens(tokenizer):
    stream = pack_documents(tokenizer, documents(40, seed=2))
    examples = PackedTextExamples(stream, tokenizer, max_length=64, seed=3, shuffle=False)
    assert len(examples) == -(-len(stream) // 62)
    selected = total = 0
    for index in range(len(examples)):
        example = examples[index]
        body = stream[index * 62:(index + 1) * 62]
        original = np.concatenate([[tokenizer.cls_id], body, [tokenizer.sep_id]])
        n = len(original)
        labels, ids = example["mlm_labels"], example["input_ids"]
        picked = labels != IGNORE_INDEX
        assert np.array_equal(labels[picked], original[picked[:n]])
        assert np.array_equal(ids[:n][~picked[:n]], original[~picked[:n]])  # unpicked tokens untouched
        assert not np.isin(original[picked[:n]], list(tokenizer.special_ids)).any()  # [CLS]/[SEP] never picked
        assert example["attention_mask"].sum() == n and (ids[n:] == tokenizer.pad_id).all()
        selected += picked.sum()
        total += (~np.isin(original, list(tokenizer.special_ids))).sum()
        assert np.array_equal(examples[index]["input_ids"], ids)  # a pure function of the index
    assert abs(selected / total - 0.15) < 0.02
    assert not np.array_equal(examples[len(examples)]["mlm_labels"], examples[0]["mlm_labels"])  # next epoch


def test_imported_special_ids_are_never_masked(tmp_path):
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(documents(100)), model_writer=model, vocab_size=38,
                                   pad_id=0, bos_id=1, eos_id=2, unk_id=3, pad_piece="<pad>", bos_piece="<s>",
                                   eos_piece="</s>", unk_piece="<unk>",
                                   user_defined_symbols=["<x>", "[CLS]", "[SEP]", "[MASK]"], minloglevel=2,
                                   num_threads=1)
    (tmp_path / "spiece.model").write_bytes(model.getvalue())
    tokenizer = TextTokenizer.load(tmp_path / "spiece.model")
    stream = pack_documents(tokenizer, documents(20))
    examples = PackedTextExamples(stream, tokenizer, max_length=32, mask_rate=0.5, seed=0)
    for index in range(len(examples)):
        example = examples[index]
        picked = example["mlm_labels"] != IGNORE_INDEX
        assert not np.isin(example["mlm_labels"][picked], sorted(tokenizer.special_ids)).any()
        replaced = example["input_ids"][picked]
        assert tokenizer.mask_id in replaced or picked.sum() < 3
        assert not np.isin(replaced[replaced != tokenizer.mask_id], [0, 1, 2, 3, tokenizer.cls_id]).any()


def test_unigram_baseline_of_a_stream_by_hand():
    log_p = unigram_log_probs(np.array([5, 5, 6, 3], dtype=np.int32), 8, frozenset({0, 1, 2, 3, 4}))
    # counts 5: 2+1, 6: 1+1, 7: 0+1 (the special 3 is not counted) -> total 6
    assert np.exp(log_p[5:]).tolist() == pytest.approx([3 / 6, 2 / 6, 1 / 6])
    assert np.isneginf(log_p[:5]).all()


def test_report_of_a_uniform_model_is_log2_of_the_vocabulary(tokenizer):
    config = tiny(num_layers=1, vocab_size=tokenizer.vocab_size, attention={"type": "full"}, dropout=0.0)
    model = PretrainingModel(config, seed=0, nsp=False)
    with torch.no_grad():
        model.encoder.embeddings.word.weight.zero_()  # tied decoder: all logits = bias = 0
        model.mlm.bias.zero_()
    stream = pack_documents(tokenizer, documents(20, seed=4))
    heldout = PackedTextExamples(stream, tokenizer, max_length=64, seed=9, shuffle=False)
    unigram = unigram_log_probs(pack_documents(tokenizer, documents(50, seed=5)), tokenizer.vocab_size,
                                tokenizer.special_ids)
    report = evaluate_mlm(model, heldout, char_lengths=tokenizer.char_lengths(), unigram=unigram, batch_size=4)
    labels = np.concatenate([heldout[i]["mlm_labels"] for i in range(len(heldout))])
    labels = labels[labels != IGNORE_INDEX]
    chars = tokenizer.char_lengths()[labels].sum()
    assert report["masked_tokens"] == len(labels) and report["masked_characters"] == chars
    bits = math.log2(tokenizer.vocab_size)
    assert report["model"]["bits_per_token"] == pytest.approx(bits, rel=1e-5)
    assert report["model"]["bits_per_char"] == pytest.approx(bits * len(labels) / chars, rel=1e-5)
    assert report["unigram"]["bits_per_token"] == pytest.approx(-unigram[labels].sum() / math.log(2) / len(labels))
    assert report["unigram"]["bits_per_token"] < report["model"]["bits_per_token"]


def staged_config(tmp_path, tokenizer, **changes):
    train = tmp_path / "train.txt"
    train.write_text("\n\n".join(documents(40, seed=5)) + "\n")
    settings = {"train_files": [str(train)], "validation_files": [str(train)], "tokenizer": str(tokenizer.path),
                "model": "tiny", "max_length": 128, "eval_examples": 2,
                "model_overrides": {"attention": {"type": "longformer", "window": 16, "block_size": 16}},
                "train": {"out_dir": str(tmp_path / "run"), "max_steps": 1, "global_batch_size": 2,
                          "micro_batch_size": 2, "warmup_steps": 0, "lr": 1e-3, "progress": False},
                "phases": [{"steps": 2, "max_length": 64}, {"steps": 1, "attention": {"window": 32}, "lr": 0.0}]}
    return build_config(TextMLMConfig, {**settings, **changes}, "test")


def test_staged_training_grows_window_and_length_and_carries_the_weights(tmp_path, tokenizer):
    from dnabird.model.checkpoint import read_config, read_tensors

    config = staged_config(tmp_path, tokenizer)
    report = pretrain_text(config)
    run = tmp_path / "run"
    first, second = read_config(run / "phase_0" / "model"), read_config(run / "phase_1" / "model")
    assert (first.attention["window"], second.attention["window"]) == (16, 32)
    assert [json.loads(line)["step"] for line in (run / "phase_0" / "metrics.jsonl").read_text().splitlines()
            if '"loss"' in line][-1] == 2
    # phase 1 starts from phase 0's weights (at lr 0 they stay), and its model is the run's
    before, after, final = (read_tensors(run / name) for name in ("phase_0/model", "phase_1/model", "model"))
    assert all(torch.equal(before[k], after[k]) for k in before) and all(torch.equal(after[k], final[k]) for k in after)
    assert read_config(run / "model").attention["window"] == 32 and report["max_length"] == 128
    # resuming a finished staged run retrains nothing
    stamp = (run / "phase_0" / "metrics.jsonl").stat().st_mtime_ns
    pretrain_text(config, resume=True)
    assert (run / "phase_0" / "metrics.jsonl").stat().st_mtime_ns == stamp


def test_a_phase_that_changes_weight_shapes_is_refused(tmp_path, tokenizer):
    bigbird = {"attention": {"type": "bigbird_itc", "block_size": 16}}
    with pytest.raises(ConfigError, match=r"phases\[1\]"):
        staged_config(tmp_path, tokenizer, model_overrides=bigbird,
                      phases=[{"steps": 1}, {"steps": 1, "attention": {"type": "longformer", "window": 16}}])
    with pytest.raises(ConfigError, match="steps"):
        staged_config(tmp_path, tokenizer, phases=[{"steps": 0}])
