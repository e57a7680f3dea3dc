"""Calibrated scores: background SNVs drawn from the genome (seeded, outside N runs and contig ends) and each
score's empirical quantile among the background's, checked against scipy on the written tables."""

import dataclasses

import h5py
import numpy as np
import pandas as pd
import pysam
import pytest
from scipy.stats import percentileofscore

from dnabird.cli import main
from dnabird.genome.reference import Genome
from dnabird.variants import VariantScores, score_variants
from dnabird.variants.background import background_alleles, score_background
from dnabird.variants.resume import score_variants_to_files
from tests.variants.conftest import write_fasta

OPTIONS = {"device": "cpu", "progress": False, "batch_size": 8}


def test_background_snvs_are_seeded_and_avoid_n_runs_and_contig_ends(tmp_path):
    rng = np.random.default_rng(0)
    bases = lambda n: "".join(rng.choice(list("ACGTacgt"), size=n))  # noqa: E731 (soft-masked bases too)
    contigs = {"chrA": bases(300) + "N" * 120 + bases(260) + "N" + bases(200), "chrB": "N" * 50 + bases(150)}
    genome = Genome(write_fasta(tmp_path / "gaps.fa", contigs))
    window = 41
    drawn = background_alleles(genome, 150, window, seed=7)
    assert drawn == background_alleles(genome, 150, window, seed=7)
    assert drawn != background_alleles(genome, 150, window, seed=8)
    assert [a.record for a in drawn] == list(range(150)) and drawn[0].variant.id == "bg1"
    places = [(a.variant.chrom, a.variant.pos) for a in drawn]
    assert len(set(places)) == 150 and places == sorted(places)      # distinct, in genome order
    for allele in drawn:
        v = allele.variant
        sequence = contigs[v.chrom]
        start = v.pos - 1 - window // 2
        assert 0 <= start and start + window <= len(sequence)
        assert "N" not in sequence[start:start + window].upper()
        assert v.ref == sequence[v.pos - 1].upper() and v.alt in "ACGT" and v.alt != v.ref
    assert len({a.variant.alt for a in drawn}) == 4
    with pytest.raises(ValueError, match="background"):   # chrB's 150 bp hold too few 141-bp windows
        background_alleles(Genome(write_fasta(tmp_path / "small.fa", {"chrB": contigs["chrB"]})), 20, 141)


def _hand_quantile(background: np.ndarray, value: float) -> float:
    return percentileofscore(background, value, kind="weak") / 100


def _scores(alt: list[list[float]], logit_diff: list[list[float]]) -> VariantScores:
    alt = np.array(alt, dtype=float)
    return VariantScores(pd.DataFrame(), ("a", "b"), (".", "."), np.zeros_like(alt), alt,
                         np.array(logit_diff, dtype=float), pd.DataFrame())


def test_a_quantile_is_the_fraction_of_background_values_at_most_the_score():
    background = _scores([[0.1, 5], [0.2, 6], [0.2, 7], [-0.3, 8]], [[np.nan] * 2] * 4)
    scores = _scores([[0.2, 6.5], [-1, 9], [0.35, 4], [np.nan, 5], [-0.2, -7]], [[np.nan] * 2] * 5)
    calibrated = scores.calibrate(background)
    assert sorted(calibrated.quantiles) == ["abs_diff", "diff"]           # no logit_diff in the background
    # ties count as at most: 0.2 among [0.1, 0.2, 0.2, -0.3] is 1.0
    np.testing.assert_array_equal(calibrated.quantiles["diff"], [[1, 0.5], [0, 1], [1, 0], [np.nan, 0.25],
                                                                 [0.25, 0]])
    # |scores| among |background| = [0.1, 0.2, 0.2, 0.3] and [5, 6, 7, 8]
    np.testing.assert_array_equal(calibrated.quantiles["abs_diff"], [[0.75, 0.5], [1, 1], [1, 0], [np.nan, 0.25],
                                                                     [0.75, 0.75]])
    for column in range(2):   # scipy's weak percentile, value by value
        hand = [_hand_quantile(background.diff[:, column], x) for x in scores.diff[:, column]]
        np.testing.assert_allclose(calibrated.quantiles["diff"][:, column], hand)
    with pytest.raises(ValueError, match="outputs"):
        scores.calibrate(dataclasses.replace(background, outputs=("a", "c")))


