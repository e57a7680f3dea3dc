import gzip
import os
import pickle
import random
from pathlib import Path

import pytest
from Bio import SeqIO, bgzf
from Bio.Seq import Seq

from dnabird.errors import InputFormatError, ParameterError
from dnabird.genome import reference
from dnabird.genome.reference import Genome, contig_alias

# chr1 = ACGTACGTac gtNNRYacgt TTGA (24 bp), soft-masked and with IUPAC codes R, Y.
FASTA = ">chr1 test contig\nACGTACGTac\ngtNNRYacgt\nTTGA\n>chr2\nGGCCAATT\n>chrM\nACGT\n"


def write(tmp_path, text, name="genome.fa"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture
def genome(tmp_path):
    return Genome(write(tmp_path, FASTA))


def test_contigs_and_lengths(genome):
    assert genome.contigs == ["chr1", "chr2", "chrM"]
    assert genome.lengths == {"chr1": 24, "chr2": 8, "chrM": 4}
    assert genome.length("2") == 8


def test_forward_fetch_keeps_soft_mask_and_reads_iupac_as_n(genome):
    assert genome.fetch("chr1", 0, 10).sequence == "ACGTACGTac"
    assert genome.fetch("chr1", 8, 20).sequence == "acgtNNNNacgt"


def test_lowercase_iupac_stays_masked(tmp_path):
    genome = Genome(write(tmp_path, ">c\nACryGT\n"))
    assert genome.fetch("c", 0, 6).sequence == "ACnnGT"


def test_soft_mask_upper(tmp_path):
    genome = Genome(write(tmp_path, FASTA), soft_mask="upper")
    assert genome.fetch("chr1", 6, 14).sequence == "GTACGTNN"


def test_reverse_strand_preserves_case(genome):
    window = genome.fetch("chr1", 6, 12, strand="-")
    assert window.sequence == "acgtAC" == str(Seq("GTacgt").reverse_complement())
    assert (window.pad_left, window.pad_right) == (0, 0)


@pytest.mark.parametrize("start, end, expected, pad_left, pad_right", [
    (-3, 4, "NNNGGCC", 3, 0),
    (6, 10, "TTNN", 0, 2),
    (-1, 9, "NGGCCAATTN", 1, 1),
    (10, 12, "NN", 0, 2),
    (-5, -2, "NNN", 3, 0),
    (3, 3, "", 0, 0),
])
def test_windows_off_the_end_are_padded_never_shortened(genome, start, end, expected, pad_left, pad_right):
    window = genome.fetch("chr2", start, end)
    assert (window.sequence, window.pad_left, window.pad_right) == (expected, pad_left, pad_right)


def test_padding_is_reported_in_returned_orientation_on_minus(genome):
    window = genome.fetch("chr2", 6, 10, strand="-")
    assert (window.sequence, window.pad_left, window.pad_right) == ("NNAA", 2, 0)


def test_random_windows_match_biopython(tmp_path):
    rng = random.Random(7)
    seqs = {f"chr{i}": "".join(rng.choice("ACGTacgtN") for _ in range(rng.randint(50, 400)))
            for i in (1, 2, 3)}
    text = "".join(f">{name}\n" + "\n".join(s[i:i + 60] for i in range(0, len(s), 60)) + "\n"
                   for name, s in seqs.items())
    path = write(tmp_path, text)
    reference = {record.id: record.seq for record in SeqIO.parse(path, "fasta")}
    genome = Genome(path)
    for _ in range(200):
        name = rng.choice(list(seqs))
        start = rng.randint(0, len(seqs[name]) - 1)
        end = rng.randint(start, len(seqs[name]))
        strand = rng.choice("+-")
        expected = reference[name][start:end]
        if strand == "-":
            expected = expected.reverse_complement()
        assert genome.fetch(name, start, end, strand).sequence == str(expected)


def test_aliases_both_ways_but_never_mitochondria(tmp_path, genome):
    assert genome.fetch("1", 0, 4).sequence == "ACGT"
    ensembl = Genome(write(tmp_path, ">1\nACGT\n>X\nTTTT\n>MT\nGGGG\n", "ensembl.fa"))
    assert ensembl.fetch("chr1", 0, 4).sequence == "ACGT"
    assert ensembl.fetch("chrX", 1, 3).sequence == "TT"
    with pytest.raises(InputFormatError, match="no contig named 'chrM'.*1, X, MT"):
        ensembl.fetch("chrM", 0, 1)
    with pytest.raises(InputFormatError, match="'MT'"):
        genome.fetch("MT", 0, 1)
    assert contig_alias("chr22") == "22" and contig_alias("Y") == "chrY"
    assert contig_alias("chrM") is None and contig_alias("chr23") is None
    assert contig_alias("chr1_random") is None


def test_unknown_contig_lists_available(genome):
    with pytest.raises(InputFormatError, match=r"genome\.fa.*'chr9'.*chr1, chr2, chrM"):
        genome.fetch("chr9", 0, 1)


def test_bad_arguments(genome):
    with pytest.raises(ParameterError, match="strand"):
        genome.fetch("chr1", 0, 4, strand="x")
    with pytest.raises(ParameterError, match="start <= end"):
        genome.fetch("chr1", 5, 4)
    with pytest.raises(ParameterError, match="soft_mask"):
        Genome(genome.path, soft_mask="lower")


def test_invalid_base_names_record_and_position(tmp_path):
    genome = Genome(write(tmp_path, ">c\nAC*T\n"))
    with pytest.raises(InputFormatError, match=r"record 'c'.*'\*' at 0-based position 2"):
        genome.fetch("c", 0, 4)


def test_empty_and_missing_files(tmp_path):
    with pytest.raises(InputFormatError, match="empty.fa.*empty"):
        Genome(write(tmp_path, "", "empty.fa"))
    with pytest.raises(InputFormatError, match="not found"):
        Genome(tmp_path / "absent.fa")


@pytest.mark.parametrize("text, line, message", [
    (">chr1\nACGT\n>\nACGT\n", 3, "no sequence name"),
    (">chr1\nACGT\n> chr2\nACGT\n", 3, "header '> chr2': expected '>chr2'"),
    (">chr1\nACGT\n>chr2\nAC\n>chr1 again\nACGT\n", 5, r"record 'chr1'.*duplicate.*line 1"),
])
def test_malformed_headers_name_the_line(tmp_path, text, line, message):
    with pytest.raises(InputFormatError, match=rf"genome\.fa, line {line}.*{message}"):
        Genome(write(tmp_path, text))


def test_inconsistent_line_width_is_reported(tmp_path):
    with pytest.raises(InputFormatError, match=r"genome\.fa.*(line|Line)"):
        Genome(write(tmp_path, ">chr1\nACGT\nAC\nACGT\n"))


def test_missing_index_is_built(tmp_path):
    path = write(tmp_path, FASTA)
    assert not (tmp_path / "genome.fa.fai").exists()
    Genome(path)
    # chr2's sequence starts after 18 + 11 + 11 + 5 bytes of chr1 and the 6-byte header ">chr2\n"
    assert (tmp_path / "genome.fa.fai").read_text().splitlines()[1] == "chr2\t8\t51\t8\t9"


def test_fasta_in_a_read_only_folder_is_indexed_in_the_cache_folder(tmp_path, monkeypatch):
    folder = tmp_path / "read_only"
    folder.mkdir()
    path = write(folder, FASTA)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder.chmod(0o555)
    if os.geteuid() == 0:  # root may write anywhere: refuse writes into the folder as they are refused to a user
        real_access, real_write = os.access, reference.write_text_atomic

        def refused(target, text):
            if Path(target).parent == folder:
                raise PermissionError(13, "Permission denied", str(target))
            real_write(target, text)

        monkeypatch.setattr(os, "access", lambda p, mode: real_access(p, mode) and not (
            Path(p) == folder and mode & os.W_OK))
        monkeypatch.setattr(reference, "write_text_atomic", refused)
    try:
        assert Genome(path).fetch("chr2", 0, 8).sequence == "GGCCAATT"
        cached = list((tmp_path / "cache" / "dnabird" / "fai").glob("*-genome.fa.fai"))
        assert not (folder / "genome.fa.fai").exists() and len(cached) == 1
        assert cached[0].read_text().splitlines()[1] == "chr2\t8\t51\t8\t9"
        assert Genome(path).lengths == {"chr1": 24, "chr2": 8, "chrM": 4}  # the cached index, read again
    finally:
        folder.chmod(0o755)


def make_stale(tmp_path, newer_fasta):
    """An index built for one FASTA, then the FASTA replaced by different content."""
    path = write(tmp_path, ">chr1\nAAAACCCC\n>chr2\nGGGG\n")
    Genome(path).close()
    path.write_text(">chr1\nTTTTTTTTTTTT\n>chr2\nACGT\n")
    index = tmp_path / "genome.fa.fai"
    fasta_time, index_time = (2_000_000_000, 1_000_000_000) if newer_fasta else (1_000_000_000, 2_000_000_000)
    os.utime(path, (fasta_time, fasta_time))
    os.utime(index, (index_time, index_time))
    return path


@pytest.mark.parametrize("newer_fasta", [True, False])
def test_stale_index_is_rebuilt(tmp_path, newer_fasta):
    genome = Genome(make_stale(tmp_path, newer_fasta))
    assert genome.lengths == {"chr1": 12, "chr2": 4}
    assert genome.fetch("chr2", 0, 4).sequence == "ACGT"


@pytest.mark.parametrize("newer_fasta", [True, False])
def test_stale_index_is_reported_when_not_rebuilding(tmp_path, newer_fasta):
    with pytest.raises(InputFormatError, match=r"genome\.fa\.fai"):
        Genome(make_stale(tmp_path, newer_fasta), rebuild_index=False)


def test_index_missing_an_appended_record_is_stale(tmp_path):
    path = write(tmp_path, ">chr1\nACGT\n")
    Genome(path).close()
    index = tmp_path / "genome.fa.fai"
    with open(path, "a") as handle:
        handle.write(">chr2\nGG\n")
    os.utime(path, (1_000_000_000, 1_000_000_000))
    assert Genome(path).contigs == ["chr1", "chr2"]
    assert index.read_text().count("\n") == 2


def test_bgzip_fasta_reads_and_plain_gzip_is_refused(tmp_path):
    with bgzf.BgzfWriter(str(tmp_path / "genome.fa.gz"), "wb") as handle:
        handle.write(FASTA.encode())
    assert Genome(tmp_path / "genome.fa.gz").fetch("chr1", 6, 12, "-").sequence == "acgtAC"
    (tmp_path / "plain.fa.gz").write_bytes(gzip.compress(FASTA.encode()))
    with pytest.raises(InputFormatError, match=r"plain\.fa\.gz.*bgzip"):
        Genome(tmp_path / "plain.fa.gz")


def test_pickles_by_path(tmp_path):
    genome = Genome(write(tmp_path, FASTA), soft_mask="upper")
    copy = pickle.loads(pickle.dumps(genome))
    assert copy.soft_mask == "upper" and copy.fetch("chr1", 8, 12).sequence == "ACGT"


@pytest.mark.parametrize("rebuild_index", [True, False])
def test_corrupt_index_is_rebuilt_or_reported(tmp_path, rebuild_index):
    path = write(tmp_path, FASTA)
    (tmp_path / "genome.fa.fai").write_text("chr1\tnot-a-number\n")
    if rebuild_index:
        assert Genome(path).fetch("chr2", 0, 4).sequence == "GGCC"
    else:
        with pytest.raises(InputFormatError, match=r"genome\.fa\.fai.*unreadable: not enough values"):
            Genome(path, rebuild_index=False)


def random_fasta(rng: random.Random) -> str:
    """Records with random line widths, CRLF or LF, blank lines between records and at the end, empty records
    and sometimes no final newline: what `cat a.fa b.fa` and other tools produce."""
    newline = rng.choice(["\n", "\r\n"])
    text = newline * rng.choice([0, 0, 1])
    records = rng.randint(1, 6)
    for number in range(records):
        width, empty = rng.randint(1, 70), number < records - 1 and rng.random() < 0.3  # samtools refuses a
        bases = "".join(rng.choice("ACGTNacgtn") for _ in range(0 if empty else rng.randint(1, 300)))  # last header
        lines = [bases[i: i + width] for i in range(0, len(bases), width)]
        text += f">seq{number} description{newline}" + "".join(line + newline for line in lines)
        text += newline * rng.choice([0, 0, 1, 2, 3])
    return text.rstrip("\r\n") if rng.random() < 0.2 else text


def test_index_and_windows_match_samtools_on_generated_files(tmp_path):
    pysam = pytest.importorskip("pysam")
    rng = random.Random(7)
    for case in range(60):
        text = random_fasta(rng)
        ours, theirs = tmp_path / f"ours{case}.fa", tmp_path / f"theirs{case}.fa"
        ours.write_bytes(text.encode())
        theirs.write_bytes(text.encode())
        genome = Genome(ours)
        pysam.faidx(str(theirs))
        # samtools keeps an empty record whose header is followed by a CRLF blank line (length 0); dnabird never
        samtools_rows = [row for row in (tmp_path / f"theirs{case}.fa.fai").read_text().splitlines()
                         if row.split("\t")[1] != "0"]
        assert (tmp_path / f"ours{case}.fa.fai").read_text().splitlines() == samtools_rows, text
        with pysam.FastaFile(str(theirs)) as reference:
            assert genome.contigs == [name for name in reference.references if reference.get_reference_length(name)]
            for name in genome.contigs:
                start = rng.randint(0, genome.length(name) - 1)
                end = rng.randint(start, genome.length(name))
                assert genome.fetch(name, start, end).sequence == reference.fetch(name, start, end)
        genome.close()
        assert Genome(ours, rebuild_index=False).contigs == genome.contigs  # its own index is not stale


def test_concatenated_files_with_a_blank_line_between_them(tmp_path):
    path = write(tmp_path, ">a\nACGT\nAC\n\n" + ">b\nGGCC\n \n\n")  # cat a.fa b.fa, a.fa ending in an empty line
    genome = Genome(path)
    assert [genome.fetch(c, 0, genome.length(c)).sequence for c in genome.contigs] == ["ACGTAC", "GGCC"]


def test_whitespace_inside_a_sequence_line_is_refused(tmp_path):
    # samtools skips it when reading; pyfaidx would return it as a base, so dnabird refuses the file
    with pytest.raises(InputFormatError, match=r"genome\.fa, line 2, record 'a': whitespace inside a sequence"):
        Genome(write(tmp_path, ">a\nAC GT\nACGT\n"))


@pytest.mark.parametrize("text, line, message", [
    (">a\nACGT\n\nACGT\n", 4, "record 'a': sequence continues after a shorter or blank line"),
    (">a\nACGT\nAC\nAC\n", 4, "record 'a': sequence continues after a shorter or blank line"),
    (">a\nAC\nACG\n", 3, "record 'a': line of 3 bases in 4 bytes where the record's first line has 2 in 3"),
    ("ACGT\n>a\nACGT\n", 1, "expected a '>' header line"),
    (">a\nACGT\nACGT\r\n", 3, "record 'a': line of 4 bases in 6 bytes"),
    (">a\nAC\n>b\n", None, "record 'b': the file ends with this record's header line"),
])
def test_what_samtools_refuses_is_refused_naming_the_line(tmp_path, text, line, message):
    where = "" if line is None else f", line {line}"
    with pytest.raises(InputFormatError, match=rf"genome\.fa{where}\W+{message}"):
        Genome(write(tmp_path, text))
    pysam = pytest.importorskip("pysam")
    theirs = write(tmp_path, text, "theirs.fa")
    with pytest.raises(pysam.SamtoolsError):
        pysam.faidx(str(theirs))
