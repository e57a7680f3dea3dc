"""ROUGE-1/2/L of summaries with `rouge-score` (Google's maintained re-implementation of ROUGE-1.5.5), their
bootstrap intervals, and the lead-k baseline (a document's first k sentences).

Scores are F-measures in [0, 1], Porter-stemmed as the summarisation papers report them; the mean over
documents with a 95 % percentile bootstrap interval (documents resampled with replacement).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from rouge_score import rouge_scorer

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def rouge_per_document(predictions: Sequence[str], references: Sequence[str]) -> dict[str, np.ndarray]:
    """Each ROUGE type's F-measure per document, float [N]."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True)
    scores = [scorer.score(reference, prediction) for prediction, reference in zip(predictions, references,
                                                                                     strict=True)]
    return {name: np.array([s[name].fmeasure for s in scores], dtype=float) for name in ROUGE_TYPES}


def rouge_report(predictions: Sequence[str], references: Sequence[str], *, resamples: int = 1000,
                 seed: int = 0) -> dict:
    """{"rouge1": mean, …, "ci95": {"rouge1": [low, high], …}, "documents": N}."""
    per_document = rouge_per_document(predictions, references)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(predictions), size=(resamples, len(predictions))) if len(predictions) else None
    report = {"documents": len(predictions), "ci95": {}}
    for name, values in per_document.items():
        report[name] = float(values.mean()) if len(values) else 0.0
        report["ci95"][name] = None if draws is None else \
            np.percentile(values[draws].mean(axis=1), [2.5, 97.5]).tolist()
    return report


def lead(document: str, sentences: int) -> str:
    """The first `sentences` sentences of `document` (split after ., ! or ? followed by whitespace)."""
    return " ".join(_SENTENCE_END.split(document.strip())[:sentences])
