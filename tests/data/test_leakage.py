"""The leakage check against hand-built duplicates, reverse complements, overlaps and shared k-mers, and its
k-mer search against a brute-force set of canonical k-mer strings."""

import numpy as np

from dnabird.data.leakage import Leakage, overlapping, sharing_kmers

COMPLEMENT = str.maketrans("ACGT", "TGCA")


def rc(sequence: str) -> str:
    return sequence.translate(COMPLEMENT)[::-1]


def random_dna(rng, length: int) -> str:
    return "".join(rng.choice(list("ACGT"), length))


def test_duplicates_reverse_complements_conflicting_labels_and_shared_32mers():
    rng = np.random.default_rng(0)
    train = [random_dna(rng, 80) for _ in range(6)]
    leakage = Leakage(train + [train[0]], [0, 1, 0, 1, 0, 1, 0], k=32)
    test = [train[0],                                   # identical, same label
            rc(train[1]),                               # reverse complement, other label
            train[2],                                   # identical, other label
            random_dna(rng, 20) + train[3][10:42] + random_dna(rng, 20),   # shares exactly one 32-mer
            random_dna(rng, 20) + rc(train[4][40:72]) + random_dna(rng, 20),  # shares one, reverse complemented
            random_dna(rng, 20) + train[5][10:41] + random_dna(rng, 20),   # only 31 bp in common
            train[5][:40] + "N" + train[5][41:]]        # an N breaks every 32-mer across it, others remain
    flags = leakage.check(test, [0, 0, 1, 1, 1, 1, 1])
    assert leakage.train_duplicates == 1
    assert flags["identical_to_train"].tolist() == [True, True, True, False, False, False, False]
    assert flags["identical_other_label"].tolist() == [False, True, True, False, False, False, False]
    assert flags["sharing_kmer_with_train"].tolist() == [True, True, True, True, True, False, True]
    assert "overlapping_train_region" not in flags


def test_region_overlaps_and_exact_coordinates():
    train = (np.array(["chr1", "chr1", "chr2"]), np.array([100, 500, 100]), np.array([200, 600, 150]))
    leakage = Leakage(["A" * 10] * 3, [0, 0, 0], k=0, regions=train, coordinates=train)
    chroms = np.array(["chr1", "chr1", "chr1", "chr1", "chr2", "chr3", "chr1"])
    starts = np.array([100, 199, 200, 50, 149, 100, 550])
    ends = np.array([200, 300, 250, 101, 160, 200, 560])
    flags = leakage.check(["C" * 10] * 7, [0] * 7, regions=(chroms, starts, ends), coordinates=(chroms, starts, ends))
    assert flags["same_coordinates_as_train"].tolist() == [True, False, False, False, False, False, False]
    assert flags["overlapping_train_region"].tolist() == [True, True, False, True, True, False, True]
    assert "sharing_kmer_with_train" not in flags


def test_overlaps_match_a_pairwise_reference():
    rng = np.random.default_rng(1)
    train = (rng.choice(["a", "b"], 300), rng.integers(0, 5000, 300))
    train_ends = train[1] + rng.integers(1, 80, 300)
    query = (rng.choice(["a", "b", "c"], 500), rng.integers(0, 5000, 500))
    query_ends = query[1] + rng.integers(1, 80, 500)
    got = overlapping(query[0], query[1], query_ends, train[0], train[1], train_ends)
    want = [any(c == tc and s < te and ts < e for tc, ts, te in zip(train[0], train[1], train_ends, strict=True))
            for c, s, e in zip(query[0], query[1], query_ends, strict=True)]
    assert got.tolist() == want and 0 < sum(want) < 500


def test_the_kmer_search_matches_a_set_of_canonical_strings():
    rng = np.random.default_rng(2)
    k = 12   # short enough that random sequences share some
    train = [random_dna(rng, int(rng.integers(15, 200))) for _ in range(60)]
    test = [random_dna(rng, int(rng.integers(5, 120))) for _ in range(200)]
    test = [s if i % 7 else s[:30] + "N" + s[30:] for i, s in enumerate(test)]

    def canonical(sequence):
        return {min(w, rc(w)) for i in range(len(sequence) - k + 1) if "N" not in (w := sequence[i:i + k])}

    reference = set().union(*(canonical(s) for s in train))
    want = [bool(canonical(s) & reference) for s in test]
    got = sharing_kmers(test, Leakage(train, [0] * len(train), k=k).kmers, k)
    assert got.tolist() == want and 0 < sum(want) < len(test)
