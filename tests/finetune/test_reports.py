"""`classification_report` of each problem without training: fixed test scores handed in through `Scoring`, rows
checked against scikit-learn on the same scores and on the baselines refitted here."""

import re

import numpy as np
import pytest
from sklearn import metrics as sk
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler

from dnabird.errors import ParameterError
from dnabird.finetune.baselines import Baseline
from dnabird.finetune.config import FinetuneConfig
from dnabird.finetune.data import LossSpec, TaskData, TokenExamples
from dnabird.finetune.evaluate import Scoring
from dnabird.finetune.recipe import classification_report
from dnabird.finetune.report import format_table
from dnabird.model.task_spec import TaskSpec
from dnabird.train import TrainConfig

PAD = 0


def token_examples(labels, rng):
    """Token rows of 6-16 real tokens (id 5) padded with PAD to 16."""
    ids = np.full((len(labels), 16), PAD)
    for row, length in enumerate(rng.integers(6, 17, len(labels))):
        ids[row, :length] = 5
    return TokenExamples(ids, labels)


def report_of(spec, train_labels, test_labels, test_scores, features, tmp_path, **data):
    rng = np.random.default_rng(0)
    train, test = token_examples(train_labels, rng), token_examples(test_labels, rng)
    task = TaskData(spec, train, test, test, baseline_features={"feature": Baseline(*features)}, **data)
    config = FinetuneConfig(pretrained="none", bootstrap_resamples=50, train=TrainConfig(out_dir=str(tmp_path)))
    return classification_report(task, config, Scoring(lambda examples: (test_labels, test_scores, 0.5), PAD))


def test_a_multiclass_report_puts_the_model_beside_its_baselines_with_every_metric(tmp_path):
    rng = np.random.default_rng(1)
    train_y, test_y = rng.integers(0, 3, 200), rng.integers(0, 3, 90)
    train_x, test_x = (np.eye(3)[y] * 2 + rng.normal(size=(len(y), 3)) for y in (train_y, test_y))
    scores = rng.dirichlet(np.ones(3), 90)
    scores[np.arange(90), test_y] += 0.5
    spec = TaskSpec(task="three", problem="multiclass", labels=["a", "b", "c"], eval_length=16)
    report = report_of(spec, train_y, test_y, scores, (train_x, test_x), tmp_path,
                       loss=LossSpec("cross_entropy", class_weights=[1, 2, 1]))
    rows = report["test"]["rows"]
    assert list(rows) == ["fine-tuned model", "feature baseline", "token count baseline"]
    model = rows["fine-tuned model"]
    assert model["mcc"] == pytest.approx(sk.matthews_corrcoef(test_y, scores.argmax(1)))
    assert model["ci95"]["mcc"][0] <= model["mcc"] <= model["ci95"]["mcc"][1]
    scaler = StandardScaler().fit(train_x)    # the baseline: one vs the rest, probabilities normalised per row
    ovr = OneVsRestClassifier(LogisticRegression(max_iter=2000)).fit(scaler.transform(train_x), train_y) \
        .predict_proba(scaler.transform(test_x))
    assert rows["feature baseline"]["macro_f1"] == pytest.approx(sk.f1_score(test_y, ovr.argmax(1), average="macro"))
    assert rows["feature baseline"]["classes"]["b"]["auroc"] == pytest.approx(sk.roc_auc_score(test_y == 1, ovr[:, 1]))
    assert set(report["token_lengths"]["test"]) == {"a", "b", "c"}
    table = format_table({**report, "test": {**report["test"], "title": "three"}})
    assert "macro_auroc" in table and "per class, fine-tuned model: a F1" in table


def test_a_multilabel_report_has_per_label_f1_and_medians_beside_baselines(tmp_path):
    rng = np.random.default_rng(2)
    train_y, test_y = rng.integers(0, 2, (150, 3)), rng.integers(0, 2, (60, 3))
    features = tuple(y + rng.normal(0, 0.5, y.shape) for y in (train_y, test_y))
    scores = np.clip(test_y * 0.4 + rng.random((60, 3)) * 0.6, 0, 1)
    spec = TaskSpec(task="marks", problem="multilabel", labels=["x", "y", "z"], eval_length=16)
    rows = report_of(spec, train_y, test_y, scores, features, tmp_path)["test"]["rows"]
    model = rows["fine-tuned model"]
    assert model["labels"]["y"]["f1"] == pytest.approx(sk.f1_score(test_y[:, 1], scores[:, 1] >= 0.5))
    assert model["groups"]["all labels"]["median_auroc"] == pytest.approx(
        np.median([sk.roc_auc_score(test_y[:, k], scores[:, k]) for k in range(3)]))
    assert rows["feature baseline"]["median_auroc"] > 0.8 and "token count baseline" in rows


def test_a_baseline_whose_model_does_not_fit_the_problem_is_refused():
    spec = TaskSpec(task="counts", problem="regression", labels=["n"], eval_length=16)
    split = TokenExamples(np.zeros((4, 16)), np.zeros((4, 1), np.float32))
    with pytest.raises(ParameterError, match=r"baseline_features\['k'\]\.model='logistic' is invalid"):
        TaskData(spec, split, split, split, baseline_features={"k": Baseline(np.zeros((4, 2)), np.zeros((4, 2)))})
    with pytest.raises(ParameterError, match="loss.kind='bce' is invalid"):
        TaskData(spec, split, split, split, loss=LossSpec("bce"))


def test_a_poisson_regression_is_scored_on_exp_outputs_against_the_counts(tmp_path):
    from scipy import stats

    rng = np.random.default_rng(3)
    rates = rng.gamma(2.0, 2.0, (80, 1))
    counts = rng.poisson(rates).astype(np.float32)               # the training scale of a Poisson loss: counts
    outputs = np.log(rates) + rng.normal(0, 0.2, rates.shape)    # the head's log-rates
    spec = TaskSpec(task="reads", problem="regression", labels=["reads"], eval_length=16,
                    target_transform={"log1p": False, "mean": None, "std": None, "link": "exp"})
    features = (rng.normal(size=(80, 2)), rng.normal(size=(80, 2)))
    rows = report_of(spec, counts, counts, outputs, (*features, "ridge"), tmp_path,
                     loss=LossSpec("poisson"))["test"]["rows"]
    model = rows["fine-tuned model"]
    assert model["pearson"] == pytest.approx(stats.pearsonr(counts[:, 0], np.exp(outputs[:, 0]))[0])
    assert model["mse"] == pytest.approx(np.mean((counts[:, 0] - np.exp(outputs[:, 0])) ** 2))
    assert rows["feature baseline"]["pearson"] < 0.5 < model["pearson"]


def test_table_cells_stay_apart_however_wide_or_negative():
    rows = {"fine-tuned model": {"r2": -0.01, "mse": 37.861, "ci95": {"r2": [-1.246, 0.057], "mse": [24.579, 55.828]}},
            "token count baseline": {"r2": 0.101, "mse": 3.7, "ci95": {"r2": [-0.518, 0.198], "mse": [1.0, 5.0]}}}
    header, *lines = format_table({"test": {"title": "t", "rows": rows}}).splitlines()[1:]
    assert header.split() == ["r2", "mse"]
    assert [re.split(r"\s{2,}", line) for line in lines] == [
        ["fine-tuned model", "-0.010 [-1.246, 0.057]", "37.861 [24.579, 55.828]"],
        ["token count baseline", "0.101 [-0.518, 0.198]", "3.700 [1.000, 5.000]"]]
