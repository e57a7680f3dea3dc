"""DeepSEA's label table and `.mat` readers on hand-made names and generated files of known content."""

import h5py
import numpy as np
import pytest
import scipy.io

from dnabird.errors import InputFormatError
from dnabird.tasks.deepsea import (
    BundleSplit,
    decode_onehot,
    load_table,
    open_bundle,
    slab_order,
    table_from_names,
    unique_names,
)

# A, G, C, T columns (DeepSEA's order), hand-written
ONE = {"A": [1, 0, 0, 0], "G": [0, 1, 0, 0], "C": [0, 0, 1, 0], "T": [0, 0, 0, 1], "N": [0, 0, 0, 0]}


def onehot(text):
    return np.array([ONE[b] for b in text], dtype=np.uint8).T      # (4, L)


def test_decode_agct_with_n_and_the_reverse_complement_half():
    x = np.stack([onehot("AGCTN"), onehot("GGATC")])
    assert [bytes(r).decode() for r in decode_onehot(x)] == ["AGCTN", "GGATC"]
    # the bundle's second half: the same rows reverse-complemented = both axes reversed in A, G, C, T order
    rc = x[:, ::-1, ::-1]
    assert [bytes(r).decode() for r in decode_onehot(rc)] == ["NAGCT", "GATCC"]
    with pytest.raises(InputFormatError, match="row 1: a position is not one-hot"):
        decode_onehot(np.stack([onehot("AAAA"), np.ones((4, 4), np.uint8)]))


def test_unique_names_selene_style():
    names = ["K562|CTCF|None", "NA|NA|NA", "K562|CTCF|None ", "NA|NA|NA", "K562|CTCF|None", "K562|CTCF|None|1"]
    assert unique_names(names) == ["K562|CTCF|None", "NA|NA|NA", "K562|CTCF|None|1", "NA|NA|NA|1",
                                   "K562|CTCF|None|2", "K562|CTCF|None|1|1"]


def deepsea_like_names():
    dnase = [f"Cell{i}|DNase|None" for i in range(125)]
    tf = [f"Cell{i % 5}|TF{i % 160}|None" for i in range(689)] + ["NA|NA|NA"]
    hm = [f"Cell{i % 8}|H3K{i % 40}me3|None" for i in range(104)]
    return dnase + tf + hm


def test_table_from_deepsea_names_has_its_published_groups(tmp_path):
    path = tmp_path / "predictor.names"
    path.write_text("\n".join(deepsea_like_names()) + "\n")
    table = table_from_names(path)
    assert len(table) == 919 and table.counts() == {"DNase": 125, "TF": 690, "HM": 104}
    assert len(set(table.names)) == 919 and table.originals[814] == "NA|NA|NA"
    assert table.groups[124] == "DNase" and table.groups[125] == "TF" and table.groups[815] == "HM"
    assert table.names[125] == "Cell0|TF0|None"
    assert table.names[125 + 160] == "Cell0|TF0|None|1"   # a repeat of column 125
    again = load_table(table.write(tmp_path / "feature_table.tsv"))
    assert again.names == table.names and again.groups == table.groups and again.originals == table.originals


def test_table_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.names"
    bad.write_text("A|DNase|None\nno pipes here\n")
    with pytest.raises(InputFormatError, match=r"bad.names, line 2: feature name 'no pipes here'"):
        table_from_names(bad)
    order = tmp_path / "order.names"
    order.write_text("A|CTCF|None\nA|DNase|None\n")
    with pytest.raises(InputFormatError, match="not contiguous blocks in the order"):
        table_from_names(order)
    small = tmp_path / "small.names"
    small.write_text("A|DNase|None\nA|CTCF|None\nA|H3K4me3|None\n")
    assert table_from_names(small).groups == ("DNase", "TF", "HM")


def known_bundle(n=6, length=10, features=3, seed=0):
    rng = np.random.default_rng(seed)
    x = np.zeros((n, 4, length), np.uint8)
    codes = rng.integers(0, 5, size=(n, length))
    for i in range(n):
        for j in range(length):
            if codes[i, j] < 4:
                x[i, codes[i, j], j] = 1
    y = rng.integers(0, 2, size=(n, features)).astype(np.uint8)
    return x, y


