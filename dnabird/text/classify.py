"""Long-document classification: labelled texts (JSONL/TSV) → a [CLS] classifier → accuracy and F1.

Each document is `[CLS] tokens [SEP]` at a fixed `max_length`, keeping its first tokens (`keep: head`) or
its last (`keep: tail`, the truncated baseline of the long-range task). The head reads the pooled [CLS]
vector; [CLS] attends globally: with BigBird ITC it sits in the first (global) block, and a Longformer
pattern gets global attention at position 0 added to its settings.

Training runs through the one training loop (`dnabird.text.training.train_and_save`), the stand-in for the
fine-tuning recipe until `dnabird.finetune` lands: a fixed number of steps, then the saved model is scored on
the validation and test splits beside two cheap baselines — the majority class, and a logistic regression on
the document's token counts (bag of words, whole document).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from dnabird.data.labelled_text import read_labelled
from dnabird.data.text_tokenizer import TextTokenizer
from dnabird.errors import ParameterError
from dnabird.io import write_json_atomic
from dnabird.model.config import EncoderConfig
from dnabird.model.task_spec import TaskSpec
from dnabird.progress import progress_bar
from dnabird.train import LossOutput, TrainConfig

KEEP = ("head", "tail")


@dataclass
class LabelledData:
    """The labelled splits of a classification task.

    train, validation, test: JSONL or TSV files (`dnabird.data.labelled_text`); null inside `dnabird run`:
        the `text_data` stage's long-range task. text_field, label_field: their columns.
    positive_label: the positive class of a two-class task (default: the second label in sorted order);
        three or more labels make a multi-class task.
    """

    train: str | None = None
    validation: str | None = None
    test: str | None = None
    text_field: str = "text"
    label_field: str = "label"
    positive_label: str | None = None


@dataclass
class TextClassifyConfig:
    """Settings of one classification run (the keys of a `--config` YAML; the `text_classify` stage runs one
    per entry of its `models`).

    data: the labelled splits (`LabelledData`).
    tokenizer: a sentencepiece `.model`; null inside `dnabird run`: the `text_tokenizer` stage's.
    pretrained: a pretrained checkpoint directory whose encoder is fine-tuned, or null to train from scratch.
    model, model_overrides: the encoder trained from scratch (a preset and `EncoderConfig` fields).
    max_length: tokens per document; keep: "head" (its first tokens) or "tail" (its last).
    eval_batch_size: documents per forward pass when scoring. seed: initialisation, order, dropout.
    train: the loop's `TrainConfig` (state `warmup_steps`: the default suits pretraining).
    """

    data: LabelledData = field(default_factory=LabelledData)
    tokenizer: str | None = None
    pretrained: str | None = None
    model: str = "tiny"
    model_overrides: dict = field(default_factory=dict)
    max_length: int = 1024
    keep: str = "head"
    eval_batch_size: int = 16
    seed: int = 0
    train: TrainConfig = field(default_factory=lambda: TrainConfig(out_dir="runs/text_classify", warmup_steps=10))

    def __post_init__(self):
        if self.keep not in KEEP:
            raise ParameterError("keep", self.keep, f"one of {KEEP}")
        if self.pretrained is None:
            from dnabird.pretraining.recipe import encoder_config

            encoder_config(self)  # model settings fail here, when the config loads


def encode_documents(tokenizer: TextTokenizer, texts: list[str], *, max_length: int, keep: str = "head") -> np.ndarray:
    """int64 [N, max_length]: `[CLS] tokens [SEP]` per text, cut to its first or last tokens, padded."""
    ids = np.full((len(texts), max_length), tokenizer.pad_id, dtype=np.int64)
    room = max_length - 2
    for row, tokens in enumerate(tokenizer.encode(list(texts))):
        kept = tokens[:room] if keep == "head" else tokens[max(0, len(tokens) - room):]
        ids[row, :len(kept) + 2] = [tokenizer.cls_id, *kept, tokenizer.sep_id]
    return ids


def collate_for(spec: TaskSpec, pad_id: int):
    """The collate function of a task: ids, attention mask, zero segments, labels (float for binary)."""
    def collate(examples: list[dict[str, np.ndarray]]) -> dict[str, torch.Tensor]:
        ids = torch.from_numpy(np.stack([e["input_ids"] for e in examples]))
        labels = torch.as_tensor(np.stack([e["labels"] for e in examples]))
        return {"input_ids": ids, "attention_mask": ids != pad_id, "token_type_ids": torch.zeros_like(ids),
                "labels": labels.float() if spec.problem == "binary" else labels.long()}
    return collate


def classification_loss(model: torch.nn.Module, batch: dict[str, torch.Tensor], step: int) -> LossOutput:
    out = model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"], labels=batch["labels"],
                step=step)
    predicted = (out.logits > 0).long() if out.logits.dim() == 1 else out.logits.argmax(-1)
    correct = (predicted == batch["labels"].long()).sum()
    return LossOutput(out.loss, int(batch["attention_mask"].sum()),
                      {"accuracy": (correct, torch.tensor(float(len(predicted))))})


def label_spec(labels: list[str], *, max_length: int, positive: str | None, tokenizer_hash: str) -> TaskSpec:
    """The `TaskSpec` of a label set: binary for two labels (`positive` or the second sorted), else multi-class."""
    names = sorted(set(labels))
    if len(names) < 2:
        raise ParameterError("labels", names, "at least two distinct labels in the training data")
    if positive is not None and positive not in names:
        raise ParameterError("positive_label", positive, f"one of the training labels {names}")
    if len(names) == 2:
        return TaskSpec(task="text_classification", problem="binary", labels=(positive or names[1],),
                        eval_length=max_length, tokenizer_hash=tokenizer_hash)
    return TaskSpec(task="text_classification", problem="multiclass", labels=tuple(names), eval_length=max_length,
                    tokenizer_hash=tokenizer_hash)


def label_targets(spec: TaskSpec, labels: list[str], where: str) -> np.ndarray:
    """Targets of `labels` under `spec`: 0/1 for binary, class indices for multi-class."""
    if spec.problem == "binary":
        return np.array([label == spec.labels[0] for label in labels], dtype=np.int64)
    unknown = sorted(set(labels) - set(spec.labels))
    if unknown:
        raise ParameterError(f"{where} labels", unknown[:5], f"labels seen in training {list(spec.labels)}")
    return np.array([spec.labels.index(label) for label in labels], dtype=np.int64)


@torch.no_grad()
def predict_classes(model: torch.nn.Module, ids: np.ndarray, *, pad_id: int, batch_size: int = 16,
                    device="cpu") -> np.ndarray:
    """Predicted targets (0/1 or class index) of every row of `ids`."""
    model.eval().to(device)
    predictions = []
    for start in progress_bar(range(0, len(ids), batch_size), desc="classifying", unit=" batches"):
        batch = torch.from_numpy(ids[start:start + batch_size]).to(device)
        logits = model(batch, batch != pad_id).logits
        predictions.append(((logits > 0).long() if logits.dim() == 1 else logits.argmax(-1)).cpu().numpy())
    return np.concatenate(predictions)


def classification_metrics(targets: np.ndarray, predicted: np.ndarray, problem: str) -> dict:
    """Accuracy and F1 (the positive class's for binary, macro-averaged for multi-class)."""
    from sklearn.metrics import accuracy_score, f1_score

    average = "binary" if problem == "binary" else "macro"
    return {"accuracy": float(accuracy_score(targets, predicted)),
            "f1": float(f1_score(targets, predicted, average=average, zero_division=0)), "examples": len(targets)}


def bag_of_words_baseline(tokenizer: TextTokenizer, train: tuple[list[str], np.ndarray],
                          evaluated: tuple[list[str], np.ndarray], problem: str, seed: int = 0) -> dict:
    """A logistic regression on whole-document token counts, fitted on `train`, scored on `evaluated`."""
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    def counts(texts):
        rows = [np.bincount(ids, minlength=tokenizer.vocab_size) for ids in tokenizer.encode(list(texts))]
        return csr_matrix(np.log1p(np.stack(rows)))

    fitted = LogisticRegression(max_iter=2000, random_state=seed).fit(counts(train[0]), train[1])
    return classification_metrics(evaluated[1], fitted.predict(counts(evaluated[0])), problem)


def _encoder_settings(config: TextClassifyConfig, vocab_size: int) -> EncoderConfig:
    """The config trained from scratch: preset + overrides, with global attention at [CLS] for Longformer."""
    from dnabird.pretraining.recipe import encoder_config

    settings = encoder_config(config, vocab_size)
    if settings.attention.get("type") == "longformer":
        positions = sorted({0, *settings.attention.get("global_positions", ())})
        settings = dataclasses.replace(settings, attention={**settings.attention, "global_positions": positions})
    return settings


def classify(config: TextClassifyConfig, *, resume: bool = False) -> dict:
    """Train a classifier, score it on validation and test beside the baselines; returns the report (also
    `<out_dir>/report.json`)."""
    from dnabird.model.checkpoint import load_encoder_for_finetuning
    from dnabird.model.heads import model_for_task
    from dnabird.text.training import EpochShuffled, finish, train_and_save

    data = config.data
    for name, value in (("data.train", data.train), ("data.test", data.test), ("tokenizer", config.tokenizer)):
        if value is None:
            raise ParameterError(name, None, "a path (set it in the YAML or as an override)")
    tokenizer = TextTokenizer.load(config.tokenizer)
    texts, labels = read_labelled(data.train, text_field=data.text_field, label_field=data.label_field)
    spec = label_spec(labels, max_length=config.max_length, positive=data.positive_label,
                      tokenizer_hash=tokenizer.hash)
    targets = label_targets(spec, labels, "train")
    ids = encode_documents(tokenizer, texts, max_length=config.max_length, keep=config.keep)
    examples = EpochShuffled([{"input_ids": row, "labels": target} for row, target in zip(ids, targets, strict=True)],
                             seed=config.seed)

    def build_model():
        if config.pretrained is not None:
            return load_encoder_for_finetuning(config.pretrained, spec, seed=config.seed)[0]
        return model_for_task(_encoder_settings(config, tokenizer.vocab_size), spec, seed=config.seed)

    model, ctx = train_and_save(build_model, classification_loss, examples,
                                collate_for(spec, tokenizer.pad_id), config.train, seed=config.seed, resume=resume,
                                run_info={"text_classify": dataclasses.asdict(config)},
                                tokenizer_path=tokenizer.path, task=spec)
    report = {"task": spec.to_dict(), "max_length": config.max_length, "keep": config.keep}
    if not ctx.is_main:
        finish(ctx)
        return report
    for split in ("validation", "test"):
        path = getattr(data, split)
        if path is None:
            continue
        split_texts, split_labels = read_labelled(path, text_field=data.text_field, label_field=data.label_field)
        split_targets = label_targets(spec, split_labels, split)
        ids = encode_documents(tokenizer, split_texts, max_length=config.max_length, keep=config.keep)
        predicted = predict_classes(model, ids, pad_id=tokenizer.pad_id, batch_size=config.eval_batch_size,
                                    device=ctx.device)
        majority = np.full_like(split_targets, np.bincount(targets).argmax())
        report[split] = {"model": classification_metrics(split_targets, predicted, spec.problem),
                         "majority_class": classification_metrics(split_targets, majority, spec.problem),
                         "bag_of_words": bag_of_words_baseline(tokenizer, (texts, targets),
                                                               (split_texts, split_targets), spec.problem)}
    write_json_atomic(Path(config.train.out_dir) / "report.json", report)
    finish(ctx)
    return report


def load_config(path: str | os.PathLike, overrides=()) -> TextClassifyConfig:
    """A classification YAML (the keys of `TextClassifyConfig`) with `key.sub=value` overrides."""
    from dnabird.config import apply_overrides, build_config, read_yaml

    return build_config(TextClassifyConfig, apply_overrides(read_yaml(path), overrides, str(path)), str(path))
