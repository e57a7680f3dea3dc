"""Labelled examples read from every supported layout: the same examples, built by hand, written as CSV with a
split column, TSV train/dev/test files, parquet, labelled FASTA, headerless BED, region CSV and Genomic
Benchmarks' per-class folders, must read back to the same (split, sequence or region, label) rows; bad input
fails naming the file, line and value."""

import gzip

import numpy as np
import pandas as pd
import pytest

from dnabird.data.labelled import infer_problem, label_values, read_labelled, region_sequences
from dnabird.errors import InputFormatError
from dnabird.genome.reference import Genome
from dnabird.tasks.labelled import LabelledData, read_examples

SPLIT_FILES = {"train": "train", "validation": "dev", "test": "test"}
COMPLEMENT = str.maketrans("ACGT", "TGCA")


def truth_sequences() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = [("".join(rng.choice(list("ACGT"), int(rng.integers(20, 40)))), str(i % 3), split)
            for split, count in (("train", 8), ("validation", 4), ("test", 5)) for i in range(count)]
    return pd.DataFrame(rows, columns=["sequence", "label", "split"])


def rows(table) -> list[tuple]:
    frame = table.frame
    key = ["sequence"] if table.kind == "sequences" else ["chrom", "start", "end", "strand"]
    return sorted(tuple(str(v) for v in r) for r in frame[["split", *key, "label"]].itertuples(index=False))


def expected(truth: pd.DataFrame, key: list[str]) -> list[tuple]:
    return sorted(tuple(str(v) for v in r) for r in truth[["split", *key, "label"]].itertuples(index=False))


def test_every_sequence_layout_reads_the_same_examples(tmp_path):
    truth = truth_sequences()
    want = expected(truth, ["sequence"])
    truth.to_csv(tmp_path / "all.csv", index=False)
    truth.to_parquet(tmp_path / "all.parquet")
    gue, nt = tmp_path / "gue", tmp_path / "nt"
    gue.mkdir()
    nt.mkdir()
    for split, stem in SPLIT_FILES.items():
        part = truth[truth["split"] == split]
        part[["sequence", "label"]].to_csv(gue / f"{stem}.tsv", sep="\t", index=False)
        records = "".join(f">seq{i}|chr1:1-2|{label}\n{s[:15]}\n{s[15:]}\n"
                          for i, (s, label) in enumerate(zip(part["sequence"], part["label"], strict=True)))
        (nt / f"{stem}.fna").write_text(records)
    named = LabelledData(train=str(gue / "train.tsv"), validation=str(gue / "dev.tsv"), test=str(gue / "test.tsv"))
    for data in (LabelledData(path=str(tmp_path / "all.csv")), LabelledData(path=str(tmp_path / "all.parquet")),
                 LabelledData(path=str(gue)), LabelledData(path=str(nt)), named):
        table = read_examples(data)
        assert table.kind == "sequences"
        assert rows(table) == want, data


def test_every_region_layout_reads_the_same_examples_and_bases(tmp_path):
    rng = np.random.default_rng(5)
    contigs = {"chr1": "".join(rng.choice(list("ACGT"), 400)), "chr2": "".join(rng.choice(list("ACGT"), 300))}
    fasta = tmp_path / "genome.fa"
    fasta.write_text("".join(f">{name}\n{seq}\n" for name, seq in contigs.items()))
    regions = [("chr1", 10, 40, "+", "positive", "train"), ("chr1", 100, 130, "-", "negative", "train"),
               ("chr2", 5, 25, "+", "positive", "train"), ("chr2", 200, 260, "-", "negative", "train"),
               ("chr1", 300, 320, "+", "positive", "validation"), ("chr2", 100, 150, "+", "negative", "validation"),
               ("chr1", 200, 250, "-", "positive", "test"), ("chr2", 270, 290, "+", "negative", "test")]
    truth = pd.DataFrame(regions, columns=["chrom", "start", "end", "strand", "label", "split"])
    want = expected(truth, ["chrom", "start", "end", "strand"])
    truth.to_csv(tmp_path / "regions.csv", index=False)
    truth.to_parquet(tmp_path / "regions.parquet")
    bed, benchmark = tmp_path / "bed", tmp_path / "genomic_benchmarks"
    bed.mkdir()
    for split, stem in SPLIT_FILES.items():
        part = truth[truth["split"] == split]
        (bed / f"{stem}.bed").write_text("".join(f"{c}\t{s}\t{e}\tr{i}\t0\t{st}\t{label}\n" for i, (c, s, e, st, label)
                                                 in enumerate(part[["chrom", "start", "end", "strand", "label"]]
                                                              .itertuples(index=False))))
        for label, group in part.groupby("label"):   # Genomic Benchmarks: <split>/<class>.csv.gz
            folder = benchmark / {"validation": "valid"}.get(split, split)
            folder.mkdir(parents=True, exist_ok=True)
            frame = group.rename(columns={"chrom": "region"})[["region", "start", "end", "strand"]]
            frame.insert(0, "id", range(len(frame)))
            with gzip.open(folder / f"{label}.csv.gz", "wt") as handle:
                frame.to_csv(handle, index=False)
    for data in (LabelledData(path=str(tmp_path / "regions.csv")), LabelledData(path=str(tmp_path / "regions.parquet")),
                 LabelledData(path=str(bed)), LabelledData(path=str(benchmark))):
        table = read_examples(data)
        assert table.kind == "regions"
        assert rows(table) == want, data
    table = read_examples(LabelledData(path=str(tmp_path / "regions.csv")))
    with Genome(fasta) as genome:
        own = region_sequences(table, genome, window_length=None)
        centred = region_sequences(table, genome, window_length=20)
    for (chrom, start, end, strand), got, window in zip(
            truth[["chrom", "start", "end", "strand"]].itertuples(index=False), own.sequences, centred.sequences,
            strict=True):
        bases = contigs[chrom][start:end]
        assert got == (bases if strand == "+" else bases.translate(COMPLEMENT)[::-1])
        first = (start + end) // 2 - 10
        bases = contigs[chrom][first:first + 20]
        assert window == (bases if strand == "+" else bases.translate(COMPLEMENT)[::-1])


