"""SQuAD-format reading and the TriviaQA conversion, on hand-made files (fixture edge cases included)."""

import json

import pytest

from dnabird.data.squad import Answer, answer_occurrences, first_words, read_squad, triviaqa_to_squad
from dnabird.errors import InputFormatError

CONTEXT = "Paris is the capital of France. The Seine flows through Paris."


def squad_file(tmp_path, qas, version="v2.0"):
    path = tmp_path / "squad.json"
    path.write_text(json.dumps({"version": version, "data": [
        {"title": "France", "paragraphs": [{"context": CONTEXT, "qas": qas}]}]}))
    return path


def test_reads_answers_and_counts_offset_mismatches(tmp_path):
    path = squad_file(tmp_path, [
        {"id": "a", "question": "Capital?", "answers": [{"text": "Paris", "answer_start": 0},
                                                        {"text": "Paris", "answer_start": 0},  # repeated dev answer
                                                        {"text": "Paris", "answer_start": 56}]},
        {"id": "b", "question": "River?", "answers": [{"text": "Seine", "answer_start": 3}]},  # wrong offset
        {"id": "c", "question": "Moon?", "answers": [], "is_impossible": True,
         "plausible_answers": [{"text": "France", "answer_start": 24}]},
    ])
    squad = read_squad(path)
    assert squad.version == "v2.0" and squad.titles == ["France"] and squad.mismatched == 1
    a, b, c = squad.examples
    assert [x.start for x in a.located_answers()] == [0, 0, 56] and CONTEXT[56:61] == "Paris"
    assert b.answers == (Answer("Seine", 3),) and b.located_answers() == ()
    assert c.is_impossible and c.answers == () and c.gold_texts == []


@pytest.mark.parametrize("broken, message", [
    ({"data": [{"paragraphs": [{"qas": []}]}]}, r"record 'data\[0\].paragraphs\[0\]'.*missing 'context'"),
    ({"data": [{"paragraphs": [{"context": "x", "qas": [{"id": "q", "question": "?",
                                                         "answers": [{"text": "x", "answer_start": "0"}]}]}]}]},
     r"'answer_start' should be int"),
    ({"version": "1.1"}, r"missing 'data'"),
])
def test_malformed_files_name_the_record(tmp_path, broken, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(broken))
    with pytest.raises(InputFormatError, match=message):
        read_squad(path)
    path.write_text("{not json")
    with pytest.raises(InputFormatError, match="bad.json: not valid JSON"):
        read_squad(path)


def test_first_words_keeps_paragraphs_apart():
    assert first_words("a b  c\n\nd e\nf", 4) == "a b c\nd"
    assert first_words("a b", 10) == "a b"


def test_answer_occurrences_finds_every_alias_case_insensitively():
    context = "The Beatles met. the beatles split; Beatles fans and The Beatles Anthology."
    answers = answer_occurrences(context, ["the beatles", "beatles"])
    assert [(a.text, a.start) for a in answers] == [("The Beatles", 0), ("the beatles", 17), ("Beatles", 36),
                                                    ("The Beatles", 53)]
    assert all(context[a.start:a.end] == a.text for a in answers)


def test_triviaqa_conversion_as_longformer(tmp_path):
    evidence = tmp_path / "evidence"
    (evidence / "wikipedia").mkdir(parents=True)
    (evidence / "wikipedia" / "Paris.txt").write_text("Paris is in France.\nParis hosts the Louvre. " + "x " * 50)
    (evidence / "wikipedia" / "Seine.txt").write_text("The Seine is a river.")
    qa = {"Domain": "Wikipedia", "VerifiedEval": False, "Version": 1.0, "Data": [
        {"Question": "Capital of France?", "QuestionId": "tc_1",
         "Answer": {"Value": "Paris", "NormalizedAliases": ["paris", "paree"], "NormalizedValue": "paris"},
         "EntityPages": [{"Filename": "Paris.txt", "Title": "Paris"}, {"Filename": "Seine.txt", "Title": "Seine"},
                         {"Title": "No file"}, {"Filename": "Absent.txt", "Title": "Absent"}]},
        {"Question": "Unanswered test question?", "QuestionId": "tc_2",
         "EntityPages": [{"Filename": "Seine.txt", "Title": "Seine"}]},
    ]}
    (tmp_path / "wikipedia-dev.json").write_text(json.dumps(qa))
    out = tmp_path / "squad.json"
    counts = triviaqa_to_squad(tmp_path / "wikipedia-dev.json", evidence, out, max_words=8)
    assert counts == {"questions": 2, "pairs": 3, "missing_evidence": 2, "unanswered": 2}
    squad = read_squad(out)
    paris = squad.examples[0]
    assert paris.id == "tc_1--Paris.txt" and paris.context == "Paris is in France.\nParis hosts the Louvre."
    assert [(a.text, a.start) for a in paris.answers] == [("Paris", 0), ("Paris", 20)]
    assert paris.gold_texts == ["paris", "paree"] and squad.mismatched == 0
    assert [e.id for e in squad.examples[1:]] == ["tc_1--Seine.txt", "tc_2--Seine.txt"]
    assert triviaqa_to_squad(tmp_path / "wikipedia-dev.json", evidence, out, keep_unanswered=False)["pairs"] == 1
