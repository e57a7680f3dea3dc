import numpy as np

from dnabird.datasets.toy_genome import _deaminate, encode, reverse_complement


def test_encode_and_reverse_complement_by_hand():
    assert encode("ACGTNacgtR").tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]
    assert reverse_complement(encode("AACGTN")).tolist() == encode("NACGTT").tolist()


def test_deamination_removes_the_requested_share_of_cpgs_and_creates_none():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 4, size=200_000).astype(np.uint8)
    before = codes.copy()
    cpg_before = np.flatnonzero((before[:-1] == 1) & (before[1:] == 2))
    _deaminate(codes, np.random.default_rng(1), rate=0.75)
    cpg_after = np.flatnonzero((codes[:-1] == 1) & (codes[1:] == 2))
    assert set(cpg_after) <= set(cpg_before)
    assert abs(len(cpg_after) / len(cpg_before) - 0.25) < 0.02
    changed = np.flatnonzero(codes != before)
    # every change is C→T at a CpG's C or G→A at a CpG's G
    assert all((before[i], codes[i]) in {(1, 3), (2, 0)} for i in changed)
    assert abs((before[changed] == 1).mean() - 0.5) < 0.03
