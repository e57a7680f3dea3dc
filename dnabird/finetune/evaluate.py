"""Scoring a fine-tuned classifier or regression head on fixed examples (`predict`, `score`, `Scoring`), and
keeping the best model seen on validation (`Selection`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import safetensors.torch
import torch
import torch.nn.functional as F

from dnabird.finetune.data import EpochExamples, LossSpec, collate
from dnabird.finetune.metrics import (
    better,
    binary_metrics,
    multiclass_metrics,
    multilabel_metrics,
    regression_metrics,
)
from dnabird.io import follow_umask, write_json_atomic
from dnabird.model.task_spec import REGRESSION, TaskSpec


class Scoring(NamedTuple):
    """What a finished run hands `Task.report`: `predict(examples) -> (labels, scores, mean loss)` with the
    selected model at the run's settings (`predict`), and the tokenizer's pad id."""

    predict: Callable[[EpochExamples], tuple[np.ndarray, np.ndarray, float]]
    pad_id: int


def classifier_forward(model: torch.nn.Module, batch: dict[str, torch.Tensor], loss: LossSpec, **extra):
    """The head's output on a collated batch, with its `loss` (`LossSpec`); `extra` goes to the model
    (e.g. `step`)."""
    return model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"], labels=batch["labels"],
                 global_attention_mask=batch.get("global_attention_mask"),
                 **loss.head_options(batch["labels"].device), **extra)


@torch.no_grad()
def predict(model: torch.nn.Module, examples: EpochExamples, spec: TaskSpec, *, batch_size: int = 8,
            pad_id: int, loss: LossSpec | None = None,
            device: str | torch.device = "cpu") -> tuple[np.ndarray, np.ndarray, float]:
    """(labels, scores, mean loss) over every slot of `examples` in order (epoch 0), in eval mode. `loss`:
    the loss reported (None: the problem's default, unweighted). Scores are probabilities, sigmoid per output
    (binary [N], multi-label [N, K]) or softmax (multi-class), or a regression head's outputs [N, K]; regression
    labels and outputs are in the training scale (`user_scale` maps both to the user's)."""
    loss = LossSpec.default(spec) if loss is None else loss
    model.eval()
    labels, scores, loss_sum = [], [], 0.0
    for first in range(0, len(examples), batch_size):
        batch = collate([examples.example(i, 0) for i in range(first, min(len(examples), first + batch_size))],
                        pad_id=pad_id, class_labels=spec.problem == "multiclass")
        batch = {k: v.to(device) for k, v in batch.items()}
        out = classifier_forward(model, batch, loss)
        loss_sum += float(out.loss) * len(batch["labels"])
        logits = out.logits.float()
        if spec.problem == "multiclass":
            logits = F.softmax(logits, -1)
        elif spec.problem != REGRESSION:
            logits = torch.sigmoid(logits)
        scores.append(logits.cpu())
        labels.append(batch["labels"].cpu())
    return torch.cat(labels).numpy(), torch.cat(scores).numpy(), loss_sum / len(examples)


def user_scale(spec: TaskSpec, labels: np.ndarray, outputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A regression task's labels and head outputs, both in the training scale, in the user's scale
    (`TargetTransform.restore` and `inverse`)."""
    transform = spec.transform
    return transform.restore(labels), transform.inverse(outputs)


def score(spec: TaskSpec, labels: np.ndarray, scores: np.ndarray) -> dict:
    """The metrics of `spec.problem` (see `dnabird.finetune.metrics`); a regression's in the user's scale."""
    if spec.problem == "binary":
        return binary_metrics(labels, scores)
    if spec.problem == "multiclass":
        return multiclass_metrics(labels, scores, spec.labels)
    if spec.problem == REGRESSION:
        return regression_metrics(*user_scale(spec, labels, scores), spec.labels)
    return multilabel_metrics(labels, scores, spec.labels, spec.label_groups)


class Selection:
    """The best validation result so far (by `metric`) and a CPU copy of that step's weights, saved inside
    each training checkpoint (`save` / `load`), so a resumed run keeps the best model of the steps before it."""

    STATE, RECORD = "model.safetensors", "selection.json"

    def __init__(self, metric: str):
        self.metric = metric
        self.step: int | None = None
        self.value: float | None = None
        self.metrics: dict = {}
        self.state: dict[str, torch.Tensor] | None = None

    def offer(self, step: int, metrics: dict, model: torch.nn.Module) -> bool:
        """Keep `model`'s weights if `metrics[self.metric]` beats the best so far; returns whether it did."""
        value = metrics.get(self.metric)
        if value is None or not better(self.metric, value, self.value):
            return False
        self.step, self.value, self.metrics = step, value, metrics
        self.state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        return True

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        if self.state is not None:
            safetensors.torch.save_file(self.state, str(directory / self.STATE))
            follow_umask(directory / self.STATE)
        write_json_atomic(directory / self.RECORD, {"metric": self.metric, "step": self.step, "value": self.value,
                                                    "metrics": self.metrics})

    def load(self, directory: Path) -> None:
        record = json.loads((directory / self.RECORD).read_text())
        self.step, self.value, self.metrics = record["step"], record["value"], record["metrics"]
        self.state = safetensors.torch.load_file(str(directory / self.STATE)) if self.step is not None else None
