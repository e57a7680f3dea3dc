"""Extractive question answering (SQuAD; TriviaQA as Longformer runs it): inputs, span decoding, evaluation.

Each question becomes one input `[CLS] question [SEP] context [SEP]` of `max_length` tokens (the context
truncated to fit, as Longformer keeps the first 4,096 tokens), with global attention on [CLS] and the
question's tokens (`global_attention_mask`, per example). Gold spans are the context tokens covering each
located answer (every occurrence for TriviaQA); a question whose answer is not in the input points at
[CLS], as BERT's SQuAD recipe does. A prediction is the span (start ≤ end, at most `max_answer_tokens`,
inside the context) maximising start logit + end logit, read back from the context's characters; questions
sharing a key (TriviaQA Wikipedia: one question, several documents) keep their best-scoring span.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from dnabird.config import RecipeConfig
from dnabird.data.squad import QAExample
from dnabird.data.text_tokenizer import TextTokenizer
from dnabird.errors import reject, require_paths
from dnabird.finetune.data import EpochExamples
from dnabird.io import write_json_atomic
from dnabird.model.config import recipe_encoder_config
from dnabird.text.qa_metrics import NORMALIZERS, evaluate
from dnabird.text.training import device_batches
from dnabird.train import LossOutput, TrainConfig
from dnabird.train.data import stack_examples
from dnabird.train.recipe import recipe_run

MODEL_INPUTS = ("input_ids", "attention_mask", "global_attention_mask", "start_targets", "end_targets")


@dataclass
class QAInputs:
    """Encoded questions: arrays [N, L] and, per example, where its context tokens sit and their spans."""

    input_ids: np.ndarray  # int64
    attention_mask: np.ndarray  # bool
    global_attention_mask: np.ndarray  # bool: [CLS] and the question
    start_targets: np.ndarray  # bool
    end_targets: np.ndarray  # bool
    context_start: np.ndarray  # int: token index of the first context token
    context_spans: list[list[tuple[int, int]]]  # character span of each kept context token
    answer_in_input: np.ndarray  # bool: some gold span survived truncation

    def __len__(self) -> int:
        return len(self.input_ids)

    def __getitem__(self, index: int) -> dict[str, np.ndarray]:
        return {name: getattr(self, name)[index] for name in MODEL_INPUTS}


class QAExamples(EpochExamples):
    """Encoded questions as an epoch-shuffled training stream; a slot's "label" is whether its answer
    survived truncation (the span targets travel in the example)."""

    def __init__(self, inputs: QAInputs, *, seed: int = 0, shuffle: bool = True):
        super().__init__(inputs.answer_in_input, seed=seed, shuffle=shuffle)
        self.inputs = inputs

    def example(self, index: int, epoch: int) -> dict[str, np.ndarray]:
        return self.inputs[index]


def token_span(spans: Sequence[tuple[int, int]], start: int, end: int) -> tuple[int, int] | None:
    """The first and last token (indices into `spans`) covering characters [start, end), or None when the
    kept tokens do not reach the whole answer."""
    first = next((i for i, (a, b) in enumerate(spans) if b > start and a < b), None)
    last = next((i for i in range(len(spans) - 1, -1, -1) if spans[i][0] < end and spans[i][0] < spans[i][1]),
                None)
    if first is None or last is None or last < first or spans[last][1] < end:
        return None
    return first, last


def encode_questions(examples: Sequence[QAExample], tokenizer: TextTokenizer, *, max_length: int,
                     max_question_tokens: int = 64) -> QAInputs:
    """`[CLS] question [SEP] context [SEP]` per example, padded to `max_length`, with its global-attention
    mask and gold span targets (see the module docstring)."""
    n = len(examples)
    reject(max_length < max_question_tokens + 8, "max_length", max_length,
           f">= max_question_tokens + 8 = {max_question_tokens + 8}")
    ids = np.full((n, max_length), tokenizer.pad_id, dtype=np.int64)
    real, is_global = np.zeros((n, max_length), bool), np.zeros((n, max_length), bool)
    starts, ends = np.zeros((n, max_length), bool), np.zeros((n, max_length), bool)
    context_start, found, all_spans = np.zeros(n, np.int64), np.zeros(n, bool), []
    questions = tokenizer.encode([e.question for e in examples])
    contexts = tokenizer.encode([e.context for e in examples])
    for row, (example, question, context) in enumerate(zip(examples, questions, contexts, strict=True)):
        question = question[:max_question_tokens]
        room = max_length - len(question) - 3
        spans = tokenizer.offsets(example.context)[:room]
        tokens = [tokenizer.cls_id, *question, tokenizer.sep_id, *context[:room], tokenizer.sep_id]
        ids[row, :len(tokens)] = tokens
        real[row, :len(tokens)] = True
        is_global[row, :len(question) + 1] = True
        offset = context_start[row] = len(question) + 2
        for answer in example.located_answers():
            span = token_span(spans, answer.start, answer.end)
            if span is not None:
                starts[row, offset + span[0]] = ends[row, offset + span[1]] = True
                found[row] = True
        if not found[row]:
            starts[row, 0] = ends[row, 0] = True  # [CLS]: no answer in the input
        all_spans.append(spans)
    return QAInputs(ids, real, is_global, starts, ends, context_start, all_spans, found)


def span_loss(model: torch.nn.Module, batch: dict[str, torch.Tensor], step: int) -> LossOutput:
    """The span model's loss (gold occurrences marginalised), with global attention on the question."""
    out = model(batch["input_ids"], batch["attention_mask"], start_targets=batch["start_targets"],
                end_targets=batch["end_targets"], step=step, global_attention_mask=batch["global_attention_mask"])
    start_hit = batch["start_targets"].gather(1, out.start_logits.argmax(-1)[:, None])  # [B, 1]
    metrics = {"start_acc": (start_hit.sum(), torch.tensor(float(len(start_hit))))}
    return LossOutput(out.loss, int(batch["attention_mask"].sum()), metrics)


