import functools
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest

from dnabird.data.pretraining import PretrainingExamples, _truncate_pair, collate
from dnabird.errors import InputFormatError, ParameterError
from dnabird.labels import IGNORE_INDEX
from dnabird.train.data import step_batches

PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID = range(5)  # dnabird's own layout, as `layout` states it
NUM_SPECIAL = 5


def layout(vocab_size, pad=PAD_ID, unk=UNK_ID, cls=CLS_ID, sep=SEP_ID, mask=MASK_ID, extra=()):
    """The part of a tokenizer `PretrainingExamples` reads: its vocabulary size and special ids."""
    return SimpleNamespace(vocab_size=vocab_size, pad_id=pad, unk_id=unk, cls_id=cls, sep_id=sep, mask_id=mask,
                           special_ids=frozenset({pad, unk, cls, sep, mask, *extra}))


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
    options = {"max_length": 64, "block_size": 16, "seed": 5} | kwargs
    tokenizer = options.pop("tokenizer", None) or layout(options.pop("vocab_size", 50))
    return PretrainingExamples(options.pop("documents", None) or make_documents(), tokenizer=tokenizer, **options)


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


def test_an_imported_tokenizers_special_ids_are_used_and_dnabirds_are_ordinary_tokens():
    """Specials scattered over the vocabulary (as an imported tokenizer may have them, plus a special "-"):
    examples use its [CLS]/[SEP]/[PAD]/[MASK], never mask or draw any of its specials, and treat dnabird's own
    special ids 0-4 as the ordinary tokens they are here."""
    tokenizer = layout(60, pad=7, unk=20, cls=11, sep=3, mask=59, extra=(33,))
    ordinary = np.setdiff1d(np.arange(60), sorted(tokenizer.special_ids))
    rng = np.random.default_rng(3)
    docs = [Doc(f"chr{k}", [rng.choice(ordinary, size=int(rng.integers(3, 15))) for _ in range(8)],
                np.stack([100 * np.arange(8), 100 * np.arange(8) + 100], axis=1)) for k in range(24)]
    data = examples(tokenizer=tokenizer, documents=docs, max_length=256, mask_rate=0.3)
    picked_ids, shown = [], []
    for g in range(200):
        ex = data[g]
        ids, labels, real = ex["input_ids"], ex["mlm_labels"], ex["attention_mask"]
        picked = labels != IGNORE_INDEX
        assert ids[0] == 11 and (ids[~real] == 7).all() and (ids[real][-1] == 3)
        assert not np.isin(labels[picked], sorted(tokenizer.special_ids)).any()
        swapped = picked & (ids != 59) & (ids != labels)
        assert not np.isin(ids[swapped], sorted(tokenizer.special_ids)).any()
        picked_ids += labels[picked].tolist()
        shown += ids[picked].tolist()
    assert {0, 1, 2, 4} <= set(picked_ids)                     # dnabird's special ids are DNA here
    assert np.mean(np.array(shown) == 59) == pytest.approx(0.8, abs=0.03)  # the tokenizer's [MASK]
    batch = collate([data[0], data[1]], pad_id=tokenizer.pad_id)
    assert (batch["input_ids"][~batch["attention_mask"]] == 7).all()


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
        a, b, label = data.sentence_pair(int(data.order(epoch)[index]), rng)
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
              "world_size": 1, "collate_fn": functools.partial(collate, pad_id=PAD_ID)}
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
