"""`FinetuneConfig`: the settings every fine-tuning run states explicitly (a task's config adds `data`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from dnabird.config import RecipeConfig
from dnabird.errors import reject
from dnabird.finetune.metrics import SELECTION_METRICS
from dnabird.train import TrainConfig

FROM_SCRATCH = "none"


@dataclass
class FinetuneConfig(RecipeConfig):
    """Settings of one fine-tuning run; nothing is inherited silently from the pretraining checkpoint.

    pretrained: a pretrained encoder's checkpoint directory, or "none" to train the same model from scratch
        (inside `dnabird run`, null: the `pretrain` stage's model).
    model, model_overrides: the encoder trained from scratch, a preset with `EncoderConfig` fields merged over
        it (`dnabird.model.config.build_encoder_config`), checked when the config loads; with a checkpoint only
        `model_overrides.attention` applies (the pattern; the weights fit any).
    tokenizer: a `.model`, or a Hugging Face `tokenizer.json` beside its `special_tokens_map.json`; null: the
        checkpoint's (or the `tokenizer` stage's). One other than the checkpoint's is an error.
    dropout, attention_dropout, pooling, pool_tokens, local_max_tokens: `EncoderConfig` fields set over the
        checkpoint's (or the preset's; poolings: docs/promoter.md), saved with the fine-tuned model; null keeps
        them (local_max_tokens: 0).
    freeze_encoder: train the classification head only.
    positive_weight: weight of positive targets in the binary / multi-label loss (1: unweighted), where the task
        sets no loss of its own (`TaskData.loss`).
    epochs: when set, train.max_steps = ceil(epochs × examples per epoch / train.global_batch_size).
    selection_metric: the validation metric that picks the model kept ("loss" and "mse": lowest; others: highest);
        one the task's problem does not have (`dnabird.finetune.metrics.SELECTION_METRICS`, e.g. the default
        "auroc" for a regression) is replaced by the problem's default (binary "auroc", multi-class "mcc",
        multi-label "median_auroc", regression "pearson": the mean Pearson r over targets), with a log line.
    eval_batch_size: examples per forward pass when evaluating.
    bootstrap_resamples: resamples of the test set for each metric's 95 % interval.
    seed: model initialisation (head; the whole model from scratch), example order, negatives, dropout.
    train: the loop's settings (`eval_every`: optimizer steps between validations); `warmup_steps` must be
        set below the run's steps (the loop's default suits pretraining, not a few hundred fine-tuning steps).
    """

    pretrained: str | None = None
    model: str = "bigbird-base"
    model_overrides: dict = field(default_factory=dict)
    tokenizer: str | None = None
    dropout: float | None = None
    attention_dropout: float | None = None
    pooling: str | None = None
    pool_tokens: int | None = None
    local_max_tokens: int | None = None
    freeze_encoder: bool = False
    positive_weight: float = 1.0
    epochs: float | None = None
    selection_metric: str = "auroc"
    eval_batch_size: int = 8
    bootstrap_resamples: int = 1000
    seed: int = 0
    train: TrainConfig = field(default_factory=TrainConfig)

    def __post_init__(self):
        from dnabird.model.config import POOLINGS, build_encoder_config

        reject(self.positive_weight <= 0, "positive_weight", self.positive_weight, "a number > 0")
        reject(self.epochs is not None and self.epochs <= 0, "epochs", self.epochs,
               "a number of epochs > 0, or null to use train.max_steps")
        reject(self.eval_batch_size < 1 or self.bootstrap_resamples < 1, "(eval_batch_size, bootstrap_resamples)",
               (self.eval_batch_size, self.bootstrap_resamples), "integers >= 1")
        reject(self.pooling is not None and self.pooling not in POOLINGS, "pooling", self.pooling,
               f"one of {POOLINGS}, or null to keep the checkpoint's")
        known = tuple(dict.fromkeys(m for metrics in SELECTION_METRICS.values() for m in metrics))
        reject(self.selection_metric not in known, "selection_metric", self.selection_metric, f"one of {known}")
        build_encoder_config(self.model, self.model_overrides)  # the model settings fail when the config loads

    def check_schedule(self, max_steps: int) -> None:
        """Warmup must be stated for fine-tuning: fewer steps than the run has."""
        reject(self.train.warmup_steps >= max_steps, "train.warmup_steps", self.train.warmup_steps,
               f"fewer than the run's {max_steps} steps (train.max_steps, or the epochs'); lower it, as "
               f"train.warmup_steps={max_steps // 10}")
