import numpy as np
import pytest

from dnabird.errors import ConfigError, ParameterError
from dnabird.tasks.splits import chromosome_split, overlap_groups, random_split


def test_overlap_groups_by_hand():
    chroms = ["chr1", "chr1", "chr1", "chr2", "chr1", "chr1"]
    starts = [0, 50, 120, 60, 99, 200]
    ends = [100, 110, 130, 70, 120, 300]
    # chr1: [0,100) and [50,110) overlap, [99,120) touches both, [120,130) only abuts it (half-open): new group
    assert overlap_groups(chroms, starts, ends).tolist() == [0, 0, 1, 3, 0, 2]


def test_overlap_groups_match_brute_force_components():
    rng = np.random.default_rng(0)
    chroms = rng.choice(["a", "b"], 60)
    starts = rng.integers(0, 2000, 60)
    ends = starts + rng.integers(1, 120, 60)
    groups = overlap_groups(chroms, starts, ends)
    parent = list(range(60))                      # union-find over every overlapping pair

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(60):
        for j in range(i):
            if chroms[i] == chroms[j] and starts[i] < ends[j] and starts[j] < ends[i]:
                parent[find(i)] = find(j)
    for i in range(60):
        for j in range(60):
            assert (groups[i] == groups[j]) == (find(i) == find(j))


def test_chromosome_and_random_splits():
    assert chromosome_split(["chr1", "chr8", "chr7", "chr9"], test=["chr8", "chr9"],
                            validation=["chr7"]).tolist() == ["train", "test", "validation", "test"]
    with pytest.raises(ConfigError, match="chr8"):
        chromosome_split(["chr1"], test=["chr8"], validation=["chr8"])
    groups = np.repeat(np.arange(500), 3)          # groups of three windows
    split = random_split(groups, fractions=[0.6, 0.2, 0.2], seed=4)
    assert all(len(set(split[groups == g])) == 1 for g in range(500))   # a group never crosses splits
    shares = [np.mean(split[::3] == name) for name in ("train", "validation", "test")]
    assert shares == pytest.approx([0.6, 0.2, 0.2], abs=0.07)
    assert random_split(groups[::-1], fractions=[0.6, 0.2, 0.2], seed=4).tolist() == split[::-1].tolist()
    with pytest.raises(ParameterError, match="split_fractions"):
        random_split(groups, fractions=[0.5, 0.2, 0.2], seed=0)
