"""Per-variant effect summaries and the truth-based ranking, on hand-made tables."""

import numpy as np
import pandas as pd
import pytest

from dnabird.errors import InputFormatError, ParameterError
from dnabird.variants.evaluate import read_truth, truth_labels, truth_rankings
from dnabird.variants.scores import SKIPPED_COLUMNS, UNIT_COLUMNS, VariantScores


def hand_scores() -> VariantScores:
    """Three windows: record 0 ALT 1, record 0 ALT 2, record 1; outputs a, b (group X) and c (group Y)."""
    rows = [(0, 1, "chr1", 10, "v0", "A", "C"), (0, 2, "chr1", 10, "v0", "A", "G"), (1, 1, "chr1", 20, "v1", "T", "A")]
    units = pd.DataFrame([(*r, ".", "both", True, 0, 10, 0, 0, 0, 0, 0) for r in rows], columns=UNIT_COLUMNS)
    ref = np.array([[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.2, 0.9, 0.1]])
    alt = np.array([[0.1, 0.6, 0.5], [0.5, 0.2, 0.9], [0.3, 0.9, 0.0]])
    return VariantScores(units, ("a", "b", "c"), ("X", "X", "Y"), ref, alt, alt - ref,
                         pd.DataFrame(columns=SKIPPED_COLUMNS))


def test_per_variant_reduces_alleles_windows_and_outputs_by_hand():
    table = hand_scores().per_variant("abs_diff", "max").set_index("id")
    # v0: |diff| rows (0.4, 0.1, 0) and (0, 0.3, 0.4); v1: (0.1, 0, 0.1)
    assert table.loc["v0", ["all", "X", "Y"]].tolist() == pytest.approx([0.4, 0.4, 0.4])
    assert table.loc["v1", ["all", "X", "Y"]].tolist() == pytest.approx([0.1, 0.1, 0.1])
    mean = hand_scores().per_variant("diff", "mean", outputs=["b"]).set_index("id")
    assert mean.loc["v0", "all"] == pytest.approx((0.1 - 0.3) / 2) and mean.loc["v1", "all"] == pytest.approx(0.0)
    assert list(mean.columns) == ["record", "chrom", "pos", "all", "X"]
    logits = hand_scores()
    logits.logit_diff = np.array([[-2.0, 0.5, 0.0], [0.0, -1.5, 3.0], [0.4, 0.0, -0.7]])
    odds = logits.per_variant("abs_logit_diff", "max").set_index("id")
    assert odds.loc["v0", ["all", "X", "Y"]].tolist() == pytest.approx([3.0, 2.0, 3.0])
    assert odds.loc["v1", ["all", "X", "Y"]].tolist() == pytest.approx([0.7, 0.4, 0.7])
    with pytest.raises(ParameterError, match="kind"):
        hand_scores().per_variant("abs_logit")
    with pytest.raises(ParameterError, match="outputs"):
        hand_scores().per_variant(outputs=["z"])
    with pytest.raises(ParameterError, match="reduce"):
        hand_scores().per_variant(reduce="median")


def write_truth(path, rows):
    """A truth table of (id, label, element) rows, each on chromosome chr1 or chr2 by its order."""
    frame = pd.DataFrame(rows, columns=["id", "label", "element"])
    frame.insert(0, "chrom", ["chr1", "chr2"] * (len(rows) // 2) + ["chr1"] * (len(rows) % 2))
    frame.insert(1, "pos", range(10, 10 + 10 * len(rows), 10))
    frame.insert(2, "ref", "A")
    frame.insert(3, "alt", "G")
    frame.to_csv(path, sep="\t", index=False)
    return path


def test_truth_classes_and_rankings_by_counting_pairs(tmp_path):
    truth = read_truth(write_truth(tmp_path / "t.tsv", [
        ("d1", "disruptive", "TATA:p1"), ("d2", "disruptive", "GATA:s1"), ("d3", "disruptive", "TATA:p2"),
        ("n1", "neutral", "."), ("n2", "neutral", "."), ("c1", "neutral", "TATA:p1"), ("c2", "neutral", "GATA:s1"),
        ("m", "ref_mismatch", ".")]))
    assert truth.set_index("id")["class"].to_dict() == {
        "d1": "disruptive", "d2": "disruptive", "d3": "disruptive", "n1": "distant_neutral",
        "n2": "distant_neutral", "c1": "in_element_control", "c2": "in_element_control", "m": "other"}
    labels = truth_labels(truth)
    assert labels.set_index("id")["label"].to_dict() == {"d1": 1, "d2": 1, "d3": 1, "n1": 0, "n2": 0, "c1": 0, "c2": 0}
    effects = pd.DataFrame({"id": ["d1", "d2", "d3", "n1", "n2", "c1", "c2", "m"],
                            "score": [0.9, 0.5, 0.2, 0.1, 0.5, 0.6, 0.3, 5.0]})
    result = truth_rankings(effects, truth, "score", resamples=200)
    # vs distant neutral: pairs (d, n) won: d1 2, d2 1 + tie 0.5, d3 1 -> 4.5 / 6
    assert result["distant_neutral"]["auroc"] == pytest.approx(4.5 / 6)
    # vs controls (0.6, 0.3): d1 2, d2 1, d3 0 -> 3 / 6; AUPRC by hand: ranks d1 (P 1/1), c1, d2 (2/3), c2, d3 (3/5)
    assert result["in_element_control"]["auroc"] == pytest.approx(3 / 6)
    assert result["in_element_control"]["auprc"] == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)
    low, high = result["in_element_control"]["auroc_interval"]
    assert 0 <= low <= 0.5 <= high <= 1 and low < high
    counts = result["distant_neutral"]
    assert (counts["positives"], counts["negatives"], counts["unscored"]) == (3, 2, 0)
    # promoter boxes only: d1, d3 vs control c1 (0.6): 1 / 2
    boxes = truth_rankings(effects, truth, "score", kinds=["TATA"], resamples=50)
    assert boxes["in_element_control"]["auroc"] == pytest.approx(0.5)
    assert boxes["in_element_control"]["negatives"] == 1


def test_truth_without_its_columns_names_the_file(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("chrom\tpos\tref\talt\tid\tlabel\nchr1\t5\tA\tG\tv1\tneutral\n")
    with pytest.raises(InputFormatError, match="bad.tsv.*element"):
        read_truth(path)