def test_quantiles_equal_scipys_on_the_written_background_table(classifier_dir, genome_and_vcf, tmp_path):
    genome, vcf, _ = genome_and_vcf
    out = tmp_path / "s.tsv"
    score_variants_to_files(classifier_dir, genome, vcf, out, background=40, background_seed=2, chunk_records=5,
                            **OPTIONS)
    scored, background = (pd.read_csv(path, sep="\t") for path in (out, tmp_path / "s.tsv.background.tsv"))
    assert len(background) == 40 * 2 and background["id"].str.startswith("bg").all()
    for kind in ("diff", "abs_diff", "logit_diff", "abs_logit_diff"):
        column = "logit_diff" if kind == "abs_logit_diff" else kind
        for output, rows in scored.groupby("output"):
            reference = background.loc[background["output"] == output, column].to_numpy()
            values = rows[column].to_numpy()
            if kind == "abs_logit_diff":
                reference, values = np.abs(reference), np.abs(values)
            hand = [_hand_quantile(reference, value) for value in values]
            np.testing.assert_allclose(rows[f"q_{kind}"], hand, rtol=0, atol=1e-12)
    assert scored["q_abs_diff"].between(0, 1).all() and scored["q_abs_diff"].nunique() > 5
    # the Python route gives the same quantiles: score_background + calibrate
    calibrated = score_variants(classifier_dir, genome, vcf, **OPTIONS).calibrate(
        score_background(classifier_dir, genome, 40, seed=2, **OPTIONS))
    np.testing.assert_allclose(calibrated.table()["q_logit_diff"], scored["q_logit_diff"], rtol=0, atol=1e-12)


def test_vcf_and_hdf5_carry_the_quantiles_of_mlm_llr_scores(embedded_default, tmp_path):
    vcf = embedded_default.fasta.parent / "variants.vcf"
    common = ["-q", "score", "--model", str(embedded_default.checkpoint), "--genome", str(embedded_default.fasta),
              "--vcf", str(vcf), "--window-bp", "101", "--eval-length", "64", "--rc", "forward", "--device", "cpu",
              "--background", "60"]
    assert main([*common, "--out", str(tmp_path / "s.vcf")]) == 0
    assert main([*common, "--out", str(tmp_path / "s.h5")]) == 0
    background = pd.read_csv(tmp_path / "s.vcf.background.tsv", sep="\t")
    llr = background.loc[background["output"] == "llr", "diff"].to_numpy()
    records = [r for r in pysam.VariantFile(str(tmp_path / "s.vcf")) if "DNABIRD_DIFF" in r.info]
    assert len(records) >= 90 and all("DNABIRD_Q_LOGIT_DIFF" not in r.info for r in records)  # mlm_llr: no logits
    for record in records[:10]:   # outputs llr, llr_per_bp per window: the first value is llr's
        diff, quantile = record.info["DNABIRD_DIFF"][0], record.info["DNABIRD_Q_DIFF"][0]
        assert quantile == pytest.approx(_hand_quantile(llr, diff), abs=2 / len(llr))  # 6 digits in the VCF
        assert record.info["DNABIRD_Q_ABS_DIFF"][0] == pytest.approx(_hand_quantile(np.abs(llr), abs(diff)),
                                                                     abs=2 / len(llr))
    with h5py.File(tmp_path / "s.h5") as f:
        assert sorted(f["quantiles"]) == ["abs_diff", "diff"]
        assert f["quantiles/diff"].shape == f["diff"].shape
        first = [_hand_quantile(llr, value) for value in f["diff"][:5, 0]]
        np.testing.assert_allclose(f["quantiles/diff"][:5, 0], first, atol=2 / len(llr))
