import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from dnabird.pretraining.evaluate import _Tally, one_sentence_batch, token_bp_lengths, unigram_log_probs


def test_bits_per_base_by_hand():
    # two masked tokens, uniform over 4 ids: 2 bits each; they spell 3 bp and 5 bp -> 4 bits / 8 bp
    tally = _Tally()
    tally.add(torch.full((2, 4), math.log(0.25)), torch.tensor([1, 3]), torch.tensor([0, 3, 9, 5]))
    summary = tally.summary()
    assert summary["bits_per_base"] == pytest.approx(0.5)
    assert summary["mlm_loss"] == pytest.approx(math.log(4))
    assert summary["masked_tokens"] == 2


def test_unigram_counts_are_add_one_smoothed_over_non_special_ids():
    docs = [SimpleNamespace(sentences=[np.array([5, 5, 6]), np.array([5])])]
    log_p = unigram_log_probs(docs, vocab_size=8)
    # counts 5:3+1, 6:1+1, 7:0+1 -> total 7
    assert np.exp(log_p[5:]).tolist() == pytest.approx([4 / 7, 2 / 7, 1 / 7])
    assert np.isneginf(log_p[:5]).all()


def test_token_bp_lengths_read_the_pieces():
    tokenizer = SimpleNamespace(vocab_size=7, id_to_piece=lambda i: ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                                                                      "ACGT", "N"][i])
    assert token_bp_lengths(tokenizer).tolist() == [0, 0, 0, 0, 0, 4, 1]


def test_one_sentence_batch_keeps_each_sentence_and_its_masking():
    # [CLS] s1 s1 [SEP] s3 [SEP] [PAD]; sentence 3 has no masked token, so it is left out
    batch = {"input_ids": torch.tensor([[2, 4, 9, 3, 11, 3, 0]]),
             "mlm_labels": torch.tensor([[-100, 8, -100, -100, -100, -100, -100]]),
             "sentence_index": torch.tensor([[-1, 1, 1, -1, 3, -1, -1]])}
    cut = one_sentence_batch(batch, block_size=4)
    assert cut["input_ids"].tolist() == [[2, 4, 9, 3]]
    assert cut["mlm_labels"].tolist() == [[-100, 8, -100, -100]]
    assert cut["attention_mask"].all() and (cut["token_type_ids"] == 0).all()
