import numpy as np
import pytest
from Bio import SeqIO

from dnabird.datasets.writers import atomic_output, write_fasta, write_table
from dnabird.io import file_sha256


@pytest.mark.parametrize("length", [1, 59, 60, 61, 120, 121])
def test_fasta_wraps_at_60_and_biopython_reads_it_back(tmp_path, length):
    rng = np.random.default_rng(length)
    text = "".join(rng.choice(list("ACGTNacgt"), size=length))
    path = tmp_path / "x.fa"
    records = [("chrA", np.frombuffer(text.encode(), np.uint8)), ("chrB", np.frombuffer(b"ac", np.uint8))]
    fai = write_fasta(path, records)
    records = {r.id: str(r.seq) for r in SeqIO.parse(path, "fasta")}
    assert records == {"chrA": text, "chrB": "ac"}
    lines = path.read_text().splitlines()
    assert lines[1:1 + length // 60] == [text[i:i + 60] for i in range(0, 60 * (length // 60), 60)]
    assert max(map(len, lines)) <= 60
    first = fai.read_text().splitlines()[0].split("\t")
    line_bases = min(length, 60)  # samtools: the first line's length
    assert first == ["chrA", str(length), "6", str(line_bases), str(line_bases + 1)]


def test_atomic_output_leaves_nothing_when_the_block_fails(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_output(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old" and list(tmp_path.iterdir()) == [target]


def test_table_and_sha256(tmp_path):
    path = tmp_path / "t.tsv"
    write_table(path, [("chr1", 0, 5), ("chr2", 7, 9)], header="chrom\tstart\tend")
    assert path.read_bytes() == b"chrom\tstart\tend\nchr1\t0\t5\nchr2\t7\t9\n"
    # sha256 of that byte string, computed with `sha256sum`
    assert file_sha256(path) == "e6e2d894ebad6024aadef4d276c24db7e77b3eff3fbb0919adfa1d4f31fee311"
