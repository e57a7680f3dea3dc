import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as sk

from dnabird.errors import ParameterError
from dnabird.finetune.metrics import (
    better,
    binary_metrics,
    bootstrap_intervals,
    multiclass_intervals,
    multiclass_metrics,
    multilabel_metrics,
    regression_intervals,
    regression_metrics,
    resample_weights,
    selection_metric,
    weighted_multiclass,
    weighted_regression,
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


def three_classes(n=300, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    scores = rng.random((n, 3))
    scores[np.arange(n), labels] += 0.4
    scores[:20] = np.round(scores[:20], 1)   # ties
    return labels, scores / scores.sum(1, keepdims=True)


def test_multiclass_metrics_match_scikit_learn():
    labels, scores = three_classes()
    predicted = scores.argmax(1)
    m = multiclass_metrics(labels, scores, ["a", "b", "c"])
    assert m["mcc"] == pytest.approx(sk.matthews_corrcoef(labels, predicted))
    assert m["macro_f1"] == pytest.approx(sk.f1_score(labels, predicted, average="macro"))
    assert m["accuracy"] == pytest.approx(sk.accuracy_score(labels, predicted))
    assert m["macro_auroc"] == pytest.approx(sk.roc_auc_score(labels, scores, multi_class="ovr"))
    for k, name in enumerate("abc"):
        assert m["classes"][name]["f1"] == pytest.approx(sk.f1_score(labels == k, predicted == k))
        assert m["classes"][name]["auprc"] == pytest.approx(sk.average_precision_score(labels == k, scores[:, k]))


def test_multiclass_resample_weights_equal_the_metrics_of_the_drawn_examples():
    labels, scores = three_classes(120, 1)
    weights = resample_weights(len(labels), None, 3, seed=5)
    values = weighted_multiclass(labels, scores, weights)
    for r in range(3):
        drawn = np.repeat(np.arange(len(labels)), weights[r].astype(int))
        assert values["mcc"][r] == pytest.approx(sk.matthews_corrcoef(labels[drawn], scores[drawn].argmax(1)))
        assert values["macro_auroc"][r] == pytest.approx(
            sk.roc_auc_score(labels[drawn], scores[drawn], multi_class="ovr"))
    intervals = multiclass_intervals(labels, scores, resamples=200, seed=2)
    point = multiclass_metrics(labels, scores)
    assert all(intervals[k][0] <= point[k] <= intervals[k][1] for k in ("accuracy", "mcc", "macro_f1", "macro_auroc"))


def test_multilabel_f1_and_mcc_per_label_match_scikit_learn():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, (200, 4))
    scores = np.clip(labels * 0.3 + rng.random((200, 4)) * 0.7, 0, 1)
    m = multilabel_metrics(labels, scores, list("wxyz"))
    f1 = [sk.f1_score(labels[:, k], scores[:, k] >= 0.5) for k in range(4)]
    mcc = [sk.matthews_corrcoef(labels[:, k], scores[:, k] >= 0.5) for k in range(4)]
    assert [m["labels"][n]["f1"] for n in "wxyz"] == pytest.approx(f1)
    assert [m["labels"][n]["mcc"] for n in "wxyz"] == pytest.approx(mcc)
    assert m["median_f1"] == pytest.approx(np.median(f1)) and m["median_mcc"] == pytest.approx(np.median(mcc))


def two_targets(n=250, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(n, 2)) * [1.0, 5.0] + [0.0, 20.0]
    predictions = truth + rng.normal(size=(n, 2)) * [0.8, 6.0]
    predictions[:, 1] = np.round(predictions[:, 1])       # ties for Spearman's ranks
    return truth, predictions


def test_regression_metrics_match_scipy_and_scikit_learn_per_target_and_their_mean():
    truth, predictions = two_targets()
    m = regression_metrics(truth, predictions, ["dev", "hk"])
    expected = {"pearson": [stats.pearsonr(truth[:, k], predictions[:, k])[0] for k in range(2)],
                "spearman": [stats.spearmanr(truth[:, k], predictions[:, k])[0] for k in range(2)],
                "r2": [sk.r2_score(truth[:, k], predictions[:, k]) for k in range(2)],
                "mse": [sk.mean_squared_error(truth[:, k], predictions[:, k]) for k in range(2)]}
    for metric, values in expected.items():
        assert [m["targets"][t][metric] for t in ("dev", "hk")] == pytest.approx(values), metric
        assert m[metric] == pytest.approx(np.mean(values)), metric
    constant = regression_metrics(truth[:, :1], np.zeros((len(truth), 1)), ["dev"])
    assert constant["pearson"] is None and constant["spearman"] is None and constant["mse"] is not None


def test_regression_resamples_equal_the_metrics_of_the_drawn_examples_and_intervals_cover_the_estimate():
    truth, predictions = two_targets(150, 1)
    weights = resample_weights(len(truth), None, 3, seed=4)
    values = weighted_regression(truth[:, 1], predictions[:, 1], weights)
    for r in range(3):
        drawn = np.repeat(np.arange(len(truth)), weights[r].astype(int))
        y, p = truth[drawn, 1], predictions[drawn, 1]
        assert values["spearman"][r] == pytest.approx(stats.spearmanr(y, p)[0])
        assert values["pearson"][r] == pytest.approx(stats.pearsonr(y, p)[0])
        assert values["r2"][r] == pytest.approx(sk.r2_score(y, p))
    point = regression_metrics(truth, predictions, ["a", "b"])
    intervals = regression_intervals(truth, predictions, ["a", "b"], resamples=300, seed=0)
    for metric in ("pearson", "spearman", "r2", "mse"):
        assert intervals[metric][0] <= point[metric] <= intervals[metric][1]
        low, high = intervals["targets"]["b"][metric]
        assert low <= point["targets"]["b"][metric] <= high
    with pytest.raises(ParameterError, match=r"two arrays \[N, 3\]"):
        regression_metrics(truth, predictions, ["a", "b", "c"])


def test_selection_metric_falls_back_to_the_problems_default(caplog):
    assert selection_metric("regression", "pearson") == "pearson"
    assert selection_metric("regression", "auroc") == "pearson" and "does not apply to a regression" in caplog.text
    assert selection_metric("multiclass", "auroc") == "mcc" and selection_metric("binary", "mcc") == "mcc"
    assert better("mse", 0.1, 0.2) and not better("pearson", 0.1, 0.2)
