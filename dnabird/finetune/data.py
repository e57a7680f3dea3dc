"""What a task hands the fine-tuning recipe: `TaskData` (its spec, three splits, baseline features, its loss:
`LossSpec`), and the index-addressed example streams the training loop reads."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from dnabird.data.epochs import EpochOrder
from dnabird.errors import ParameterError, reject
from dnabird.finetune.baselines import CLASSIFIERS, REGRESSORS, Baseline
from dnabird.model.heads import LOSSES, default_loss
from dnabird.model.task_spec import REGRESSION, TaskSpec


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
    """The loss a task trains with (computed by `dnabird.model.heads.classifier_loss`).

    kind: "bce" (binary, multilabel), "cross_entropy" (multiclass), "mse" or "poisson" (regression; Poisson:
        the head outputs log-rates of count targets, as torch's `PoissonNLLLoss(log_input=True, full=True)`,
        and the task's target transform has link "exp").
    pos_weight: bce only: the weight of positive targets, one per output (None: 1).
    class_weights: cross_entropy only: one weight per class (None: equal).
    """

    kind: str
    pos_weight: tuple[float, ...] | None = None  # bce, per output
    class_weights: tuple[float, ...] | None = None  # cross_entropy, per class

    def __post_init__(self):
        reject(self.kind not in LOSSES, "loss.kind", self.kind, f"one of {list(LOSSES)}")
        for name, kind in (("pos_weight", "bce"), ("class_weights", "cross_entropy")):
            value = getattr(self, name)
            if value is None:
                continue
            reject(self.kind != kind, f"loss.{name}", value, f"null for a {self.kind!r} loss (only {kind!r} has it)")
            try:
                weights = tuple(float(w) for w in value)
            except (TypeError, ValueError):
                raise ParameterError(f"loss.{name}", value, "a list of numbers > 0") from None
            reject(not weights or not all(math.isfinite(w) and w > 0 for w in weights), f"loss.{name}", value,
                   "a non-empty list of finite numbers > 0")
            object.__setattr__(self, name, weights)

    @classmethod
    def default(cls, spec: TaskSpec, positive_weight: float = 1.0) -> LossSpec:
        """The problem's default loss (`dnabird.model.heads.LOSSES`): BCE weighting positives of every output
        by `positive_weight` (unweighted at 1), cross-entropy, or MSE."""
        kind = default_loss(spec.problem)
        weight = (positive_weight,) * spec.num_outputs if kind == "bce" and positive_weight != 1 else None
        return cls(kind, pos_weight=weight)

    def check(self, spec: TaskSpec) -> None:
        """`ParameterError` unless the loss fits `spec`: its problem, one weight per output (bce) or per class
        (cross_entropy), and the target transform's link ("exp" for poisson, "identity" for mse)."""
        allowed = [kind for kind, problems in LOSSES.items() if spec.problem in problems]
        reject(spec.problem not in LOSSES[self.kind], "loss.kind", self.kind,
               f"a loss of a {spec.problem} problem (task {spec.task!r}): one of {allowed}")
        for name in ("pos_weight", "class_weights"):
            value = getattr(self, name)
            reject(value is not None and len(value) != spec.num_outputs, f"loss.{name}", value,
                   f"one weight for each of task {spec.task!r}'s {spec.num_outputs} outputs {list(spec.labels)}")
        if spec.problem == REGRESSION:
            link = "exp" if self.kind == "poisson" else "identity"
            reject(spec.transform.link != link, "target_transform.link", spec.transform.link,
                   f"{link!r} for a {self.kind!r} loss (poisson: the head outputs log-rates)")

    def head_options(self, device: str | torch.device) -> dict:
        """The keyword arguments of `SequenceClassifier.forward` that select this loss, weights on `device`."""
        def tensor(weights):
            return None if weights is None else torch.tensor(weights, dtype=torch.float32, device=device)

        return {"loss": self.kind, "pos_weight": tensor(self.pos_weight), "class_weights": tensor(self.class_weights)}


def check_regression_labels(spec: TaskSpec, splits: dict[str, EpochExamples], loss: LossSpec) -> None:
    """`ParameterError` naming the split unless a regression task's labels are finite floats [N, targets]
    (non-negative counts for a Poisson loss)."""
    for name, split in splits.items():
        labels = split.labels
        reject(labels.ndim != 2 or labels.shape[1] != spec.num_outputs or not np.issubdtype(labels.dtype, np.floating),
               f"{name} labels", f"{labels.dtype} {labels.shape}",
               f"float targets [N, {spec.num_outputs}] in the training scale for task {spec.task!r}")
        bad = np.flatnonzero(~np.isfinite(labels).all(1) | ((labels < 0).any(1) if loss.kind == "poisson" else False))
        reject(len(bad) > 0, f"{name} labels", labels[bad[0]].tolist() if len(bad) else None,
               f"finite targets{' >= 0 (Poisson counts)' if loss.kind == 'poisson' else ''} "
               f"(first bad row: {bad[0] if len(bad) else None}, {len(bad)} bad rows)")


@dataclass
class TaskData:
    """A task's data, ready for `finetune`.

    spec: the `TaskSpec` written as task.json (head kind, labels, eval length, window, anchor, tokenizer).
    train: the training stream (shuffled, possibly redrawn per epoch); validation, test: fixed examples.
    test_groups: cluster id of each test example for the bootstrap, or None to resample examples one by one.
    baseline_features: baseline name -> `Baseline` (features of train slots at epoch 0 and of test examples, and
        the model fit on them; a token-count logistic regression is always added).
    summary: counts and settings of the data build, copied into report.json.
    loss: the loss trained (None: the problem's default, `LossSpec.default` with the config's positive_weight).
    Regression labels are float [N, targets] in the training scale (`spec.transform` maps them back).
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

    def __post_init__(self):
        if self.loss is not None:
            self.loss.check(self.spec)
        fits = REGRESSORS if self.spec.problem == REGRESSION else CLASSIFIERS
        for name, baseline in self.baseline_features.items():
            reject(baseline.model not in fits, f"baseline_features[{name!r}].model", baseline.model,
                   f"one of {fits} for task {self.spec.task!r}'s {self.spec.problem} problem")
        if self.spec.problem == REGRESSION:
            check_regression_labels(self.spec, {"train": self.train, "validation": self.validation,
                                                "test": self.test}, self.loss or LossSpec.default(self.spec))

    def loss_spec(self, positive_weight: float = 1.0) -> LossSpec:
        """The loss trained: `loss`, or the problem's default with `positive_weight`."""
        return self.loss if self.loss is not None else LossSpec.default(self.spec, positive_weight)
