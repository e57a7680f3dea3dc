"""The baselines' models against labels whose rule is known: a linear one where the rule is linear in the
features, the perceptron where it is an exclusive-or."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from dnabird.errors import ParameterError
from dnabird.finetune.baselines import Baseline, multilabel_logistic_scores, multilabel_mlp_scores


def exclusive_or(n, seed):
    """Two binary features (as counts with noise, and 8 noise columns); the label is their exclusive-or."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, size=(n, 2))
    x = np.concatenate([bits * 3 + rng.normal(0, 0.3, (n, 2)), rng.normal(0, 1, (n, 8))], axis=1)
    return x.astype(np.float32), (bits[:, 0] ^ bits[:, 1])[:, None]


def test_the_perceptron_reads_an_exclusive_or_that_no_logistic_regression_reads():
    train_x, train_y = exclusive_or(1000, 0)
    test_x, test_y = exclusive_or(500, 1)
    linear = multilabel_logistic_scores(train_x, train_y, test_x, seed=0)[:, 0]
    mlp = multilabel_mlp_scores(train_x, train_y, test_x, seed=0)[:, 0]
    assert abs(roc_auc_score(test_y[:, 0], linear) - 0.5) < 0.1
    assert roc_auc_score(test_y[:, 0], mlp) > 0.97 and ((mlp > 0.5) == test_y[:, 0]).mean() > 0.95


def test_baseline_fits_its_model_per_label_and_scores_a_one_class_label_by_its_prevalence():
    train_x, train_y = exclusive_or(600, 2)
    test_x, test_y = exclusive_or(300, 3)
    labels = np.concatenate([train_y, 1 - train_y], axis=1)   # two labels: the exclusive-or and its negation
    scores = Baseline(train_x, test_x, model="mlp").scores(labels, seed=0)
    assert scores.shape == (300, 2)
    assert roc_auc_score(test_y[:, 0], scores[:, 0]) > 0.95 and roc_auc_score(1 - test_y[:, 0], scores[:, 1]) > 0.95
    assert np.allclose(Baseline(train_x, test_x, model="mlp").scores(np.ones((600, 1)), seed=0), 1.0)
    linear = Baseline(train_x, test_x).scores(train_y, seed=0)
    assert np.array_equal(linear, multilabel_logistic_scores(train_x, train_y, test_x, seed=0))
    with pytest.raises(ParameterError, match="'logistic', 'mlp'"):
        Baseline(train_x, test_x, model="forest").scores(train_y, seed=0)


def test_ridge_reads_linear_targets_each_with_its_own_penalty():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(400, 6)) * [1, 10, 100, 1, 1, 1]          # standardising makes the scales irrelevant
    targets = np.stack([x[:, 0] - 0.02 * x[:, 2], 0.3 * x[:, 1]], 1) + rng.normal(0, 0.1, (400, 2))
    predicted = Baseline(x[:300], x[300:], "ridge").scores(targets[:300], seed=0)
    assert predicted.shape == (100, 2)
    for k in range(2):
        residual = targets[300:, k] - predicted[:, k]
        assert 1 - residual.var() / targets[300:, k].var() > 0.95     # R² of a linear rule plus small noise
