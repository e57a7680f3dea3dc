import numpy as np
import pytest

from dnabird.model.task_spec import parse_anchor
from dnabird.tasks.negatives import GenomicNegatives, cpg_class, deepromoter_negative, gc_fraction, part_bounds
from dnabird.tasks.promoter import DEEPROMOTER_TAG, PromoterExamples, Redraw


def ascii(text: str) -> np.ndarray:
    return np.frombuffer(text.encode(), dtype=np.uint8)


class CharTokenizer:
    """One token per base (ids 5-9), [CLS]=2 and [SEP]=3 around it, [PAD]=0: a stand-in for the DNA BPE."""

    pad_id = 0

    def encode_batch(self, texts, *, block_size, length=None):
        longest = max(len(t) for t in texts) + 2
        length = length or -(-longest // block_size) * block_size
        codes = np.full(256, 9, dtype=np.int64)
        codes[list(b"ACGT")] = [5, 6, 7, 8]
        ids = np.zeros((len(texts), length), dtype=np.int64)
        for row, text in enumerate(texts):
            ids[row, 0], ids[row, len(text) + 1] = 2, 3
            ids[row, 1:len(text) + 1] = codes[np.frombuffer(text.encode(), np.uint8)]
        return ids, ids != 0


def test_deepromoter_keeps_exactly_8_of_20_parts_and_randomises_the_rest():
    rng = np.random.default_rng(0)
    positive = ascii("".join(rng.choice(list("ACGT"), 8000)))
    assert part_bounds(8000, 20).tolist() == list(range(0, 8001, 400))
    randomised = []
    for seed in range(5):
        negative = deepromoter_negative(positive, np.random.default_rng(seed))
        same = [np.array_equal(negative[i:i + 400], positive[i:i + 400]) for i in range(0, 8000, 400)]
        assert sum(same) == 8 and len(negative) == 8000
        randomised.append(np.concatenate([negative[i * 400:(i + 1) * 400] for i in range(20) if not same[i]]))
        assert np.array_equal(deepromoter_negative(positive, np.random.default_rng(seed)), negative)
    bases = np.concatenate(randomised)
    shares = [np.mean(bases == ord(b)) for b in "ACGT"]
    assert shares == pytest.approx([0.25] * 4, abs=0.01)           # uniform, not the positive's composition


def test_deepromoter_negatives_are_a_pure_function_of_seed_epoch_and_index():
    rng = np.random.default_rng(1)
    positives = np.stack([ascii("".join(rng.choice(list("ACGT"), 200))) for _ in range(6)])
    tok = CharTokenizer()

    def examples():
        first = np.stack([deepromoter_negative(p, np.random.default_rng((7, 0, i, DEEPROMOTER_TAG)))
                          for i, p in enumerate(positives)])
        ids = tok.encode_batch([s.tobytes().decode() for s in np.stack([positives, first], 1).reshape(12, -1)],
                               block_size=1, length=202)[0]
        return PromoterExamples(ids[0::2], ids[1::2], seed=7, shuffle=True, redraw=Redraw(positives, tok, 1))

    a, b = examples(), examples()                    # e.g. before a kill and after the resume
    for g in [0, 5, 11, 12, 17, 30, 35]:
        assert np.array_equal(a[g]["input_ids"], b[g]["input_ids"]) and a[g]["labels"] == b[g]["labels"]
    assert sorted(a.order(1)) == list(range(12)) and not np.array_equal(a.order(0), a.order(1))
    assert a.example(3, 0)["labels"] == 0 and a.example(2, 0)["labels"] == 1
    assert not np.array_equal(a.example(3, 0)["input_ids"], a.example(3, 1)["input_ids"])  # redrawn each epoch
    positive = a.example(2, 1)["input_ids"][1:201] - 5
    negative = a.example(3, 1)["input_ids"][1:201] - 5
    assert sum(np.array_equal(positive[i:i + 10], negative[i:i + 10]) for i in range(0, 200, 10)) == 8


def gc_ladder() -> np.ndarray:
    """10 regions of 2 kb whose 100-bp bins hold exactly 10·k G (region k), the rest A; an N run at 18.5 kb."""
    bins = [("G" * (10 * k) + "A" * (100 - 10 * k)) * 20 for k in range(10)]
    sequence = "".join(bins)
    return ascii(sequence[:18_500] + "N" * 50 + sequence[18_550:])


def test_genomic_negatives_match_gc_keep_away_from_sites_and_never_repeat():
    anchor = parse_anchor("tss:-300:+200")                             # 500-bp windows
    sequence = gc_ladder()
    pool = GenomicNegatives(["c1"], {"c1": sequence}.__getitem__, {"c1": [3000, 15000]}, anchor,
                            min_site_distance=1000, step=100)
    rng = np.random.default_rng(0)
    drawn = [pool.draw(0.3, 0.001, rng) for _ in range(16)]
    # region 3 is [6000, 8000): 16 lattice starts 6000..7500 hold windows of GC exactly 0.3
    assert all(w is not None and w.gc == pytest.approx(0.3) for w in drawn)
    starts = sorted(anchor.interval(w.position, w.strand)[0] for w in drawn)
    assert starts == list(range(6000, 7600, 100))                      # each stretch once, either strand
    assert pool.draw(0.3, 0.001, rng) is None                          # all used up
    for w in drawn:
        start, end = anchor.interval(w.position, w.strand)
        assert gc_fraction(sequence[start:end]) == pytest.approx(0.3)
    loose = []
    while (w := pool.draw(0.15, 0.06, rng)) is not None:
        loose.append(w)
    # GC 0.09-0.21: lattice windows from 2000 to 5600 (both strands), minus those anchored within 1 kb of 3000
    expected = [(s, strand) for s in range(2000, 5600, 100) for strand, offset in (("+", 300), ("-", 199))
                if abs(s + offset - 3000) >= 1000 and abs(gc_fraction(sequence[s:s + 500]) - 0.15) <= 0.06]
    assert len(loose) == len({s for s, _ in expected}) > 0
    for w in loose:                                                     # brute-force the distance rule
        assert min(abs(w.position - 3000), abs(w.position - 15000)) >= 1000
        assert abs(w.gc - 0.15) <= 0.06
    assert pool.draw(0.95, 0.02, rng) is None                           # no window that GC-rich


def test_genomic_negatives_skip_n_and_blocked_windows():
    anchor = parse_anchor("tss:-300:+200")
    pool = GenomicNegatives(["c1"], {"c1": gc_ladder()}.__getitem__, {}, anchor, max_n_fraction=0.0,
                            blocked={"c1": [(6200, 6300)]})
    starts = set()
    rng = np.random.default_rng(1)
    while (w := pool.draw(0.5, 0.5, rng)) is not None:
        starts.add(anchor.interval(w.position, w.strand)[0])
    assert len(starts) == 196 - 5 - 5                      # 196 lattice windows; 5 touch the N run, 5 the block
    assert not any(s < 18_550 and s + 500 > 18_500 for s in starts)
    assert not any(s < 6300 and s + 500 > 6200 for s in starts)


def test_cpg_class_by_gc_and_cpg_observed_over_expected_around_the_tss():
    island = "AT" * 100 + "CG" * 250 + "AT" * 100   # the 500 bp around index 350: GC 1.0, CpG o/e 2.0
    assert cpg_class(ascii(island), 350) == "CpG island"
    assert cpg_class(ascii("CCAAGG" * 150), 450) == "non-CpG"   # GC 0.67 but no CpG at all
    assert cpg_class(ascii("ACGT" * 250), 500) == "non-CpG"     # CpG o/e 4.0 but GC 0.5
    assert cpg_class(ascii("AT" * 250 + "CG" * 250), 250) == "non-CpG"   # the island lies beside the TSS window
