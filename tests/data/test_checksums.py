import hashlib
import os
import shutil
import subprocess

import pytest

from dnabird.data.checksums import parse_checksum_list
from dnabird.errors import InputFormatError
from dnabird.io import BsdSum, file_digests


@pytest.mark.parametrize("data, expected", [
    (b"", "0 0"),
    (b"\x01\x02", "32770 1"),  # rotate(0)+1 = 1; rotate(1) = 0x8000, +2 = 32770
    (b"hello world\n", "3762 1"),  # as printed by `sum`: "03762     1"
    (b"a" * 1025, None),  # two 1-KiB blocks
])
def test_bsd_sum_matches_hand_computed_values(data, expected):
    hasher = BsdSum()
    hasher.update(data[:5])
    hasher.update(data[5:])
    if expected is None:
        assert hasher.hexdigest().endswith(" 2")
    else:
        assert hasher.hexdigest() == expected


@pytest.mark.skipif(shutil.which("sum") is None, reason="no Unix `sum` to compare with")
def test_bsd_sum_matches_unix_sum(tmp_path):
    path = tmp_path / "random.bin"
    path.write_bytes(os.urandom(150_001))
    checksum, blocks = subprocess.run(["sum", "-r", str(path)], capture_output=True, text=True,
                                      check=True).stdout.split()[:2]
    assert file_digests(path, ["bsd_sum"], progress=False)["bsd_sum"] == f"{int(checksum)} {int(blocks)}"


def test_file_digests_match_hashlib_in_one_pass(tmp_path):
    data = os.urandom(3_000_000)
    (tmp_path / "f").write_bytes(data)
    digests = file_digests(tmp_path / "f", ["md5", "sha256"], progress=False)
    assert digests == {"md5": hashlib.md5(data).hexdigest(), "sha256": hashlib.sha256(data).hexdigest()}


def test_parse_md5sum_and_ensembl_checksums():
    md5sum = "0123456789abcdef0123456789ABCDEF  hg19.fa.gz\nffffffffffffffffffffffffffffffff *hg19.2bit\n"
    expected = {"md5": "0123456789abcdef0123456789abcdef"}
    assert parse_checksum_list(md5sum, "hg19.fa.gz", "md5sum.txt") == expected
    assert parse_checksum_list(md5sum, "hg19.2bit", "md5sum.txt") == {"md5": "f" * 32}
    ensembl = "27189\t851624\tHomo_sapiens.GRCh37.75.dna.primary_assembly.fa.gz\n00042 12 README\n"
    assert parse_checksum_list(ensembl, "README", "CHECKSUMS") == {"bsd_sum": "42 12"}
    assert parse_checksum_list(ensembl, "Homo_sapiens.GRCh37.75.dna.primary_assembly.fa.gz",
                               "CHECKSUMS") == {"bsd_sum": "27189 851624"}


def test_parse_checksum_list_errors_name_the_list():
    with pytest.raises(InputFormatError, match="CHECKSUMS: no checksum listed for 'x.fa.gz'"):
        parse_checksum_list("1 2 y.fa.gz\n", "x.fa.gz", "CHECKSUMS")
    with pytest.raises(InputFormatError, match="CHECKSUMS, line 2"):
        parse_checksum_list("1 2 y\nabc x.fa.gz\n", "x.fa.gz", "CHECKSUMS")
