"""Scoring a fine-tuned classifier on fixed examples, and keeping the best model seen on validation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import safetensors.torch
import torch
import torch.nn.functional as F

from dnabird.finetune.data import EpochExamples, collate
from dnabird.finetune.metrics import better, binary_metrics, multiclass_metrics, multilabel_metrics
from dnabird.io import follow_umask, write_json_atomic
from dnabird.model.task_spec import TaskSpec


def classifier_forward(model: torch.nn.Module, batch: dict[str, torch.Tensor], problem: str, positive_weight: float,
                       **extra):
    """The classifier's output on a collated batch, with its loss (BCE weighting positives by
    `positive_weight`, or CE for a multi-class problem); `extra` goes to the model (e.g. `step`)."""
    weight = None if problem == "multiclass" else torch.tensor(positive_weight, device=batch["labels"].device)
    return model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"], labels=batch["labels"],
                 pos_weight=weight, global_attention_mask=batch.get("global_attention_mask"), **extra)


@torch.no_grad()
def predict(model: torch.nn.Module, examples: EpochExamples, spec: TaskSpec, *, batch_size: int = 8,
            pad_id: int, positive_weight: float = 1.0,
            device: str | torch.device = "cpu") -> tuple[np.ndarray, np.ndarray, float]:
    """(labels, scores, mean loss) over every slot of `examples` in order (epoch 0), in eval mode; scores
    are probabilities: sigmoid per output (binary [N], multi-label [N, K]) or softmax (multi-class)."""
    model.eval()
    labels, scores, loss_sum = [], [], 0.0
    for first in range(0, len(examples), batch_size):
        batch = collate([examples.example(i, 0) for i in range(first, min(len(examples), first + batch_size))],
                        pad_id=pad_id, class_labels=spec.problem == "multiclass")
        batch = {k: v.to(device) for k, v in batch.items()}
        out = classifier_forward(model, batch, spec.problem, positive_weight)
        loss_sum += float(out.loss) * len(batch["labels"])
        logits = out.logits.float()
        scores.append((F.softmax(logits, -1) if spec.problem == "multiclass" else torch.sigmoid(logits)).cpu())
        labels.append(batch["labels"].cpu())
    return torch.cat(labels).numpy(), torch.cat(scores).numpy(), loss_sum / len(examples)


def score(spec: TaskSpec, labels: np.ndarray, scores: np.ndarray) -> dict:
    """The metrics of `spec.problem` (see `dnabird.finetune.metrics`)."""
    if spec.problem == "binary":
        return binary_metrics(labels, scores)
    if spec.problem == "multiclass":
        return multiclass_metrics(labels, scores)
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