def test_problems_are_inferred_from_the_labels_and_parsed():
    def table(**columns):
        frame = pd.DataFrame({"sequence": ["ACGT"] * 4, **columns})
        frame["file"], frame["line"] = "t.csv", range(2, 6)
        frame.attrs["labels"] = list(columns)
        from dnabird.data.labelled import LabelledTable
        return LabelledTable(frame, "sequences")

    assert infer_problem(table(label=["0", "1", "1", "0"])) == "binary"
    assert infer_problem(table(label=["a", "b", "c", "a"])) == "multiclass"
    assert infer_problem(table(label=["0", "2", "1", "10"])) == "multiclass"
    assert infer_problem(table(label=["0.5", "2", "1", "10"])) == "regression"
    assert infer_problem(table(a=["0", "1", "1", "0"], b=["1", "1", "0", "0"])) == "multilabel"
    assert infer_problem(table(a=["0", "1", "3", "0"], b=["1.5", "1", "0", "0"])) == "regression"
    assert infer_problem(table(label=["a", "b", "1", "a"])) == "multiclass"
    with pytest.raises(InputFormatError, match=r"t.csv, line 4: label 'high' in column 'label' is not a number, "
                                               r"though 3 of its 4 labels are: .* data.problem=multiclass"):
        infer_problem(table(label=["0.5", "2.25", "high", "1.5"]))
    binary = label_values(table(label=["neg", "pos", "pos", "neg"]), "binary")
    assert binary.names == ("pos",) and binary.values.tolist() == [0, 1, 1, 0]
    classes = label_values(table(label=["10", "2", "1", "2"]), "multiclass")
    assert classes.names == ("1", "2", "10") and classes.values.tolist() == [2, 1, 0, 1]
    targets = label_values(table(a=["0.5", "2", "1", "10"], b=["1", "2", "3", "4"]), "regression")
    assert targets.values.tolist() == [[0.5, 1], [2, 2], [1, 3], [10, 4]]
    with pytest.raises(InputFormatError, match=r"t.csv, line 4: label 'x' in column 'b' is not a finite number"):
        label_values(table(a=["1", "2", "3", "4"], b=["1", "2", "x", "4"]), "regression")


@pytest.mark.parametrize(("text", "options", "message"), [
    ("sequence,label\nACGT,1\nACGA,\n", {}, r"t.csv, line 3: missing or empty label in column 'label'"),
    ("sequence,label\nACGT,1\n\nACGA,\n", {}, r"t.csv, line 4: missing or empty label in column 'label'"),
    ("sequence,label\nACGT,1\n,\n", {}, r"t.csv, line 3: empty sequence"),
    ("sequence,y\nACGT,1\n", {"label_columns": ["label"]}, r"t.csv, line 1: the header names no label column 'label'"),
    ("seq_text,label\nACGT,1\n", {}, r"t.csv, line 1: the header names neither a sequence column.*; name the "
                                     r"sequence column with data.sequence_column"),
    ("sequence,label\nACGT,1\nACXT,0\n", {}, r"t.csv, line 3: sequence holds 'X'"),
    ("chrom,start,end,label\nchr1,10,5,1\n", {}, r"t.csv, line 2: expected 0 <= start < end, got start=10, end=5"),
    ("chrom,start,end,label\nchr1,1e,5,1\n", {}, r"t.csv, line 2: start '1e' is not an integer"),
    ("sequence,label,split\nACGT,1,training\n", {}, r"t.csv, line 2: split 'training' is not one of"),
])
def test_bad_input_names_the_file_line_and_value(tmp_path, text, options, message):
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(InputFormatError, match=message):
        read_labelled(path, **options)


def test_a_fasta_header_without_a_label_is_an_error(tmp_path):
    path = tmp_path / "t.fa"
    path.write_text(">a|1\nACGT\n>b\nACGT\n")
    with pytest.raises(InputFormatError, match=r"t.fa, line 3: header 'b' has no '\|label'"):
        read_labelled(path)
