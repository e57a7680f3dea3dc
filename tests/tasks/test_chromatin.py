"""The chromatin task's pieces on hand-made inputs: group medians and strand averaging, bins and splits,
candidate regions, the bundle's slab-buffered training stream."""

from collections import Counter

import h5py
import numpy as np
import pytest

from dnabird.errors import InputFormatError
from dnabird.finetune.metrics import median_auroc_intervals
from dnabird.finetune.report import multilabel_rows
from dnabird.tasks.chromatin import BundleExamples, candidate_mask, read_bins, reverse_complement_rows
from dnabird.tasks.deepsea import BundleSplit

NAMES = ["d1", "d2", "t1", "t2", "t3", "lr"]
GROUPS = {"DNase": ["d1", "d2"], "TF": ["t1", "t2", "t3"], "long-range": ["lr"]}
# 6 examples; hand-computed AUROCs below
LABELS = np.array([[1, 1, 1, 0, 1, 1],
                   [1, 0, 0, 1, 1, 0],
                   [0, 1, 1, 0, 1, 1],
                   [0, 0, 0, 1, 1, 0],
                   [0, 1, 1, 0, 0, 0],
                   [1, 0, 0, 1, 0, 1]])
FORWARD = np.array([[0.9, 0.8, 0.2, 0.1, 0.9, 0.6],
                    [0.8, 0.1, 0.3, 0.9, 0.8, 0.5],
                    [0.3, 0.7, 0.9, 0.2, 0.7, 0.4],
                    [0.2, 0.3, 0.1, 0.8, 0.6, 0.3],
                    [0.1, 0.6, 0.8, 0.3, 0.2, 0.2],
                    [0.7, 0.2, 0.4, 0.7, 0.1, 0.1]])
REVERSE = FORWARD.copy()
REVERSE[:, 2] = [0.8, 0.1, 0.9, 0.3, 0.7, 0.2]       # the other strand fixes t1


def test_group_medians_and_strand_averaging_by_hand():
    mean = (FORWARD + REVERSE) / 2
    rows = multilabel_rows(LABELS, {"model": mean, "forward": FORWARD}, NAMES, GROUPS, clusters=None,
                           resamples=50, seed=0, masks={"long-range": np.array([1, 1, 1, 1, 0, 0], bool)})
    forward, model = rows["forward"], rows["model"]
    # d1: positives .9 .8 .7 > negatives .3 .2 .1 -> 1; d2: positives .8 .7 .6 > .3 .2 .1 -> 1
    # t1 forward: positives .2 .9 .8 vs negatives .3 .1 .4: pairs won 1+3+3 = 7 of 9
    # t2: positives .9 .8 .7 vs .1 .2 .3 -> 1; t3: positives .9 .8 .7 .6 vs .2 .1 -> 1
    assert forward["labels"]["t1"]["auroc"] == pytest.approx(7 / 9)
    assert forward["groups"]["DNase"]["median_auroc"] == 1.0 and forward["groups"]["TF"]["median_auroc"] == 1.0
    # averaged t1: positives .5 .9 .8 vs negatives .2 .1 .3 -> 1
    assert model["labels"]["t1"]["auroc"] == 1.0
    # long-range on examples 0-3 only: positives .6 .4 vs negatives .5 .3 -> 3 of 4 pairs
    assert model["labels"]["lr"]["auroc"] == pytest.approx(0.75) and model["groups"]["long-range"]["examples"] == 4
    assert list(model["groups"]) == list(GROUPS)
    lo, hi = model["ci95"]["long-range"]
    assert 0 <= lo <= 0.75 <= hi <= 1


def test_median_interval_by_hand_and_skipped_labels():
    labels = np.array([[1, 0], [0, 0], [1, 0], [0, 0]])
    scores = np.array([[0.9, 0.1], [0.1, 0.2], [0.8, 0.3], [0.2, 0.4]])
    rows = multilabel_rows(labels, {"m": scores}, ["a", "b"], {"G": ["a", "b"]}, clusters=None, resamples=20, seed=1)
    group = rows["m"]["groups"]["G"]
    assert group["skipped"] == 1 and group["labels"] == 2 and group["median_auroc"] == 1.0
    # perfectly separated: every resample with both classes gives 1.0
    assert median_auroc_intervals(labels, scores, ["a", "b"], {"G": ["a", "b"]}, resamples=30) == {"G": [1.0, 1.0]}


def test_candidate_mask_uses_deepseas_overlap_rule():
    regions = {"chr1": [(1000, 1800)]}
    starts = np.array([900, 901, 1600, 1700, 1000])
    mask = candidate_mask(["chr1", "chr1", "chr1", "chr1", "chr2"], starts, starts + 200, regions)
    assert mask.tolist() == [False, True, True, False, False]    # 100 (not > 100), 101, 200, 100 bp, other chrom


