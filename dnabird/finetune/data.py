"""What a task hands the fine-tuning recipe: `TaskData` (its spec, three splits, baseline features), and the
index-addressed example streams the training loop reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from dnabird.data.epochs import EpochOrder
from dnabird.errors import ParameterError
from dnabird.finetune.baselines import Baseline
from dnabird.model.task_spec import TaskSpec


class EpochExamples(EpochOrder):
    """An endless stream over `len(self)` = N example slots (`labels[i]`: slot i's label): global index g is the
    slot at position g % N of epoch g // N's order. `example(index, epoch)` may draw random numbers only from
    (seed, epoch, index), so any example can be rebuilt anywhere (DataLoader workers, DDP ranks, a resume)."""

    def __init__(self, labels: np.ndarray, *, seed: int = 0, shuffle: bool = False):
        self.labels, self.seed, self.shuffle = np.asarray(labels), seed, shuffle

    def __len__(self) -> int:
        """Examples per epoch."""
        return len(self.labels)

    def __getitem__(self, global_index: int) -> dict[str, np.ndarray]:
        epoch, position = divmod(int(global_index), len(self))
        return self.example(int(self.order(epoch)[position]), epoch)

    def example(self, index: int, epoch: int) -> dict[str, np.ndarray]:
        """Slot `index` as drawn in epoch `epoch`: {"input_ids": int [L], "labels": its label}."""
        raise NotImplementedError


class TokenExamples(EpochExamples):
    """Examples whose token ids are fixed: rows of `ids` ([N, L], padded to the task's eval length), and
    optionally each row's own global tokens (`global_mask`, bool [N, L]: Longformer's per-example global
    attention, handed to the model as `global_attention_mask`)."""

    def __init__(self, ids: np.ndarray, labels: np.ndarray, *, seed: int = 0, shuffle: bool = False,
                 global_mask: np.ndarray | None = None):
        super().__init__(labels, seed=seed, shuffle=shuffle)
        if global_mask is not None and global_mask.shape != ids.shape:
            raise ParameterError("global_mask", global_mask.shape, f"the shape of the token ids {ids.shape}")
        self.ids = ids
        self.global_mask = None if global_mask is None else np.asarray(global_mask, dtype=bool)

    def example(self, index: int, epoch: int) -> dict[str, np.ndarray]:
        example = {"input_ids": self.ids[index].astype(np.int64), "labels": self.labels[index]}
        if self.global_mask is not None:
            example["global_attention_mask"] = self.global_mask[index]
        return example


def collate(examples: Sequence[dict[str, np.ndarray]], *, pad_id: int,
            class_labels: bool = False) -> dict[str, torch.Tensor]:
    """Stack examples into a batch: input ids, the attention mask (True where not [PAD]), zero token types,
    labels (int64 class indices with `class_labels`, else float targets: binary and multi-label) and, when
    the examples carry one, the global attention mask."""
    ids = torch.from_numpy(np.stack([e["input_ids"] for e in examples]).astype(np.int64))
    labels = torch.as_tensor(np.stack([e["labels"] for e in examples]))
    batch = {"input_ids": ids, "attention_mask": ids != pad_id, "token_type_ids": torch.zeros_like(ids),
             "labels": labels.long() if class_labels else labels.float()}
    if "global_attention_mask" in examples[0]:
        batch["global_attention_mask"] = torch.from_numpy(np.stack([e["global_attention_mask"] for e in examples]))
    return batch


@dataclass(frozen=True)
class LossSpec:
    kind: str
    pos_weight: tuple[float, ...] | None = None
    class_weights: tuple[float, ...] | None = None


@dataclass
class TaskData:
    """A task's data, ready for `finetune`.

    spec: the `TaskSpec` written as task.json (head kind, labels, eval length, window, anchor, tokenizer).
    train: the training stream (shuffled, possibly redrawn per epoch); validation, test: fixed examples.
    test_groups: cluster id of each test example for the bootstrap, or None to resample examples one by one.
    baseline_features: baseline name -> `Baseline` (features of train slots at epoch 0 and of test examples, and
        the model fit on them; a token-count logistic regression is always added).
    summary: counts and settings of the data build, copied into report.json.
    loss: the training loss and its weights (None: the problem's default loss).
    A task whose report needs more (chromatin) subclasses it.
    """

    spec: TaskSpec
    train: EpochExamples
    validation: EpochExamples
    test: EpochExamples
    test_groups: np.ndarray | None = None
    baseline_features: dict[str, Baseline] = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    loss: LossSpec | None = None
