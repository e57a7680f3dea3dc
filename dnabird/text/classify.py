"""Long-document classification, the `text_classification` task of the fine-tuning recipe (`dnabird.finetune`,
docs/text.md): labelled JSONL/TSV texts → a [CLS] classifier → accuracy and F1 on test, with bootstrap intervals.

Each document is `[CLS] tokens [SEP]` at a fixed `data.max_length`, keeping its first tokens, its last or both
ends (`data.keep`). [CLS] attends globally: in BigBird ITC's first (global) block, and by global attention at
position 0 added to a Longformer pattern (`encoder_overrides`, fresh model or checkpoint alike);
`data.global_tail` makes each document's last tokens global too. Baselines beside a two-class model: a logistic
regression and a one-hidden-layer perceptron on the whole document's token counts (bag of words, before
truncation; ids folded into at most `BAG_OF_WORDS_BUCKETS` buckets; the perceptron reads combinations of counts,
such as an exclusive-or, that no linear model reads) and the recipe's token-count regression.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from dnabird.data.labelled_text import read_labelled
from dnabird.data.text_tokenizer import TextTokenizer
from dnabird.errors import reject, require_paths
from dnabird.finetune.baselines import Baseline
from dnabird.finetune.config import FROM_SCRATCH, FinetuneConfig
from dnabird.finetune.data import TaskData, TokenExamples
from dnabird.finetune.report import MODEL_ROW, _value
from dnabird.finetune.task import Task
from dnabird.model.task_spec import TaskSpec
from dnabird.text.training import model_rows
from dnabird.train import TrainConfig

NAME = "text_classification"
KEEP = ("head", "tail", "ends")
SPLITS = ("train", "validation", "test")
BAG_OF_WORDS_BUCKETS = 2048
LINEAR_BAG_OF_WORDS = "bag of words (whole document)"
MLP_BAG_OF_WORDS = "bag of words, perceptron (whole document)"


@dataclass
class LabelledData:
    """The labelled splits of a classification task and how each document becomes an input.

    train, validation, test: JSONL or TSV files (`dnabird.data.labelled_text`); null inside `dnabird run`:
        the `text_data` stage's long-range task. text_field, label_field: their columns.
    positive_label: the positive class of a two-class task (default: the second label in sorted order);
        three or more labels make a multi-class task.
    max_length: tokens per document with [CLS] and [SEP] (a multiple of the attention block size);
    keep: "head" (a document's first tokens), "tail" (its last) or "ends" (its first half and its last half
        of the room, the head + tail truncation of Sun et al. 2019).
    global_tail: Longformer only: global attention also on each document's last `global_tail` tokens (its
        [SEP] and the words before it, where a task puts its question); 0: [CLS] alone is global.
    """

    train: str | None = None
    validation: str | None = None
    test: str | None = None
    text_field: str = "text"
    label_field: str = "label"
    positive_label: str | None = None
    max_length: int = 1024
    keep: str = "head"
    global_tail: int = 0

    def __post_init__(self):
        reject(self.keep not in KEEP, "data.keep", self.keep, f"one of {KEEP}")
        reject(self.max_length < 4, "data.max_length", self.max_length, "an integer >= 4")
        reject(not 0 <= self.global_tail < self.max_length, "data.global_tail", self.global_tail,
               f"an integer in [0, max_length = {self.max_length})")


@dataclass
class TextClassifyConfig(FinetuneConfig):
    """`FinetuneConfig` (the recipe's settings) with the labelled splits in `data`; text defaults: a tiny
    model trained from scratch, selected by validation accuracy."""

    data: LabelledData = field(default_factory=LabelledData)
    pretrained: str | None = FROM_SCRATCH
    model: str = "tiny"
    selection_metric: str = "accuracy"
    bootstrap_resamples: int = 200
    train: TrainConfig = field(default_factory=lambda: TrainConfig(out_dir="runs/text_classify", warmup_steps=10))



def encode_documents(tokenizer: TextTokenizer, texts: list[str], *, max_length: int, keep: str = "head") -> np.ndarray:
    """int64 [N, max_length]: `[CLS] tokens [SEP]` per text, cut to its first tokens, its last, or both ends
    (`keep`: head, tail, ends), padded."""
    ids = np.full((len(texts), max_length), tokenizer.pad_id, dtype=np.int64)
    room = max_length - 2
    for row, tokens in enumerate(tokenizer.encode(list(texts))):
        if len(tokens) <= room or keep == "head":
            kept = tokens[:room]
        elif keep == "tail":
            kept = tokens[len(tokens) - room:]
        else:
            kept = tokens[:room // 2] + tokens[len(tokens) - (room - room // 2):]
        ids[row, :len(kept) + 2] = [tokenizer.cls_id, *kept, tokenizer.sep_id]
    return ids


def tail_mask(ids: np.ndarray, pad_id: int, tail: int) -> np.ndarray:
    """bool [N, L]: True at each row's last `tail` tokens before its padding (all its tokens if it has fewer)."""
    lengths = (ids != pad_id).sum(1, keepdims=True)  # [N, 1]; padding only follows the tokens
    positions = np.arange(ids.shape[1])[None, :]
    return (positions < lengths) & (positions >= lengths - tail)


def label_spec(labels: list[str], *, max_length: int, positive: str | None, tokenizer_hash: str) -> TaskSpec:
    """The `TaskSpec` of a label set: binary for two labels (`positive` or the second sorted), else multi-class."""
    names = sorted(set(labels))
    reject(len(names) < 2, "labels", names, "at least two distinct labels in the training data")
    reject(positive is not None and positive not in names, "positive_label", positive,
           f"one of the training labels {names}")
    binary = len(names) == 2
    return TaskSpec(task=NAME, problem="binary" if binary else "multiclass",
                    labels=(positive or names[1],) if binary else tuple(names), eval_length=max_length,
                    tokenizer_hash=tokenizer_hash)


def label_targets(spec: TaskSpec, labels: list[str], where: str) -> np.ndarray:
    """Targets of `labels` under `spec`: 0/1 for binary, class indices for multi-class."""
    if spec.problem == "binary":
        return np.array([label == spec.labels[0] for label in labels], dtype=np.int64)
    unknown = sorted(set(labels) - set(spec.labels))
    reject(bool(unknown), f"{where} labels", unknown[:5], f"labels seen in training {list(spec.labels)}")
    return np.array([spec.labels.index(label) for label in labels], dtype=np.int64)


def bag_of_words(tokenizer: TextTokenizer, texts: list[str], buckets: int = BAG_OF_WORDS_BUCKETS) -> np.ndarray:
    """log(1 + count) of each token id (folded modulo `buckets`) over the whole text, float32 [N, buckets]."""
    width = min(buckets, tokenizer.vocab_size)
    rows = [np.bincount(np.asarray(ids, dtype=np.int64) % width, minlength=width) for ids in tokenizer.encode(texts)]
    return np.log1p(np.stack(rows)).astype(np.float32) if rows else np.zeros((0, width), np.float32)


def encoder_overrides(model_config) -> dict:
    """`EncoderConfig` fields the task changes: global attention at [CLS] (position 0) in a Longformer
    pattern (its layers' own settings included). BigBird ITC needs none: [CLS] is in its global block."""
    attention = model_config.attention
    if attention.get("type") != "longformer":
        return {}
    return {"attention": {**attention, "global_positions": sorted({0, *attention.get("global_positions", ())})}}


def build(config: TextClassifyConfig, tokenizer: TextTokenizer, *, block_size: int, out_dir) -> TaskData:
    """Read and encode the three splits; the train split's order is reshuffled every epoch."""
    data = config.data
    require_paths(config, [f"data.{split}" for split in SPLITS], "a JSONL or TSV file")
    reject(data.max_length % block_size != 0, "data.max_length", data.max_length,
           f"a multiple of the attention block size {block_size}")
    texts, labels = {}, {}
    for split in SPLITS:
        texts[split], labels[split] = read_labelled(getattr(data, split), text_field=data.text_field,
                                                    label_field=data.label_field)
    spec = label_spec(labels["train"], max_length=data.max_length, positive=data.positive_label,
                      tokenizer_hash=tokenizer.hash)
    examples, summary = {}, {"max_length": data.max_length, "keep": data.keep, "global_tail": data.global_tail,
                             "splits": {}}
    for split in SPLITS:
        targets = label_targets(spec, labels[split], split)
        ids = encode_documents(tokenizer, texts[split], max_length=data.max_length, keep=data.keep)
        global_mask = tail_mask(ids, tokenizer.pad_id, data.global_tail) if data.global_tail else None
        examples[split] = TokenExamples(ids, targets, seed=config.seed, shuffle=split == "train",
                                        global_mask=global_mask)
        full = ids[:, -1] != tokenizer.pad_id  # the document filled (and maybe overflowed) the input
        summary["splits"][split] = {"documents": len(targets), "file": str(getattr(data, split)),
                                    "labels": dict(sorted(Counter(labels[split]).items())),
                                    "filling_the_input": int(full.sum())}
    baselines = {}
    if spec.problem == "binary":
        words = bag_of_words(tokenizer, texts["train"]), bag_of_words(tokenizer, texts["test"])
        baselines[LINEAR_BAG_OF_WORDS] = Baseline(*words)
        baselines[MLP_BAG_OF_WORDS] = Baseline(*words, model="mlp")
    return TaskData(spec, examples["train"], examples["validation"], examples["test"], baseline_features=baselines,
                    summary=summary)


def _accuracy(row: dict) -> str:
    return _value(row["accuracy"], row.get("ci95", {}).get("accuracy"))


def _f1(row: dict):
    return row.get("f1", row.get("macro_f1"))


def results_table(reports: dict[str, dict], seconds: dict[str, float], settings: dict[str, TextClassifyConfig]) -> str:
    """A Markdown table: each model's selected validation accuracy and its test scores, then the baselines
    (from the first model's report) and the majority class."""
    lines = ["| model | attention | tokens | keeps | selected step | validation accuracy | test accuracy (95 % CI) "
             "| test F1 | wall time (s) |", "|---|---|---|---|---|---|---|---|---|"]
    lines += model_rows(reports, seconds, settings, lambda report: report["selection"]["validation"].get("accuracy"),
                        lambda row: f"{_accuracy(row)} | {_f1(row):.3f}", lambda config: [config.data.keep])
    first_name, first = next(iter(reports.items()))
    for scorer, row in first["test"]["rows"].items():
        if scorer != MODEL_ROW:
            inputs = "" if "whole document" in scorer else f" (inputs of {first_name})"
            lines.append(f"| {scorer}{inputs} | — | — | — | — | — | {_accuracy(row)} | {_f1(row):.3f} | — |")
    counts = first["data"]["splits"]["test"]["labels"]
    majority = max(counts.values()) / sum(counts.values())
    lines.append(f"| majority class | — | — | — | — | — | {majority:.3f} | — | — |")
    return "\n".join(lines)


class TextClassification(Task):
    """Long-document classification (module docstring); inside `dnabird run`, null splits are the `text_data`
    stage's long-range task, a null tokenizer the `text_tokenizer` stage's and a null `pretrained` the
    `text_mlm` stage's model."""

    name, config, tokenizer = NAME, TextClassifyConfig, TextTokenizer
    stage_inputs = {**{f"data.{split}": ("text_data", f"long_range_{split}") for split in SPLITS},
                    "tokenizer": ("text_tokenizer", "model"), "pretrained": ("text_mlm", "model")}
    build, encoder_overrides = staticmethod(build), staticmethod(encoder_overrides)

    def table(self, reports: dict, seconds: dict, configs: dict) -> str:
        return results_table(reports, seconds, configs)


TASK = TextClassification()


def classify(config: TextClassifyConfig, *, resume: bool = False) -> dict:
    """Fine-tune through the recipe (`dnabird.finetune.recipe.finetune`); returns its report."""
    return TASK.finetune(config, resume=resume)


load_config = TextClassifyConfig.load  # a classification YAML (the keys of `TextClassifyConfig`) with overrides
