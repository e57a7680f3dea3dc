from dataclasses import dataclass

import numpy as np
import pytest

from dnabird.data.pretraining import (
    CLS_ID,
    MASK_ID,
    NUM_SPECIAL,
    PAD_ID,
    SEP_ID,
    PretrainingExamples,
    _truncate_pair,
    collate,
)
from dnabird.errors import InputFormatError, ParameterError
from dnabird.labels import IGNORE_INDEX
from dnabird.train.data import step_batches


@dataclass
class Doc:
    chrom: str
    sentences: list
    coords: np.ndarray

    @property
    def start(self):
        return int(self.coords[0, 0])

    @property
    def end(self):
        return int(self.coords[-1, 1])


def make_documents(num_docs=24, vocab=50, seed=0, per_doc=(2, 12)):
    """Documents of 100-bp sentences; document k starts at 600*k so neighbours overlap (if > 6 sentences)."""
    rng = np.random.default_rng(seed)
    docs = []
    for k in range(num_docs):
        n = int(rng.integers(*per_doc))
        sentences = [rng.integers(NUM_SPECIAL, vocab, size=int(rng.integers(3, 15))) for _ in range(n)]
        starts = 600 * (k % 12) + 100 * np.arange(n)
        docs.append(Doc(f"chr{1 + k // 12}", sentences, np.stack([starts, starts + 100], axis=1)))
    return docs


def examples(**kwargs):
    options = {"vocab_size": 50, "max_length": 64, "block_size": 16, "seed": 5} | kwargs
    return PretrainingExamples(options.pop("documents", None) or make_documents(), **options)


def _where(docs):
    """id(sentence array) -> (document index, sentence index): an independent map back to the corpus."""
    return {id(s): (d, i) for d, doc in enumerate(docs) for i, s in enumerate(doc.sentences)}


def test_masking_rate_and_80_10_10_split_and_specials_never_masked():
    data = examples(vocab_size=2000, documents=make_documents(vocab=2000), max_length=256)
    selected = candidates = masked = replaced = kept = 0
    for g in range(600):
        ex = data[g]
        ids, labels, real = ex["input_ids"], ex["mlm_labels"], ex["attention_mask"]
        picked = labels != IGNORE_INDEX
        original = np.where(picked, labels, ids)
        specials = (original < NUM_SPECIAL) | ~real
        assert not (picked & specials).any()
        assert set(ids[specials & real].tolist()) <= {CLS_ID, SEP_ID} and (ids[~real] == PAD_ID).all()
        candidates += int((~specials).sum())
        selected += int(picked.sum())
        masked += int((ids[picked] == MASK_ID).sum())
        kept += int((ids[picked] == labels[picked]).sum())
        replaced += int(((ids[picked] != MASK_ID) & (ids[picked] != labels[picked])).sum())
        assert (ids[picked] >= NUM_SPECIAL - 1).all()   # a swap never yields [PAD]/[UNK]/[CLS]/[SEP]
    assert selected / candidates == pytest.approx(0.15, abs=0.005)
    assert masked / selected == pytest.approx(0.8, abs=0.02)
    assert replaced / selected == pytest.approx(0.1, abs=0.015)
    assert kept / selected == pytest.approx(0.1, abs=0.015)


def test_mask_rate_is_configurable():
    data = examples(mask_rate=0.4, max_length=256)
    picked = sum(int((data[g]["mlm_labels"] != IGNORE_INDEX).sum()) for g in range(100))
    real = sum(int((data[g]["input_ids"][data[g]["attention_mask"]] >= 0).sum()) - 3 for g in range(100))
    assert picked / real == pytest.approx(0.4, abs=0.01)