def write_v73(path, x, y, keys=("trainxdata", "traindata")):
    with h5py.File(path, "w", userblock_size=512) as handle:
        handle.create_dataset(keys[0], data=x.transpose(2, 1, 0), chunks=(x.shape[2], 4, 2))
        handle.create_dataset(keys[1], data=y.T)


def test_v73_and_v5_readers_return_the_same_rows(tmp_path):
    x, y = known_bundle()
    write_v73(tmp_path / "train.mat", x, y)
    scipy.io.savemat(tmp_path / "valid.mat", {"validxdata": x, "validdata": y}, format="5")
    for name, version in (("train.mat", "7.3"), ("valid.mat", "5")):
        with BundleSplit(tmp_path / name, features=3, length=10) as split:
            assert (split.version, split.rows, split.half, split.length) == (version, 6, 3, 10)
            got_x, got_y = split.read(1, 4)
            np.testing.assert_array_equal(got_x, x[1:4])
            np.testing.assert_array_equal(got_y, y[1:4])
            rows_x, _ = split.read_rows(np.array([0, 5]))
            np.testing.assert_array_equal(rows_x, x[[0, 5]])


def test_bundle_errors_name_file_and_key(tmp_path):
    x, y = known_bundle()
    write_v73(tmp_path / "keys.mat", x, y, keys=("trainx", "traindata"))
    with pytest.raises(InputFormatError, match=r"keys.mat: keys \['traindata', 'trainx'\]: expected exactly"):
        BundleSplit(tmp_path / "keys.mat")
    write_v73(tmp_path / "count.mat", x, y)
    with pytest.raises(InputFormatError, match="count.mat: traindata has 3 label columns but the label table has 919"):
        BundleSplit(tmp_path / "count.mat", features=919)
    scipy.io.savemat(tmp_path / "shape.mat", {"testxdata": x[:, :3], "testdata": y}, format="5")
    with pytest.raises(InputFormatError, match=r"shape.mat: v5 shapes testxdata \(6, 3, 10\)"):
        BundleSplit(tmp_path / "shape.mat")
    scipy.io.savemat(tmp_path / "odd.mat", {"testxdata": x[:5], "testdata": y[:5]}, format="5")
    with pytest.raises(InputFormatError, match="5 rows: expected an even count"):
        BundleSplit(tmp_path / "odd.mat")
    (tmp_path / "text.mat").write_text("not a mat file\n")
    with pytest.raises(InputFormatError, match="text.mat: not a MATLAB v5 or v7.3 file"):
        BundleSplit(tmp_path / "text.mat")


def test_a_truncated_bundle_and_a_split_of_another_length_are_refused_naming_the_file(tmp_path):
    x, y = known_bundle(length=10)
    write_v73(tmp_path / "train.mat", x, y)
    whole = (tmp_path / "train.mat").read_bytes()
    (tmp_path / "cut.mat").write_bytes(whole[:len(whole) // 2])  # an interrupted download
    with pytest.raises(InputFormatError, match="cut.mat: truncated"):
        BundleSplit(tmp_path / "cut.mat")
    scipy.io.savemat(tmp_path / "valid.mat", {"validxdata": x[:, :, :9], "validdata": y}, format="5")
    scipy.io.savemat(tmp_path / "test.mat", {"testxdata": x, "testdata": y}, format="5")
    paths = {"train": tmp_path / "train.mat", "validation": tmp_path / "valid.mat", "test": tmp_path / "test.mat"}
    with pytest.raises(InputFormatError, match="valid.mat: validxdata holds 9-bp sequences, expected 10"):
        open_bundle(paths, features=3)
    scipy.io.savemat(tmp_path / "valid.mat", {"validxdata": x, "validdata": y}, format="5")
    assert {split: b.length for split, b in open_bundle(paths, features=3).items()} == {
        "train": 10, "validation": 10, "test": 10}


def test_slab_order_visits_every_row_once_reading_whole_slabs():
    order = slab_order(1003, slab=10, buffer_slabs=4, seed=3, epoch=1)
    assert sorted(order.tolist()) == list(range(1003))
    for first in range(0, 1003, 40):           # each buffer of 4 slabs: rows of at most 4 slabs
        assert len({r // 10 for r in order[first:first + 40]}) <= 4
    assert not np.array_equal(order, slab_order(1003, slab=10, buffer_slabs=4, seed=3, epoch=2))
    assert not np.array_equal(order[:40], np.sort(order[:40]))    # shuffled inside the buffer
