import gzip

from dnabird.cli import main


def test_corpus_command_writes_parts_and_report(tmp_path, capsys):
    fasta = tmp_path / "genome.fa"
    fasta.write_text(">chr1\n" + "ACGT" * 1000 + "\n>chr9\n" + "GATTACA" * 500 + "\n")
    out = tmp_path / "corpus"
    argv = ["--quiet", "corpus", "--fasta", str(fasta), "--out", str(out), "--passes", "1", "--seed", "2",
            "--sentence-bp", "100", "200", "--document-sentences", "5", "10", "--max-offset-bp", "50"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "heldout: " in printed and "report.json" in printed
    assert (out / "report.json").exists()
    lines = gzip.open(out / "heldout" / "part-00-chr9.tsv.gz", "rt").read().splitlines()
    assert all(100 <= len(line.split("\t")[4]) <= 200 for line in lines)


def test_corpus_command_reports_a_missing_contig(tmp_path, capsys):
    fasta = tmp_path / "genome.fa"
    fasta.write_text(">chr1\nACGT\n")
    argv = ["corpus", "--fasta", str(fasta), "--out", str(tmp_path / "out"), "--contigs", "chr2"]
    assert main(argv) == 1
    assert "'chr2'" in capsys.readouterr().err
