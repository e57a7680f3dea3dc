import gzip
import io
import logging
import os
import tarfile

import pyfaidx
import pytest

from dnabird.data.unpack import gunzip, index_fasta, untar, unzip
from dnabird.errors import InputFormatError


def test_gunzip_stops_at_trailing_garbage(tmp_path, caplog):
    original = os.urandom(300_000)
    (tmp_path / "x.gz").write_bytes(gzip.compress(original) + b"\x01w not a gzip member")
    with caplog.at_level(logging.WARNING):
        ignored = gunzip(tmp_path / "x.gz", tmp_path / "x", progress=False)
    assert (tmp_path / "x").read_bytes() == original
    assert ignored == len(b"\x01w not a gzip member")
    assert "trailing garbage" in caplog.text


def test_gunzip_continues_across_members_and_ignores_a_single_trailing_byte(tmp_path):
    parts = [b"ACGT" * 100_000, os.urandom(50_000), b"N" * 3_000_000]
    (tmp_path / "x.gz").write_bytes(b"".join(gzip.compress(p) for p in parts) + b"\x00")
    assert gunzip(tmp_path / "x.gz", tmp_path / "x", progress=False) == 1
    assert (tmp_path / "x").read_bytes() == b"".join(parts)


def test_gunzip_rejects_truncated_and_non_gzip_input(tmp_path):
    (tmp_path / "cut.gz").write_bytes(gzip.compress(os.urandom(100_000))[:-5000])
    with pytest.raises(InputFormatError, match="cut.gz"):
        gunzip(tmp_path / "cut.gz", tmp_path / "cut", progress=False)
    assert sorted(os.listdir(tmp_path)) == ["cut.gz"]  # no output, no temporary left behind
    (tmp_path / "plain.gz").write_bytes(b">chr1\nACGT\n")
    with pytest.raises(InputFormatError, match="not a gzip file"):
        gunzip(tmp_path / "plain.gz", tmp_path / "plain", progress=False)


def make_tar(path, members):
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)


def file_member(name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def link_member(name, target, kind=tarfile.SYMTYPE):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


def test_untar_extracts_a_normal_archive(tmp_path):
    make_tar(tmp_path / "a.tar.gz", [file_member("bundle/train.mat", b"x" * 10),
                                     file_member("bundle/readme", b"hello"),
                                     link_member("bundle/latest.mat", "train.mat")])
    dest = tmp_path / "dest"
    dest.mkdir()
    assert untar(tmp_path / "a.tar.gz", dest) == ["bundle"]
    assert (dest / "bundle" / "readme").read_bytes() == b"hello"
    assert (dest / "bundle" / "latest.mat").read_bytes() == b"x" * 10


@pytest.mark.parametrize("member", [
    file_member("../evil.txt", b"pwned"),
    file_member("ok/../../evil.txt", b"pwned"),
    file_member("/evil-absolute.txt", b"pwned"),
    link_member("ok/link", "../../evil.txt"),
    link_member("ok/abs", "/etc/passwd"),
    link_member("ok/hard", "../../evil.txt", tarfile.LNKTYPE),
])
def test_untar_refuses_members_escaping_the_destination(tmp_path, member):
    make_tar(tmp_path / "a.tar.gz", [file_member("ok/first.txt", b"fine"), member])
    dest = tmp_path / "sub" / "dest"
    dest.mkdir(parents=True)
    with pytest.raises(InputFormatError) as err:
        untar(tmp_path / "a.tar.gz", dest)
    assert "a.tar.gz" in str(err.value) and member[0].name in str(err.value)
    assert os.listdir(dest) == []  # nothing, not even the safe first member, reached dest
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "sub" / "evil.txt").exists()


def test_untar_does_not_overwrite_entries_it_did_not_write(tmp_path):
    make_tar(tmp_path / "a.tar.gz", [file_member("readme", b"from archive")])
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "readme").write_bytes(b"user's")
    with pytest.raises(InputFormatError, match="would overwrite readme"):
        untar(tmp_path / "a.tar.gz", dest)
    assert (dest / "readme").read_bytes() == b"user's"
    assert untar(tmp_path / "a.tar.gz", dest, replaceable={"readme"}) == ["readme"]
    assert (dest / "readme").read_bytes() == b"from archive"


def test_index_fasta_builds_a_fai_pyfaidx_reads(tmp_path):
    (tmp_path / "g.fa").write_text(">chrA\nACGTACGTAC\nGG\n>chrB\nTTTT\n")
    fai = index_fasta(tmp_path / "g.fa")
    assert fai.read_text().splitlines()[0].split("\t")[:2] == ["chrA", "12"]
    assert str(pyfaidx.Fasta(str(tmp_path / "g.fa"))["chrA"][8:12]) == "ACGG"


def test_index_fasta_names_the_file_on_bad_input(tmp_path):
    (tmp_path / "bad.fa").write_text(">chrA\nACGT\n>chrA\nACGT\n")
    with pytest.raises(InputFormatError, match="bad.fa"):
        index_fasta(tmp_path / "bad.fa")


def make_zip(path, members):
    import zipfile

    with zipfile.ZipFile(path, "w") as zipped:
        for name, data in members:
            zipped.writestr(name, data)


def test_unzip_extracts_like_untar(tmp_path):
    make_zip(tmp_path / "text8.zip", [("text8", b"anarchism originated"), ("docs/readme.txt", b"hi")])
    dest = tmp_path / "dest"
    dest.mkdir()
    assert unzip(tmp_path / "text8.zip", dest) == ["docs", "text8"]
    assert (dest / "text8").read_bytes() == b"anarchism originated" and (dest / "docs" / "readme.txt").exists()
    with pytest.raises(InputFormatError, match="would overwrite"):
        unzip(tmp_path / "text8.zip", dest)
    assert unzip(tmp_path / "text8.zip", dest, replaceable={"docs", "text8"}) == ["docs", "text8"]


@pytest.mark.parametrize("name", ["../evil.txt", "ok/../../evil.txt", "/evil-absolute.txt"])
def test_unzip_refuses_members_escaping_the_destination(tmp_path, name):
    make_zip(tmp_path / "a.zip", [("ok/first.txt", b"fine"), (name, b"pwned")])
    dest = tmp_path / "sub" / "dest"
    dest.mkdir(parents=True)
    with pytest.raises(InputFormatError, match="unsafe archive member") as err:
        unzip(tmp_path / "a.zip", dest)
    assert name in str(err.value) and os.listdir(dest) == []
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    with pytest.raises(InputFormatError, match="bad.zip: cannot extract"):
        unzip(tmp_path / "bad.zip", dest)