def test_bins_with_a_split_column_and_deepseas_layout(tmp_path):
    toy = tmp_path / "bins.bed"
    toy.write_text("chr1\t0\t200\ttrain\nchr1\t200\t400\ttrain\nchr7\t0\t200\tvalid\nchr8\t0\t200\ttest\n")
    bins = read_bins(toy, {"train": 2, "validation": 1, "test": 1}, Counter())
    assert [(b.split, b.row) for b in bins] == [("train", 0), ("train", 1), ("validation", 0), ("test", 0)]
    with pytest.raises(InputFormatError, match="lists 2 train bins but the train .mat file holds 3"):
        read_bins(toy, {"train": 3, "validation": 1, "test": 1}, Counter())
    twice = tmp_path / "twice.bed"
    twice.write_text("chr1\t0\t200\ttrain\nchr1\t0\t200\ttest\n")
    with pytest.raises(InputFormatError, match="chr1:0-200 is in both the train and test splits"):
        read_bins(twice, {"train": 1, "validation": 0, "test": 1}, Counter())
    # allTFs.pos.bed: chr8/9 test; then train rows, then valid rows (inside DeepSEA's chr7 region), rest unused
    deepsea = tmp_path / "allTFs.pos.bed"
    deepsea.write_text("chr1\t0\t200\nchr8\t0\t200\nchr7\t30508800\t30509000\nchrX\t0\t200\n")
    counts = Counter()
    bins = read_bins(deepsea, {"train": 1, "validation": 1, "test": 1}, counts)
    assert [(b.chrom, b.split) for b in bins] == [("chr1", "train"), ("chr8", "test"), ("chr7", "validation")]
    assert counts == {"bins_unused": 1}
    deepsea.write_text("chr1\t0\t200\nchr8\t0\t200\nchr2\t0\t200\n")
    with pytest.raises(InputFormatError, match="validation bin chr2:0-200 lies outside chr7"):
        read_bins(deepsea, {"train": 1, "validation": 1, "test": 1}, Counter())


def test_reverse_complement_rows():
    rows = np.frombuffer(b"ACGTNA", np.uint8).reshape(1, -1)
    assert reverse_complement_rows(rows).tobytes() == b"TNACGT"


class CharTokenizer:
    """One token per base (ids 5..8 for A, C, G, T, 9 for N), [CLS] 2, [SEP] 3, [PAD] 0."""

    pad_id, cls_id, sep_id = 0, 2, 3

    def encode(self, texts):
        return [[5 + "ACGTN".index(c) for c in t] for t in texts]

    def pad_batch(self, rows, *, block_size, length=None, truncate=False):
        if truncate and length is not None:
            rows = [r[:length - 2] for r in rows]
        rows = [[2, *r, 3] for r in rows]
        length = length or -(-max(map(len, rows)) // block_size) * block_size
        ids = np.zeros((len(rows), length), np.int64)
        for i, r in enumerate(rows):
            ids[i, :len(r)] = r
        return ids, ids != 0


def test_bundle_stream_reads_every_row_once_per_epoch_in_whole_slabs(tmp_path):
    n, length = 40, 6
    x = np.zeros((n, 4, length), np.uint8)
    x[np.arange(n), np.arange(n) % 4, 0] = 1              # first base codes the row (A, G, C, T by row % 4)
    y = np.arange(n, dtype=np.uint8)[:, None] * np.ones((1, 2), np.uint8)   # label = row number
    path = tmp_path / "train.mat"
    with h5py.File(path, "w") as handle:
        handle.create_dataset("trainxdata", data=x.transpose(2, 1, 0))
        handle.create_dataset("traindata", data=y.T)
    split = BundleSplit(path)
    reads = []
    original = split.read

    def counting_read(start, stop):
        reads.append((start, stop))
        return original(start, stop)

    split.read = counting_read
    stream = BundleExamples(split, n, CharTokenizer(), block_size=4, length=12, slab=5, buffer_slabs=2, seed=0)
    for epoch in (0, 1):
        seen = [int(stream[epoch * n + i]["labels"][0]) for i in range(n)]
        assert sorted(seen) == list(range(n))
        assert all(stop - start == 5 for start, stop in reads)        # whole slabs only
        assert len(reads) == 8 * (epoch + 1)                          # each slab read once per epoch
    first = stream[0]
    row = int(first["labels"][0])
    assert first["input_ids"][:3].tolist() == [2, 5 + "ACGTN".index("AGCT"[row % 4]), 5 + "ACGTN".index("N")]
