"""`predict` against the head called directly (tests/prediction/conftest.py) on the same windows: regions
placed by the anchor (centred and RC-averaged for the chromatin head; TSS-anchored on the region's strand for
the promoter head, a "−" region read as the reverse complement), sequences from a FASTA, a regression head's
outputs back in the user's scale; inputs that cannot be predicted listed with their reasons."""

import numpy as np
import pytest

from dnabird import predict
from dnabird.errors import ParameterError
from dnabird.model.checkpoint import read_tokenizer, save_checkpoint
from dnabird.model.config import tiny
from dnabird.model.heads import SequenceClassifier
from dnabird.model.task_spec import TaskSpec
from tests.prediction.conftest import DirectHead, reverse_complement

OPTIONS = {"device": "cpu", "progress": False, "batch_size": 3}
REGIONS = ("chrom\tstart\tend\tstrand\tname\n"
           "chr1\t100000\t100600\t+\tup\n"
           "chr2\t200000\t200301\t-\tdown\n"
           "chrZ\t10\t20\t+\tnowhere\n"
           "chr1\t759900\t760100\t+\toff_end\n"
           "chr3\t300000\t300010\t.\tno_strand\n")


@pytest.fixture
def regions(tmp_path):
    path = tmp_path / "regions.tsv"
    path.write_text(REGIONS)
    return path


def test_a_centred_head_averages_both_strands_of_the_window_on_each_regions_midpoint(
        embedded_default, chromatin_head, bases, regions):
    got = predict(embedded_default.chromatin / "model", regions=regions, genome=embedded_default.fasta, **OPTIONS)
    expected, windows = [], []
    for chrom, start, end in (("chr1", 100000, 100600), ("chr2", 200000, 200301), ("chr3", 300000, 300010)):
        middle = start + (end - start) // 2
        windows.append((middle - 500, middle + 500))
        expected.append(chromatin_head.both_strands(bases(chrom, middle - 500, middle + 500)))
    assert got.rows["name"].tolist() == ["up", "down", "no_strand"]
    assert list(zip(got.rows["window_start"], got.rows["window_end"], strict=True)) == windows
    assert (got.rows["window_strand"] == "both").all()
    np.testing.assert_allclose(got.values, np.array(expected), rtol=1e-5, atol=1e-6)
    assert got.table().columns[-17:].tolist() == list(chromatin_head.task.labels)
    assert dict(zip(got.unpredicted["name"], got.unpredicted["reason"], strict=True)) == {
        "nowhere": "unknown chromosome", "off_end": "outside the chromosome"}


def test_a_tss_anchored_head_reads_a_minus_strand_region_as_the_reverse_complement(
        embedded_default, promoter_head, bases, regions):
    got = predict(embedded_default.promoter / "model", regions=regions, genome=embedded_default.fasta, **OPTIONS)
    plus = bases("chr1", 100000 - 500, 100000 + 300)               # TSS at start, 500 bp up, 300 bp down
    site = 200301 - 1                                               # "−": the TSS is the region's last base
    minus = reverse_complement(bases("chr2", site - 300 + 1, site + 500 + 1))
    assert got.rows["name"].tolist() == ["up", "down"]
    assert got.rows["window_start"].tolist() == [99500, site - 299] and got.rows["window_strand"].tolist() == ["+", "-"]
    np.testing.assert_allclose(got.values[:, 0], [promoter_head.scaled(plus)[0], promoter_head.scaled(minus)[0]],
                               rtol=1e-5, atol=1e-6)
    forward_read = promoter_head.scaled(reverse_complement(minus))[0]
    assert abs(got.values[1, 0] - forward_read) > 1e-6                  # the strand read matters to this head
    reasons = dict(zip(got.unpredicted["name"], got.unpredicted["reason"], strict=True))
    assert reasons == {"nowhere": "unknown chromosome", "off_end": "outside the chromosome",
                       "no_strand": "no strand"}


