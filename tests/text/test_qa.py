"""QA inputs, targets and span decoding against hand-made cases and a brute-force search."""

import numpy as np
import pytest
import torch

from dnabird.data.squad import Answer, QAExample
from dnabird.data.text_tokenizer import TextTokenizer
from dnabird.text.qa import best_spans, encode_questions, gold_answers, predict, qa_report, token_span

WORDS = "where is the home of kalo mipu rane the sea river town north south".split()


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(WORDS, size=15)) for _ in range(300)]
    return TextTokenizer.train(lines, tmp_path_factory.mktemp("qa") / "t.model", vocab_size=285, num_threads=1)


def test_token_span_maps_characters_to_tokens():
    spans = [(0, 0), (0, 5), (5, 11), (11, 12), (12, 18)]  # "▁" "Hello" " world" "," " again"
    assert token_span(spans, 6, 11) == (2, 2)  # "world": inside the token " world"
    assert token_span(spans, 0, 11) == (1, 2)
    assert token_span(spans, 13, 18) == (4, 4)
    assert token_span(spans[:4], 13, 18) is None  # cut off by truncation
    assert token_span(spans[:4], 6, 14) is None  # partly cut off


def example(context, answer, question="where is the home of kalo ?", qid="q"):
    start = context.index(answer)
    return QAExample(qid, question, context, (Answer(answer, start),))


def test_inputs_put_the_question_first_with_global_attention_and_gold_spans(tokenizer):
    context = "the sea north of town . the home of kalo is mipu rane . the river south"
    inputs = encode_questions([example(context, "mipu rane")], tokenizer, max_length=64, max_question_tokens=16)
    question = tokenizer.encode("where is the home of kalo ?")
    ids = inputs.input_ids[0]
    assert ids[0] == tokenizer.cls_id and ids[1:len(question) + 1].tolist() == question
    assert ids[len(question) + 1] == tokenizer.sep_id and inputs.context_start[0] == len(question) + 2
    assert inputs.global_attention_mask[0].tolist() == [True] * (len(question) + 1) + [False] * (64 - len(question) - 1)
    (start,), (end,) = inputs.start_targets[0].nonzero()[0], inputs.end_targets[0].nonzero()[0]
    spans, offset = inputs.context_spans[0], inputs.context_start[0]
    assert context[spans[start - offset][0]:spans[end - offset][1]].strip() == "mipu rane"
    assert inputs.answer_in_input.all()


def test_an_answer_cut_off_by_truncation_points_at_cls(tokenizer):
    context = " ".join(["the sea"] * 40) + " mipu rane"
    inputs = encode_questions([example(context, "mipu rane")], tokenizer, max_length=32, max_question_tokens=8)
    assert inputs.start_targets[0].nonzero()[0].tolist() == [0] and inputs.end_targets[0, 0]
    assert not inputs.answer_in_input[0] and inputs.attention_mask[0].all()


def test_every_occurrence_is_a_gold_span(tokenizer):
    context = "mipu rane is north . the sea is mipu rane"
    answers = (Answer("mipu rane", 0), Answer("mipu rane", context.rindex("mipu")))
    inputs = encode_questions([QAExample("q", "where ?", context, answers)], tokenizer, max_length=48,
                              max_question_tokens=8)
    assert inputs.start_targets[0].sum() == 2 and inputs.end_targets[0].sum() == 2


def test_best_spans_equal_a_brute_force_search():
    generator = torch.Generator().manual_seed(0)
    start, end = torch.randn(5, 40, generator=generator), torch.randn(5, 40, generator=generator)
    context_start, context_length = torch.tensor([3, 10, 0, 20, 5]), torch.tensor([30, 20, 40, 20, 1])
    first, last, score = best_spans(start, end, context_start, context_length, max_answer_tokens=4)
    for row in range(5):
        lo, hi = int(context_start[row]), int(context_start[row] + context_length[row])
        candidates = [(float(start[row, s] + end[row, e]), s, e)
                      for s in range(lo, hi) for e in range(s, min(hi, s + 4))]
        best = max(candidates)
        assert (first[row].item(), last[row].item()) == best[1:] and score[row].item() == pytest.approx(best[0])


class FixedSpans(torch.nn.Module):
    """A stand-in span model that puts its start/end mass on given tokens (score = 2 × `confidence`)."""

    def __init__(self, targets):
        super().__init__()
        self.targets = targets  # row -> (start, end, confidence)

    def forward(self, input_ids, attention_mask, global_attention_mask=None):
        start = torch.zeros(input_ids.shape)
        end = torch.zeros(input_ids.shape)
        for row, (s, e, confidence) in enumerate(self.targets[:len(input_ids)]):
            start[row, s], end[row, e] = confidence, confidence
        self.targets = self.targets[len(input_ids):]
        return type("Out", (), {"start_logits": start, "end_logits": end})


def test_predictions_read_the_context_and_keep_the_best_document(tokenizer):
    context = "the home of kalo is mipu rane"
    examples = [example(context, "mipu rane", qid="q1--a.txt"), example(context, "mipu rane", qid="q1--b.txt")]
    inputs = encode_questions(examples, tokenizer, max_length=48, max_question_tokens=16)
    offset = int(inputs.context_start[0])
    spans = inputs.context_spans[0]
    mipu, rane = token_span(spans, context.index("mipu"), len(context))
    home, home_end = token_span(spans, context.index("home"), context.index("home") + 4)
    targets = [(offset + mipu, offset + rane, 1.0), (offset + home, offset + home_end, 5.0)]
    by_document = predict(FixedSpans(list(targets)), examples, inputs, batch_size=1)
    assert by_document == {"q1--a.txt": "mipu rane", "q1--b.txt": "home"}
    model = FixedSpans(list(targets))
    by_question = predict(model, examples, inputs, batch_size=2, group_by_question=True)
    assert by_question == {"q1": "home"}  # the more confident document wins
    assert gold_answers(examples, group_by_question=True) == {"q1": ["mipu rane", "mipu rane"]}
    report = qa_report(by_document, examples, inputs)
    assert report["exact_match"] == 50.0 and report["answer_in_input"] == 1.0
