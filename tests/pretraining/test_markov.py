import math
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest

from dnabird.pretraining.markov import MarkovBaseline

PIECES = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "A", "C", "G", "T", "N", "ACG", "TT", "GA"]
TOKENIZER = SimpleNamespace(vocab_size=len(PIECES), id_to_piece=PIECES.__getitem__, special_ids=frozenset(range(5)))
CLS_ID, SEP_ID, MASK_ID = 2, 3, 4
ID = {piece: i for i, piece in enumerate(PIECES)}


def spell(*pieces):
    return np.array([ID[p] for p in pieces])


def reference_log2(training: list[str], context: str, base: str, order: int) -> float:
    """log2 p(base | last `order` bases of context), add-one over ACGTN, counted by hand from strings."""
    ctx = context[len(context) - order:] if order else ""
    pairs = Counter()
    for text in training:
        for i in range(order, len(text)):
            pairs[(text[i - order:i], text[i])] += 1
    total = sum(n for (c, _), n in pairs.items() if c == ctx)
    return math.log2((pairs[(ctx, base)] + 1) / (total + 5))


def test_markov_scores_equal_counts_by_hand_with_context_restarting_at_special_tokens():
    sentences = [spell("ACG", "TT", "GA", "C", "ACG"), spell("GA", "TT", "A", "ACG", "N", "C")]
    training = ["ACGTTGACACG", "GATTAACGNC"]
    baseline = MarkovBaseline.fit([SimpleNamespace(sentences=sentences)], TOKENIZER, max_order=3)
    # [CLS] ACG TT [SEP] GA C [SEP]; tokens 2 (TT) and 5 (C) selected
    ids = np.r_[CLS_ID, spell("ACG", "TT"), SEP_ID, spell("GA", "C"), SEP_ID]
    selected = np.zeros(len(ids), bool)
    selected[[2, 5]] = True
    scores = baseline.log2_probs(ids, selected)
    for order in (1, 2, 3):
        # TT after ACG: each T given up to `order` preceding bases of "ACG" + the first T
        tt = (reference_log2(training, "ACG", "T", order)
              + reference_log2(training, "ACGT", "T", order))
        # C after GA in a new segment ([SEP] restarts): at most 2 bases of context
        c = reference_log2(training, "GA", "C", min(order, 2))
        assert scores[order] == pytest.approx([tt, c])


def test_a_higher_order_chain_wins_on_a_periodic_sequence():
    period = ["ACG", "TT", "GA"] * 40
    baseline = MarkovBaseline.fit([SimpleNamespace(sentences=[spell(*period)])], TOKENIZER, max_order=4)
    ids = np.r_[CLS_ID, spell(*period[:30]), SEP_ID]
    selected = np.zeros(len(ids), bool)
    selected[10:20] = True
    scores = {k: v.sum() for k, v in baseline.log2_probs(ids, selected).items()}
    assert scores[4] > scores[1] + 5  # "ACGTTGA" repeats: 4 bases of context nearly determine the next


def test_the_report_scores_true_bases_behind_the_mask_in_row_major_order():
    import torch

    from dnabird.pretraining.evaluate import markov_log_probs

    baseline = MarkovBaseline.fit([SimpleNamespace(sentences=[spell("ACG", "TT", "GA", "C", "A", "T")])],
                                  TOKENIZER, max_order=6)
    truth = [np.r_[CLS_ID, spell("ACG", "TT", "GA"), SEP_ID], np.r_[CLS_ID, spell("C", "A", "ACG"), SEP_ID]]
    picked = [[1, 3], [2]]
    shown, labels = [], []
    for ids, pick in zip(truth, picked, strict=True):
        row, label = ids.copy(), np.full(len(ids), -100)
        row[pick], label[pick] = MASK_ID, ids[pick]
        shown.append(row)
        labels.append(label)
    batch = {"input_ids": torch.tensor(np.array(shown)), "mlm_labels": torch.tensor(np.array(labels))}
    got = markov_log_probs(baseline, batch)["markov_2"].numpy() / math.log(2)
    # by hand: row 0 "ACG" has no context, "GA" follows "ACGTT"; row 1 "A" follows "C"
    training = ["ACGTTGACAT"]
    acg = sum(reference_log2(training, "ACG"[:i], "ACG"[i], min(i, 2)) for i in range(3))
    ga = reference_log2(training, "ACGTT", "G", 2) + reference_log2(training, "ACGTTG", "A", 2)
    a = reference_log2(training, "C", "A", 1)
    assert got == pytest.approx([acg, ga, a])


def test_piece_table_skips_the_tokenizers_special_ids_and_reads_iupac_letters_as_n():
    from dnabird.pretraining.markov import piece_table

    pieces = ["A", "[CLS]", "RYC", "-", "NNA"]  # an imported tokenizer: specials at 1 and 3
    tokenizer = SimpleNamespace(vocab_size=5, id_to_piece=pieces.__getitem__, special_ids=frozenset({1, 3}))
    table, lengths = piece_table(tokenizer)
    assert lengths.tolist() == [1, 0, 3, 0, 3]
    assert table[2].tolist() == [4, 4, 1] and table[4].tolist() == [4, 4, 0]  # codes of A, C, G, T, N