def test_nsp_is_balanced_and_pairs_are_true_continuations_or_non_overlapping():
    docs = make_documents()
    data, where = examples(documents=docs), _where(docs)
    labels = []
    for g in range(1000):
        epoch, index = divmod(g, len(data))
        rng = np.random.default_rng((99, g))
        a, b, label = data.sentence_pair(int(data._order(epoch)[index]), rng)
        labels.append(label)
        (doc_a, first_a), (_, last_a) = where[id(a[0])], where[id(a[-1])]
        doc_b, first_b = where[id(b[0])]
        assert [where[id(s)] for s in a] == [(doc_a, i) for i in range(first_a, last_a + 1)]
        assert [where[id(s)] for s in b] == [(doc_b, i) for i in range(first_b, first_b + len(b))]
        if label == 0:
            assert (doc_b, first_b) == (doc_a, last_a + 1)
        else:
            a_start, a_end = docs[doc_a].coords[first_a, 0], docs[doc_a].coords[last_a, 1]
            other = docs[doc_b]
            assert other.chrom != docs[doc_a].chrom or other.end <= a_start or other.start >= a_end
    assert np.mean(labels) == pytest.approx(0.5, abs=0.04)


def test_packing_fills_but_never_exceeds_max_length_and_segments_are_correct():
    data = examples(max_length=64, block_size=16, documents=make_documents(per_doc=(20, 30)))
    fill = []
    for g in range(300):
        ex = data[g]
        ids, length = ex["input_ids"], len(ex["input_ids"])
        assert length <= 64 and length % 16 == 0
        real = int(ex["attention_mask"].sum())
        assert ex["attention_mask"][:real].all() and not ex["attention_mask"][real:].any()
        seps = np.flatnonzero(ids == SEP_ID)
        assert ids[0] == CLS_ID and len(seps) == 2 and seps[1] == real - 1
        expected = np.zeros(length, np.int64)
        expected[seps[0] + 1: seps[1] + 1] = 1
        assert (ex["token_type_ids"] == expected).all()
        fill.append(real / 64)
    assert np.mean(fill) > 0.9


def test_truncation_drops_whole_sentences_before_cutting_tokens():
    a = [np.arange(5), np.arange(6), np.arange(7)]
    b = [np.arange(4), np.arange(3)]
    short_a, short_b = _truncate_pair(a, b, budget=14)   # 18 + 7 tokens: A loses its first two sentences
    assert [len(s) for s in short_a] == [7] and [len(s) for s in short_b] == [4, 3]
    short_a, short_b = _truncate_pair([np.arange(10)], [np.arange(3)], budget=8)
    assert short_a[0].tolist() == [5, 6, 7, 8, 9] and short_b[0].tolist() == [0, 1, 2]
    short_a, short_b = _truncate_pair([np.arange(3)], [np.arange(9), np.arange(4)], budget=8)
    assert short_a[0].tolist() == [0, 1, 2] and short_b[0].tolist() == [0, 1, 2, 3, 4]


def test_examples_are_reproducible_and_epochs_differ():
    first, again = examples(), examples()
    for g in (0, 7, 30):
        assert all(np.array_equal(first[g][k], again[g][k]) for k in first[g])
    assert not all(np.array_equal(first[3]["input_ids"], first[3 + len(first) * e]["input_ids"])
                   for e in (1, 2, 3))


def test_order_does_not_depend_on_workers():
    data = examples()
    kwargs = {"start_step": 2, "stop_step": 4, "global_batch": 4, "micro_batch": 2, "rank": 0,
              "world_size": 1, "collate_fn": collate}
    serial = list(step_batches(data, **kwargs))
    parallel = list(step_batches(data, num_workers=2, **kwargs))
    for s, p in zip(serial, parallel, strict=True):
        for bs, bp in zip(s, p, strict=True):
            assert all((bs[k] == bp[k]).all() for k in bs)


def test_bad_parameters_and_a_corpus_without_partners_are_clear_errors():
    with pytest.raises(ParameterError, match="max_length"):
        examples(max_length=70)
    with pytest.raises(ParameterError, match="mask_rate"):
        examples(mask_rate=0.0)
    twins = [Doc("chr1", [np.arange(5, 9)] * 3, np.array([[0, 100], [100, 200], [200, 300]]))] * 2
    data = examples(documents=twins, random_next_rate=1.0)
    with pytest.raises(InputFormatError, match="no document found"):
        data[0]
