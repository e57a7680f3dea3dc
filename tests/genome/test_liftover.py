import gzip

import pytest

from dnabird.errors import InputFormatError, ParameterError
from dnabird.genome.liftover import LiftedPosition, Liftover

# A worked example: two chains, the second onto the minus strand of its query; the expected positions
# below are computed by hand from the UCSC chain format (blocks of `size dt dq`, 0-based half-open).
WORKED_EXAMPLE = """chain 1000 chr1 1000 + 100 300 chrA 2000 + 500 695 1
50 10 5
140

chain 900 chr2 500 + 0 100 chrB 400 - 10 110 2
100
"""

# Own cases: a same-chromosome shift, a strand flip, and two chains over one region.
SAME_NAMES = """chain 500 chr5 1000 + 0 200 chr5 1200 + 100 300 3
200

chain 400 chr6 1000 + 0 100 chr6 1000 - 0 100 4
100

chain 300 chr7 100 + 0 50 chr7 10000 + 1000 1050 5
50

chain 200 chr7 100 + 0 50 chr7 10000 + 5000 5050 6
50
"""


def write(tmp_path, text, name="test.over.chain"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture
def worked(tmp_path):
    return Liftover(write(tmp_path, WORKED_EXAMPLE))


@pytest.mark.parametrize("pos, expected", [(100, 500), (149, 549), (160, 555), (299, 694)])
def test_worked_example_mapped_positions(worked, pos, expected):
    result = worked.convert("chr1", pos)
    assert result.targets == (LiftedPosition("chrA", expected, "+", 1000),)
    assert result.status == "other_chromosome"  # chr1 → chrA


@pytest.mark.parametrize("pos", [150, 155, 159, 300, 99, 0])
def test_worked_example_gaps_and_outside_are_unmapped(worked, pos):
    result = worked.convert("chr1", pos)
    assert (result.status, result.targets, result.target) == ("unmapped", (), None)


@pytest.mark.parametrize("pos, expected", [(0, 389), (99, 290)])
def test_worked_example_minus_target(worked, pos, expected):
    assert worked.convert("chr2", pos).targets == (LiftedPosition("chrB", expected, "-", 900),)


def test_absent_chromosome(worked):
    assert worked.convert("chr3", 10).status == "absent_chromosome"


@pytest.fixture
def own(tmp_path):
    return Liftover(write(tmp_path, SAME_NAMES))


def test_clean_mapping_and_alias(own):
    result = own.convert("chr5", 10)
    assert result.ok and result.target == LiftedPosition("chr5", 110, "+", 500)
    assert own.convert("5", 199).target == LiftedPosition("chr5", 299, "+", 500)
    assert own.convert("chr5", 10, "-").target == LiftedPosition("chr5", 110, "-", 500)


def test_strand_flip(own):
    # target position on a minus chain: tSize - 1 - (tStart + offset) = 1000 - 1 - 10
    result = own.convert("chr6", 10)
    assert result.status == "strand_flip" and result.target == LiftedPosition("chr6", 989, "-", 400)
    assert own.convert("chr6", 10, "-").target.strand == "+"


def test_multiple_targets_sorted_by_score(own):
    result = own.convert("chr7", 10)
    assert result.status == "multiple_targets" and result.target is None
    assert result.targets == (LiftedPosition("chr7", 1010, "+", 300), LiftedPosition("chr7", 5010, "+", 200))


def test_gzip_chain(tmp_path):
    path = tmp_path / "test.over.chain.gz"
    path.write_bytes(gzip.compress(WORKED_EXAMPLE.encode()))
    assert Liftover(path).convert("chr1", 160).target.pos == 555


def test_bad_arguments(worked):
    with pytest.raises(ParameterError, match="strand"):
        worked.convert("chr1", 100, "+1")
    with pytest.raises(ParameterError, match="pos"):
        worked.convert("chr1", -1)


@pytest.mark.parametrize("text, line, message", [
    (WORKED_EXAMPLE.replace("140", "141"), 3, "do not match"),
    (WORKED_EXAMPLE.replace("chain 900", "chain 900.5"), 5, "900.5"),
    (WORKED_EXAMPLE.replace("50 10 5", "50 10 5 7"), 2, ""),
    (">chr1\nACGT\n", 1, "expected a 'chain' header"),
    (WORKED_EXAMPLE + "\nstray words here\n", 8, "expected a 'chain' header"),
])
def test_unparsable_chain_names_file_and_line(tmp_path, text, line, message):
    with pytest.raises(InputFormatError, match=rf"bad\.chain, line {line}.*{message}"):
        Liftover(write(tmp_path, text, "bad.chain"))


def test_empty_or_missing_chain(tmp_path):
    with pytest.raises(InputFormatError, match=r"empty\.chain.*no 'chain' records"):
        Liftover(write(tmp_path, "", "empty.chain"))
    with pytest.raises(InputFormatError, match="not found"):
        Liftover(tmp_path / "absent.chain")
