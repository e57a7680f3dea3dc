import numpy as np
import pytest
from sklearn import metrics as sk

from dnabird.errors import ParameterError
from dnabird.finetune.metrics import (
    better,
    binary_metrics,
    bootstrap_intervals,
    multiclass_metrics,
    multilabel_metrics,
)

LABELS = [1, 1, 1, 0, 0, 0, 0, 1]
SCORES = [0.9, 0.8, 0.3, 0.6, 0.2, 0.1, 0.6, 0.6]


def test_binary_metrics_by_hand():
    m = binary_metrics(LABELS, SCORES)
    # calls at >= 0.5: 1 1 0 1 0 0 1 1 -> tp 3 (0, 1, 7), fn 1 (2), fp 2 (3, 6), tn 2 (4, 5)
    assert m["confusion"] == {"tn": 2, "fp": 2, "fn": 1, "tp": 3}
    assert m["accuracy"] == pytest.approx(5 / 8)
    assert m["precision"] == pytest.approx(3 / 5) and m["recall"] == pytest.approx(3 / 4)
    assert m["f1"] == pytest.approx(6 / 9)
    assert m["mcc"] == pytest.approx((3 * 2 - 2 * 1) / np.sqrt(5 * 4 * 4 * 3))
    # 16 positive-negative pairs: 0.9 and 0.8 beat all 4, 0.3 beats 2, 0.6 beats 2 and ties 2 (= 1)
    assert m["auroc"] == pytest.approx(13 / 16)
    # thresholds 0.9, 0.8, 0.6, 0.3 each add recall 1/4 at precision 1, 1, 3/5, 4/6
    assert m["auprc"] == pytest.approx(0.25 * (1 + 1 + 0.6 + 4 / 6))
    assert (m["examples"], m["positives"]) == (8, 4)


def test_undefined_metrics_are_none():
    m = binary_metrics([1, 1], [0.2, 0.9])
    assert m["auroc"] is None and m["accuracy"] == 0.5 and m["auprc"] == 1.0
    assert binary_metrics([0, 0], [0.1, 0.2])["precision"] is None


def test_binary_metrics_match_scikit_learn_with_ties():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 300)
    scores = np.round(rng.random(300) * 0.6 + 0.4 * labels, 1)  # coarse: many ties
    m = binary_metrics(labels, scores)
    calls = scores >= 0.5
    assert m["auroc"] == pytest.approx(sk.roc_auc_score(labels, scores))
    assert m["auprc"] == pytest.approx(sk.average_precision_score(labels, scores))
    assert m["f1"] == pytest.approx(sk.f1_score(labels, calls))
    assert m["mcc"] == pytest.approx(sk.matthews_corrcoef(labels, calls))
    assert m["precision"] == pytest.approx(sk.precision_score(labels, calls))


def test_bootstrap_intervals_cover_the_estimate_and_group_whole_clusters():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, 200)
    scores = np.clip(0.5 * labels + 0.6 * rng.random(200), 0, 1)
    point = binary_metrics(labels, scores)
    intervals = bootstrap_intervals(labels, scores, seed=3)
    for name in ("accuracy", "f1", "auroc"):
        low, high = intervals[name]
        assert low < point[name] < high and high - low < 0.3
    assert bootstrap_intervals(labels, scores, seed=3) == intervals            # a pure function of the seed
    # every example twice: drawing pairs of copies is drawing the original examples (same interval);
    # drawing copies one by one pretends there are twice as many examples (a narrower interval)
    doubled = np.repeat(labels, 2), np.repeat(scores, 2)
    grouped = bootstrap_intervals(*doubled, groups=np.repeat(np.arange(200), 2), seed=3)
    assert grouped["auroc"] == pytest.approx(intervals["auroc"])
    naive = bootstrap_intervals(*doubled, seed=3)
    assert naive["auroc"][1] - naive["auroc"][0] < 0.85 * (intervals["auroc"][1] - intervals["auroc"][0])
    assert bootstrap_intervals([1, 0, 1, 0], [0.9, 0.1, 0.8, 0.2])["accuracy"] == [1.0, 1.0]


def test_multiclass_and_multilabel_by_hand():
    scores = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]])
    m = multiclass_metrics([0, 1, 1, 2], scores)   # predicted 0 1 2 0
    # F1: class 0 (tp 1, 1 true + 2 called) 2/3, class 1 (tp 1, 2 + 1) 2/3, class 2 (tp 0) 0
    assert m["accuracy"] == 0.5 and m["macro_f1"] == pytest.approx((2 / 3 + 2 / 3 + 0) / 3)
    labels = np.array([[1, 0, 1], [0, 1, 1], [1, 0, 1], [0, 1, 1]])
    scores = np.array([[0.9, 0.2, 0.5], [0.1, 0.4, 0.5], [0.6, 0.8, 0.5], [0.3, 0.7, 0.5]])
    m = multilabel_metrics(labels, scores, ["a", "b", "c"], groups={"G": ["a", "b"]})
    # a: perfect (1.0); b: positives 0.4, 0.7 vs negatives 0.2, 0.8 -> 2 of 4 pairs (0.5); c: one class only
    assert m["labels"]["a"]["auroc"] == 1.0 and m["labels"]["b"]["auroc"] == 0.5
    assert m["labels"]["c"]["auroc"] is None and m["median_auroc"] == 0.75 and m["groups"]["G"]["median_auroc"] == 0.75


def test_bad_inputs_and_selection_direction():
    with pytest.raises(ParameterError, match="labels"):
        binary_metrics([0, 2], [0.1, 0.2])
    with pytest.raises(ParameterError, match="one length"):
        binary_metrics([0, 1, 1], [0.1, 0.2])
    assert better("auroc", 0.8, 0.7) and not better("loss", 0.8, 0.7) and better("loss", 0.1, None)
