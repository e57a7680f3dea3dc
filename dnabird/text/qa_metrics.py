"""Exact match and F1 for extractive QA, with the official SQuAD v1.1 / v2.0 and TriviaQA normalisations.

- SQuAD: lower-case → delete ASCII punctuation → replace the articles a/an/the by a space → collapse
  whitespace. v2.0: a question whose gold answers are all empty counts the empty string as its gold, and
  F1 is then EM.
- TriviaQA: `_` → space, lower-case, punctuation (ASCII plus ‘ ’ ´ `) → space, articles → space, collapse.

EM is string equality of the normalised texts; F1 the bag-of-tokens (multiset) overlap F1; each question
takes the maximum over its gold answers, and a question without a prediction scores 0. Reported × 100.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from dnabird.errors import reject

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_SQUAD_PUNCTUATION = set(string.punctuation)
_TRIVIAQA_PUNCTUATION = set(string.punctuation) | {"‘", "’", "´", "`"}


def normalize_squad(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in _SQUAD_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def normalize_triviaqa(text: str) -> str:
    text = "".join(" " if ch in _TRIVIAQA_PUNCTUATION else ch for ch in text.replace("_", " ").lower())
    return " ".join(_ARTICLES.sub(" ", text).split()).strip()


NORMALIZERS: dict[str, Callable[[str], str]] = {"squad": normalize_squad, "triviaqa": normalize_triviaqa}


def exact_match(prediction: str, gold: str, normalize=normalize_squad) -> float:
    return float(normalize(prediction) == normalize(gold))


def f1(prediction: str, gold: str, normalize=normalize_squad) -> float:
    predicted, true = normalize(prediction).split(), normalize(gold).split()
    if not predicted or not true:  # SQuAD v2.0: an empty side scores as exact match
        return float(predicted == true)
    common = sum((Counter(predicted) & Counter(true)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(true)
    return 2 * precision * recall / (precision + recall)


def score_question(prediction: str, golds: Sequence[str], normalize=normalize_squad) -> tuple[float, float]:
    """(EM, F1) of one prediction: the best over the gold answers ([""] when none is non-empty)."""
    golds = [g for g in golds if normalize(g)] or [""]
    return (max(exact_match(prediction, g, normalize) for g in golds),
            max(f1(prediction, g, normalize) for g in golds))


def evaluate(predictions: Mapping[str, str], golds: Mapping[str, Sequence[str]], *,
             normalization: str = "squad") -> dict:
    """{"exact_match", "f1"} × 100 over every question of `golds` (a missing prediction scores 0), and the
    counts of questions and predictions."""
    reject(normalization not in NORMALIZERS, "normalization", normalization, f"one of {sorted(NORMALIZERS)}")
    reject(not golds, "golds", "no questions", "at least one question")
    normalize = NORMALIZERS[normalization]
    em = f = 0.0
    for qid, answers in golds.items():
        if qid in predictions:
            one_em, one_f1 = score_question(predictions[qid], answers, normalize)
            em, f = em + one_em, f + one_f1
    return {"exact_match": 100.0 * em / len(golds), "f1": 100.0 * f / len(golds), "questions": len(golds),
            "predicted": sum(qid in predictions for qid in golds)}
