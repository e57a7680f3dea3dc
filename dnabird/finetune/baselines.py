"""Cheap baselines printed beside every fine-tuned score: a logistic regression (classes) or a ridge regression
(regression targets) on k-mer counts or on the token count alone (or, where a task asks for it, a one-hidden-layer
perceptron on its features). When one of them scores as high as the model, the task (not the model) is easy."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dnabird.errors import reject

_BASE_CODE = np.full(256, -1, dtype=np.int64)
_BASE_CODE[list(b"ACGT")] = np.arange(4)


def kmer_counts(sequences: np.ndarray, k: int) -> np.ndarray:
    """Counts of every k-mer (4^k columns, A < C < G < T order) in each row of `sequences` ([N, W] uint8
    ASCII, one strand as given); k-mers containing N are not counted."""
    reject(not 1 <= k <= 8, "k", k, "an integer in [1, 8]")
    sequences = np.asarray(sequences)
    width = sequences.shape[1] - k + 1
    counts = np.zeros((len(sequences), 4 ** k), dtype=np.float32)
    for first in range(0, len(sequences), 256):                 # row chunks bound the temporaries
        codes = _BASE_CODE[sequences[first:first + 256]]         # [n, W], -1 at N
        index = np.zeros((len(codes), width), dtype=np.int64)
        valid = np.ones((len(codes), width), dtype=bool)
        for j in range(k):
            index = index * 4 + codes[:, j:j + width]
            valid &= codes[:, j:j + width] >= 0
        for row in range(len(codes)):
            counts[first + row] = np.bincount(index[row][valid[row]], minlength=4 ** k)
    return counts


MLP_HIDDEN_UNITS = 16


CLASSIFIERS, REGRESSORS = ("logistic", "mlp"), ("ridge",)   # `Baseline.model`s of classes and of targets


class Baseline(NamedTuple):
    """A baseline: its features of the train slots (epoch 0) and of the test examples, and the model fit on
    them: `logistic` (`multilabel_logistic_scores`) or `mlp` (`multilabel_mlp_scores`) for classes, `ridge`
    (`ridge_predictions`) for regression targets."""

    train: np.ndarray
    test: np.ndarray
    model: str = "logistic"

    def scores(self, train_y: np.ndarray, *, seed: int) -> np.ndarray:
        """[N_test, K] probabilities (or ridge's predicted targets) of the baseline's model fit on the train
        features and `train_y` [N_train, K] (0/1 labels, or targets)."""
        fits = {"logistic": multilabel_logistic_scores, "mlp": multilabel_mlp_scores, "ridge": ridge_predictions}
        reject(self.model not in fits, "Baseline.model", self.model, f"one of {sorted(fits)}")
        return fits[self.model](self.train, train_y, self.test, seed=seed)


RIDGE_ALPHAS = tuple(10.0 ** np.arange(-2, 5))


def ridge_predictions(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, *, seed: int = 0) -> np.ndarray:
    """[N_test, K] predictions of a ridge regression on standardised features, one per target column of
    `train_y` ([N_train, K]), each target's penalty chosen among `RIDGE_ALPHAS` by leave-one-out error on the
    train rows (scikit-learn's `RidgeCV`). `seed` is unused (the fit is deterministic)."""
    from sklearn.linear_model import RidgeCV
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(train_x)
    model = RidgeCV(alphas=RIDGE_ALPHAS, alpha_per_target=True).fit(scaler.transform(train_x), np.asarray(train_y))
    return model.predict(scaler.transform(test_x)).reshape(len(test_x), -1)


def multilabel_logistic_scores(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, *,
                               seed: int = 0) -> np.ndarray:
    """[N_test, K] probabilities: one standardised L2 logistic regression per label column of `train_y`
    ([N_train, K] 0/1); a label with one class in the train rows scores its train prevalence."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    train_y = np.asarray(train_y)
    scaler = StandardScaler().fit(train_x)
    train_z, test_z = scaler.transform(train_x), scaler.transform(test_x)
    out = np.empty((len(test_x), train_y.shape[1]))
    for k in range(train_y.shape[1]):
        column = train_y[:, k].astype(int)
        if column.min() == column.max():
            out[:, k] = column.mean()
            continue
        model = LogisticRegression(max_iter=2000, random_state=seed).fit(train_z, column)
        out[:, k] = model.predict_proba(test_z)[:, 1]
    return out


def multilabel_mlp_scores(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, *,
                          seed: int = 0) -> np.ndarray:
    """[N_test, K] probabilities of one perceptron with a hidden layer of `MLP_HIDDEN_UNITS` ReLU units over
    standardised features, all label columns of `train_y` ([N_train, K] 0/1) at once: a non-linear model of
    the same features, for tasks whose label combines features (an exclusive-or) that no linear model reads."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    train_y = np.asarray(train_y).astype(int)
    if train_y.shape[1] == 1 and train_y.min() == train_y.max():   # one class: its train prevalence
        return np.full((len(test_x), 1), float(train_y.mean()))
    scaler = StandardScaler().fit(train_x)
    model = MLPClassifier(hidden_layer_sizes=(MLP_HIDDEN_UNITS,), max_iter=500, random_state=seed)
    with warnings.catch_warnings():   # a baseline's fit may stop at max_iter; its test scores say how good it is
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(scaler.transform(train_x), train_y if train_y.shape[1] > 1 else train_y[:, 0])
    out = model.predict_proba(scaler.transform(test_x))
    return out if train_y.shape[1] > 1 else out[:, 1:]