def test_sequences_from_a_fasta_one_row_each_and_a_too_long_one_listed(embedded_default, chromatin_head, bases,
                                                                       tmp_path):
    sequences = {"s1": bases("chr1", 150000, 151000), "s2": bases("chr7", 20000, 20640).lower(),
                 "long": "N" * 2000}
    fasta = tmp_path / "in.fa"
    fasta.write_text("".join(f">{name} description\n{seq}\n" for name, seq in sequences.items()))
    got = predict(embedded_default.chromatin / "model", sequences=fasta, **OPTIONS)
    assert got.rows["id"].tolist() == ["s1", "s2"] and got.rows["length"].tolist() == [1000, 640]
    expected = [chromatin_head.both_strands(sequences[name].upper()) for name in ("s1", "s2")]
    np.testing.assert_allclose(got.values, np.array(expected), rtol=1e-5, atol=1e-6)
    assert got.unpredicted[["name", "reason"]].values.tolist() == [["long", "window exceeds eval_length"]]
    assert "(2000 of its bases are N, a token each)" in got.unpredicted["detail"].iloc[0]
    with pytest.raises(ParameterError, match="genome"):
        predict(embedded_default.chromatin / "model", sequences=fasta, genome=embedded_default.fasta, **OPTIONS)


def test_a_regression_heads_outputs_come_back_in_the_users_scale(embedded_default, bases, tmp_path):
    tokenizer = embedded_default.checkpoint / "dna.model"
    vocab = read_tokenizer(embedded_default.checkpoint).vocab_size
    model = SequenceClassifier(tiny(vocab_size=vocab, num_layers=1, dropout=0.0, attention_dropout=0.0), 2,
                               problem="regression", seed=3)
    transform = {"log1p": True, "mean": [1.5, -0.5], "std": [0.5, 2.0], "link": "identity"}
    task = TaskSpec(task="activity", problem="regression", labels=["dev", "hk"], eval_length=256,
                    target_transform=transform)
    directory = save_checkpoint(model, tmp_path / "regression", tokenizer_files=(tokenizer,), task=task)
    sequences = [bases("chr1", 120000, 120300), bases("chr2", 90000, 90450)]
    got = predict(directory, sequences=sequences, **OPTIONS)
    head = DirectHead(directory)
    expected = np.array([head.scaled(s) for s in sequences])
    raw = np.array([head.logits(s) for s in sequences])
    assert not np.allclose(expected, raw)                               # the inverse changes the numbers
    np.testing.assert_allclose(got.values, expected, rtol=1e-5, atol=1e-6)
    assert got.scale == "target" and got.settings["target_transform"]["mean"] == [1.5, -0.5]


def test_a_centred_strand_specific_head_reads_an_unstranded_region_on_plus(embedded_default, bases, tmp_path):
    tokenizer = embedded_default.checkpoint / "dna.model"
    vocab = read_tokenizer(embedded_default.checkpoint).vocab_size
    model = SequenceClassifier(tiny(vocab_size=vocab, num_layers=1, dropout=0.0, attention_dropout=0.0), 1,
                               problem="binary", seed=5)
    task = TaskSpec(task="labelled", problem="binary", labels=["bound"], eval_length=256, window_length=300,
                    anchor="centre", strand_rule="feature")   # a labelled head trained on stranded regions
    directory = save_checkpoint(model, tmp_path / "stranded", tokenizer_files=(tokenizer,), task=task)
    table = tmp_path / "regions.bed"
    table.write_text("chr1\t130000\t130100\tplus\t0\t+\nchr1\t130000\t130100\tminus\t0\t-\n"
                     "chr1\t130000\t130100\tnone\t0\t.\n")
    got = predict(directory, regions=table, genome=embedded_default.fasta, **OPTIONS)
    window = bases("chr1", 130050 - 150, 130050 + 150)
    head = DirectHead(directory)
    expected = [head.scaled(window)[0], head.scaled(reverse_complement(window))[0], head.scaled(window)[0]]
    assert got.rows["name"].tolist() == ["plus", "minus", "none"] and got.unpredicted.empty
    assert got.rows["window_strand"].tolist() == ["+", "-", "+"]
    np.testing.assert_allclose(got.values[:, 0], expected, rtol=1e-5, atol=1e-6)