def best_spans(start_logits: torch.Tensor, end_logits: torch.Tensor, context_start: torch.Tensor,
               context_length: torch.Tensor, max_answer_tokens: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The best span of each row: (start, end) token indices and score start + end logit, among spans with
    start ≤ end < start + max_answer_tokens inside [context_start, context_start + context_length)."""
    batch, length = start_logits.shape
    ends = F.pad(end_logits, (0, max_answer_tokens - 1), value=float("-inf")).unfold(1, max_answer_tokens, 1)
    scores = start_logits[:, :, None] + ends  # [B, L, A]: start s, end s + a
    position = torch.arange(length, device=start_logits.device)
    inside = (position >= context_start[:, None]) & (position < (context_start + context_length)[:, None])
    end_inside = F.pad(inside, (0, max_answer_tokens - 1), value=False).unfold(1, max_answer_tokens, 1)
    scores = scores.masked_fill(~(inside[:, :, None] & end_inside), float("-inf"))
    flat = scores.flatten(1).argmax(-1)
    start, width = flat // max_answer_tokens, flat % max_answer_tokens
    return start, start + width, scores.flatten(1).gather(1, flat[:, None]).squeeze(1)


@torch.no_grad()
def predict(model: torch.nn.Module, examples: Sequence[QAExample], inputs: QAInputs, *, max_answer_tokens: int = 30,
            batch_size: int = 8, group_by_question: bool = False, device="cpu") -> dict[str, str]:
    """{key: answer text} for every example; the key is the example id, or its part before "--" when
    `group_by_question` (keeping the best-scoring span over that question's documents)."""
    model.eval().to(device)
    best: dict[str, tuple[float, str]] = {}
    for rows, batch in device_batches(inputs, len(inputs), batch_size, device, "answering"):
        out = model(batch["input_ids"], batch["attention_mask"],
                    global_attention_mask=batch["global_attention_mask"])
        lengths = torch.tensor([len(inputs.context_spans[i]) for i in rows], device=device)
        first, last, score = best_spans(out.start_logits, out.end_logits,
                                        torch.as_tensor(inputs.context_start[list(rows)], device=device), lengths,
                                        max_answer_tokens)
        for i, s, e, value in zip(rows, first.tolist(), last.tolist(), score.tolist(), strict=True):
            example, spans, offset = examples[i], inputs.context_spans[i], int(inputs.context_start[i])
            text = example.context[spans[s - offset][0]:spans[e - offset][1]].strip() if spans else ""
            key = question_key(example, group_by_question)
            if key not in best or value > best[key][0]:
                best[key] = (value, text)
    return {key: text for key, (_, text) in best.items()}


def question_key(example: QAExample, group_by_question: bool) -> str:
    """The example's id, or its part before "--" (the question of TriviaQA Wikipedia's `QuestionId--Filename`)."""
    return example.id.split("--")[0] if group_by_question else example.id


def gold_answers(examples: Sequence[QAExample], *, group_by_question: bool = False) -> dict[str, list[str]]:
    """{key: gold answer texts}, keyed as `predict` keys its answers."""
    golds: dict[str, list[str]] = {}
    for example in examples:
        golds.setdefault(question_key(example, group_by_question), []).extend(example.gold_texts)
    return golds


def qa_report(predictions: dict[str, str], examples: Sequence[QAExample], inputs: QAInputs, *,
              normalization: str = "squad", group_by_question: bool = False) -> dict:
    """EM and F1 (× 100, official normalisation) plus how many answers survived truncation."""
    report = evaluate(predictions, gold_answers(examples, group_by_question=group_by_question),
                      normalization=normalization)
    report.update(answer_in_input=float(inputs.answer_in_input.mean()) if len(inputs) else 0.0,
                  normalization=normalization)
    return report


@dataclass
class QAData:
    """The SQuAD-format splits of a QA task and how they are scored.

    train, validation: SQuAD-format JSON files (TriviaQA converted by `triviaqa_to_squad`); null inside
        `dnabird run`: the `text_data` stage's generated SQuAD files.
    normalization: "squad" or "triviaqa" (the EM/F1 rules); group_by_question: one answer per question over
        its documents (TriviaQA Wikipedia, ids `QuestionId--Filename`).
    """

    train: str | None = None
    validation: str | None = None
    normalization: str = "squad"
    group_by_question: bool = False


@dataclass
class QAConfig(RecipeConfig):
    """Settings of one extractive-QA run (the keys of a `--config` YAML or a `text_qa:` section).

    data: the splits (`QAData`).
    tokenizer: a sentencepiece `.model`; null inside `dnabird run`: the `text_tokenizer` stage's.
    pretrained: a pretrained checkpoint directory whose encoder is fine-tuned, or null to train from scratch.
    model, model_overrides: the encoder trained from scratch; its attention must be a Longformer pattern
        (global attention goes on the question's tokens).
    max_length: tokens per input; max_question_tokens: longest question kept; max_answer_tokens: longest span.
    eval_batch_size, seed; train: the loop's `TrainConfig`.
    """

    data: QAData = field(default_factory=QAData)
    tokenizer: str | None = None
    pretrained: str | None = None
    model: str = "tiny"
    model_overrides: dict = field(default_factory=lambda: {"attention": {"type": "longformer", "window": 64,
                                                                         "block_size": 32}})
    max_length: int = 512
    max_question_tokens: int = 64
    max_answer_tokens: int = 30
    eval_batch_size: int = 8
    seed: int = 0
    train: TrainConfig = field(default_factory=lambda: TrainConfig(out_dir="runs/text_qa", warmup_steps=10))

    def __post_init__(self):
        reject(self.data.normalization not in NORMALIZERS, "data.normalization", self.data.normalization,
               f"one of {sorted(NORMALIZERS)}")
        if self.pretrained is None:
            _encoder_settings(self)  # model settings fail here, when the config loads


def _encoder_settings(config: QAConfig, vocab_size: int | None = None):
    from dnabird.attention import Longformer

    settings = recipe_encoder_config(config, vocab_size)
    reject(not all(isinstance(settings.pattern(layer), Longformer) for layer in range(settings.num_layers)),
           "model_overrides.attention", settings.attention,
           "a longformer pattern in every layer (global attention goes on the question's tokens)")
    return settings


def answer_questions(config: QAConfig, *, resume: bool = False) -> dict:
    """Train a span model, then answer the validation questions and report EM/F1 (`<out_dir>/report.json`,
    `<out_dir>/predictions.json`)."""
    from dnabird.data.squad import read_squad
    from dnabird.model.checkpoint import load_encoder_for_finetuning
    from dnabird.model.heads import SpanExtractor
    from dnabird.model.task_spec import TaskSpec

    require_paths(config, ("data.train", "tokenizer"))
    tokenizer = TextTokenizer.load(config.tokenizer)
    spec = TaskSpec(task="qa", problem="span", labels=("start", "end"), eval_length=config.max_length,
                    tokenizer_hash=tokenizer.hash)
    train_file = read_squad(config.data.train)
    answerable = [e for e in train_file.examples if e.located_answers()]
    encode = partial(encode_questions, tokenizer=tokenizer, max_length=config.max_length,
                     max_question_tokens=config.max_question_tokens)
    examples = QAExamples(encode(answerable), seed=config.seed)
    report = {"train_questions": len(answerable), "train_answers_mismatched": train_file.mismatched}
    with recipe_run(config.train.device, seed=config.seed) as run:
        if config.pretrained is not None:
            model = load_encoder_for_finetuning(config.pretrained, spec, seed=config.seed)[0]
        else:
            model = SpanExtractor(_encoder_settings(config, tokenizer.vocab_size), seed=config.seed)
        run.fit(model, span_loss, examples, config.train, collate_fn=stack_examples,
                resume=resume, run_info={"text_qa": dataclasses.asdict(config), "train_questions": len(answerable)},
                tokenizer_files=(tokenizer.path,), task=spec)
        data = config.data
        if run.is_main and data.validation is not None:
            heldout = read_squad(data.validation).examples
            heldout_inputs = encode(heldout)
            predictions = predict(model, heldout, heldout_inputs, max_answer_tokens=config.max_answer_tokens,
                                  batch_size=config.eval_batch_size, group_by_question=data.group_by_question,
                                  device=run.device)
            report["validation"] = qa_report(predictions, heldout, heldout_inputs, normalization=data.normalization,
                                             group_by_question=data.group_by_question)
            out_dir = Path(config.train.out_dir)
            write_json_atomic(out_dir / "predictions.json", predictions)
            write_json_atomic(out_dir / "report.json", report)
            row = report["validation"]
            print(f"validation: EM {row['exact_match']:.1f}  F1 {row['f1']:.1f} over {row['questions']} questions "
                  f"({data.normalization} normalisation; answer kept in the input: "
                  f"{row['answer_in_input']:.0%})")
    return report


load_config = QAConfig.load  # a QA YAML (the keys of `QAConfig`) with `key.sub=value` overrides
