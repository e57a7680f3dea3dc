import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from dnabird.pretraining.evaluate import (
    _Tally,
    evaluate_heldout,
    one_sentence_batch,
    sampled_sentences,
    token_bp_lengths,
    unigram_log_probs,
)

PAD_ID, CLS_ID, SEP_ID, MASK_ID = 0, 2, 3, 4  # dnabird's layout, given to the code under test explicitly


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
    log_p = unigram_log_probs(sampled_sentences(docs), 8, frozenset(range(5)))
    # counts 5:3+1, 6:1+1, 7:0+1 -> total 7
    assert np.exp(log_p[5:]).tolist() == pytest.approx([4 / 7, 2 / 7, 1 / 7])
    assert np.isneginf(log_p[:5]).all()
    scattered = unigram_log_probs(sampled_sentences(docs), 8, frozenset({0, 6}))  # an imported tokenizer's specials
    # counts 1-4: 0+1 each, 5: 3+1, 7: 0+1 -> total 9
    assert np.exp(scattered[[1, 2, 3, 4, 5, 7]]).tolist() == pytest.approx([1 / 9] * 4 + [4 / 9, 1 / 9])
    assert np.isneginf(scattered[[0, 6]]).all()


def test_the_unigram_sample_takes_evenly_spaced_documents():
    docs = [SimpleNamespace(sentences=[np.array([i])]) for i in range(10)]
    # linspace(0, 9, 4) = 0, 3, 6, 9
    assert [int(s[0]) for s in sampled_sentences(docs, max_documents=4)] == [0, 3, 6, 9]
    assert len(list(sampled_sentences(docs))) == 10


def test_token_bp_lengths_read_the_pieces():
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "ACGT", "N", "-"]
    tokenizer = SimpleNamespace(vocab_size=8, id_to_piece=pieces.__getitem__, special_ids=frozenset({0, 1, 2, 3, 4, 7}))
    assert token_bp_lengths(tokenizer).tolist() == [0, 0, 0, 0, 0, 4, 1, 0]


def test_one_sentence_batch_keeps_each_sentence_and_its_masking():
    # [CLS] s1 s1 [SEP] s3 [SEP] [PAD]; sentence 3 has no masked token, so it is left out
    batch = {"input_ids": torch.tensor([[2, 4, 9, 3, 11, 3, 0]]),
             "mlm_labels": torch.tensor([[-100, 8, -100, -100, -100, -100, -100]]),
             "sentence_index": torch.tensor([[-1, 1, 1, -1, 3, -1, -1]])}
    cut = one_sentence_batch(batch, SimpleNamespace(block_size=4, pad_id=PAD_ID, cls_id=CLS_ID, sep_id=SEP_ID))
    assert cut["input_ids"].tolist() == [[2, 4, 9, 3]]
    assert cut["mlm_labels"].tolist() == [[-100, 8, -100, -100]]
    assert cut["attention_mask"].all() and (cut["token_type_ids"] == 0).all()


class _PeekingModel(torch.nn.Module):
    """Puts all mass on the token the input shows (uniform over 8 ids where it shows [MASK])."""

    nsp = None

    def forward(self, input_ids, attention_mask, token_type_ids, mlm_labels=None, nsp_labels=None):
        shown = input_ids[mlm_labels != -100]
        logits = torch.full((len(shown), 8), -1e4)
        logits[torch.arange(len(shown)), shown] = 0.0
        logits[shown == MASK_ID] = 0.0
        return SimpleNamespace(mlm_logits=logits, nsp_logits=torch.zeros(len(input_ids), 2))


def test_at_mask_scores_only_positions_shown_as_mask():
    # one example, positions 1-4 selected: shown as [MASK], [MASK], unchanged (6), random (7 for 5)
    example = {"input_ids": np.array([CLS_ID, MASK_ID, MASK_ID, 6, 7, 5, SEP_ID]),
               "mlm_labels": np.array([-100, 5, 6, 6, 5, -100, -100]),
               "token_type_ids": np.zeros(7, int), "attention_mask": np.ones(7, bool),
               "sentence_index": np.array([-1, 0, 0, 0, 0, 0, -1]), "nsp_label": 0}
    examples = type("Examples", (), {"__getitem__": lambda self, i: example, "block_size": 7,
                                     "mask_rate": 0.15, "max_length": 7, "pad_id": PAD_ID, "mask_id": MASK_ID})()
    token_bp = np.array([0, 0, 0, 0, 0, 2, 2, 2])
    report = evaluate_heldout(_PeekingModel(), examples, token_bp=token_bp, num_examples=1, one_sentence=False)
    # [MASK] positions: uniform over 8 ids -> 3 bits each, 2 bp each; unchanged: 0 bits; random: ~1e4 nats
    assert report["at_mask"]["model"]["masked_tokens"] == 2
    assert report["at_mask"]["model"]["bits_per_base"] == pytest.approx(1.5)
    assert report["model"]["masked_tokens"] == 4
    assert report["model"]["bits_per_base"] > 1000  # the random replacement is scored in the full figure
