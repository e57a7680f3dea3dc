"""Character LM: the 90/5/5 split, every position scored exactly once, and BPC against a one-pass causal
scoring and a per-position brute force."""

import math

import numpy as np
import pytest
import torch

from dnabird.datasets.synthetic_text import write_text8
from dnabird.errors import ParameterError
from dnabird.model import CausalLanguageModel, tiny
from dnabird.text.charlm import (
    VOCAB_SIZE,
    CharWindows,
    evaluate_bpc,
    evaluation_windows,
    read_bytes,
    split_bounds,
    to_ids,
    unigram_bpc,
)


def test_split_is_90_5_5():
    assert split_bounds(100_000_000) == {"train": (0, 90_000_000), "validation": (90_000_000, 95_000_000),
                                         "test": (95_000_000, 100_000_000)}
    assert split_bounds(1000) == {"train": (0, 900), "validation": (900, 950), "test": (950, 1000)}


@pytest.mark.parametrize("start, end, context, stride", [(10, 35, 8, 5), (0, 20, 7, 6), (3, 50, 16, 1)])
def test_windows_score_every_position_once_with_the_stated_context(start, end, context, stride):
    windows = evaluation_windows(start, end, context=context, stride=stride)
    scored = [p for _, b, s in windows for p in range(s, b)]
    assert scored == list(range(max(start, 1), end))
    for a, b, s in windows:
        assert b - a <= context and a <= s - 1  # something to condition on
        assert s - a >= min(context - stride, s)  # at least context - stride bytes before each scored byte
    assert evaluation_windows(10, 35, context=8, stride=5)[:2] == [(7, 15, 10), (12, 20, 15)]
    with pytest.raises(ParameterError, match="stride"):
        evaluation_windows(0, 10, context=4, stride=4)


@pytest.fixture(scope="module")
def model_and_data(tmp_path_factory):
    path = write_text8(tmp_path_factory.mktemp("charlm") / "text8", 3000, seed=0)
    config = tiny(num_layers=2, causal=True, vocab_size=VOCAB_SIZE, dropout=0.0, positional="rotary", pre_norm=True,
                  attention={"type": "longformer", "window": 16, "block_size": 16},
                  layer_attention=[{"dilation": [1, 1, 2, 2]}, {"window": 32}])
    return CausalLanguageModel(config, seed=0).eval(), read_bytes(path)


def brute_force_bits(model, data, start, end, context, stride):
    """Each position scored alone: the window the protocol gives it, one forward pass per position."""
    bits = 0.0
    for p in range(max(start, 1), end):
        window_end = min(start + ((p - start) // stride + 1) * stride, end)
        a = max(0, window_end - context)
        ids = torch.from_numpy(to_ids(data[a:p + 1]))[None]
        with torch.no_grad():
            log_probs = model(ids).logits[0, -2].log_softmax(-1)
        bits -= float(log_probs[ids[0, -1]]) / math.log(2)
    return bits


def test_bpc_equals_brute_force_and_one_pass_causal_scoring(model_and_data):
    model, data = model_and_data
    start, end = 300, 324
    report = evaluate_bpc(model, data, start, end, context=40, stride=8, batch_size=3)
    assert report["scored"] == end - start
    assert report["bpc"] == pytest.approx(brute_force_bits(model, data, start, end, 40, 8) / (end - start),
                                          rel=1e-5)
    # with the whole prefix as context, any stride equals one causal pass over the file
    ids = torch.from_numpy(to_ids(data[:end]))[None]
    with torch.no_grad():
        log_probs = model(ids).logits[0, :-1].log_softmax(-1)
    one_pass = -log_probs[torch.arange(start - 1, end - 1), ids[0, start:end]].sum() / math.log(2) / (end - start)
    for stride in (5, end - start - 1):
        assert evaluate_bpc(model, data, start, end, context=end, stride=stride)["bpc"] == pytest.approx(
            float(one_pass), rel=1e-5)
    # a shorter context changes the figure: the comparison above is not vacuous
    assert abs(evaluate_bpc(model, data, start, end, context=4, stride=2)["bpc"] - float(one_pass)) > 1e-3


def test_unigram_bpc_by_hand():
    data = np.frombuffer(b"aab" + b"xab", dtype=np.uint8)
    # training bytes "aab": a 2+1, b 1+1, the other 254 bytes 0+1 -> total 259
    expected = -(math.log2(1 / 259) + math.log2(3 / 259) + math.log2(2 / 259)) / 3   # "xab"
    assert unigram_bpc(data, (0, 3), (3, 6)) == pytest.approx(expected, rel=1e-12)
    # from the start of the data: byte 0 has no context and is not scored, so "ab"
    assert unigram_bpc(data, (0, 3), (0, 3)) == pytest.approx(-(math.log2(3 / 259) + math.log2(2 / 259)) / 2)


def test_training_windows_and_unigram_baseline(model_and_data):
    _, data = model_and_data
    windows = CharWindows(data, 0, 2700, length=64, seed=1)
    first = windows[5]
    assert np.array_equal(first["input_ids"], windows[5]["input_ids"]) and first["input_ids"].shape == (64,)
    text = bytes((first["input_ids"] - 1).astype(np.uint8))
    assert text in bytes(data[:2700])
    counts = np.bincount(np.asarray(data[:2700]), minlength=256) + 1.0
    expected = -np.mean(np.log2(counts / counts.sum())[np.asarray(data[2700:2850])])
    assert unigram_bpc(data, (0, 2700), (2700, 2850)) == pytest.approx(expected)
    with pytest.raises(ParameterError, match="max_length"):
        CharWindows(data, 0, 50, length=64)
