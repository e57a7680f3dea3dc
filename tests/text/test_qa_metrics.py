"""EM / F1 and the official normalisations on hand-made cases (values worked out by hand)."""

import pytest

from dnabird.errors import ParameterError
from dnabird.text.qa_metrics import evaluate, exact_match, f1, normalize_squad, normalize_triviaqa, score_question


@pytest.mark.parametrize("text, squad, triviaqa", [
    ("The  Quick, brown-fox!", "quick brownfox", "quick brown fox"),
    ("an apple a day", "apple day", "apple day"),
    ("Don’t_stop", "don’tstop", "don t stop"),  # ’ is not ASCII punctuation; SQuAD deletes _, TriviaQA spaces it
    ("theatre", "theatre", "theatre"),  # articles only as whole words
    ("`Rock´ and ‘roll’", "rock´ and ‘roll’", "rock and roll"),
])
def test_normalisations(text, squad, triviaqa):
    assert normalize_squad(text) == squad
    assert normalize_triviaqa(text) == triviaqa


def test_f1_is_the_bag_of_tokens_overlap():
    assert f1("the cat sat", "a cat sat down") == pytest.approx(0.8)  # P = 2/2, R = 2/3
    assert f1("x x y", "x y y") == pytest.approx(2 / 3)  # multiset overlap {x, y}
    assert f1("dog", "cat") == 0.0
    assert exact_match("The Cat.", "cat") == 1.0 and exact_match("cat sat", "cat") == 0.0


def test_best_over_gold_answers_and_empty_golds():
    assert score_question("Denver Broncos", ["Broncos", "Denver Broncos", "the Denver Broncos"]) == (1.0, 1.0)
    em, value = score_question("Broncos", ["Denver Broncos", "Carolina Panthers"])
    assert em == 0.0 and value == pytest.approx(2 / 3)
    assert score_question("", ["", "a"]) == (1.0, 1.0)  # v2.0: no non-empty gold → [""]
    assert score_question("something", []) == (0.0, 0.0)


def test_evaluate_counts_missing_predictions_as_zero():
    golds = {"q1": ["Paris"], "q2": ["the Seine river"], "q3": ["Louvre"]}
    report = evaluate({"q1": "paris", "q2": "Seine"}, golds)
    assert report["exact_match"] == pytest.approx(100 / 3)
    assert report["f1"] == pytest.approx(100 * (1 + 2 * 0.5 * 1 / 1.5) / 3)  # q2: P = 1, R = 1/2
    assert report["questions"] == 3 and report["predicted"] == 2
    trivia = evaluate({"q": "rock_n roll"}, {"q": ["rock n roll"]}, normalization="triviaqa")
    assert trivia["exact_match"] == 100.0
    with pytest.raises(ParameterError, match="normalization"):
        evaluate({}, golds, normalization="bleu")
