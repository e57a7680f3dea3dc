"""`FinetuneConfig`: the settings every fine-tuning run states explicitly (a task's config adds `data`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from dnabird.config import RecipeConfig
from dnabird.errors import ParameterError
from dnabird.finetune.metrics import BINARY_METRICS, LOWER_IS_BETTER
from dnabird.train import TrainConfig

FROM_SCRATCH = "none"


def reject(invalid: bool, name: str, value: object, expected: str) -> None:
    """Raise `ParameterError(name, value, expected)` when `invalid`."""
    if invalid:
        raise ParameterError(name, value, expected)


def require_paths(data: object, names: tuple[str, ...], expected: str) -> None:
    """Raise `ParameterError` naming the first of the `data.<name>` paths that is null."""
    for name in names:
        reject(getattr(data, name) is None, f"data.{name}", None, expected)


@dataclass
class FinetuneConfig(RecipeConfig):
    """Settings of one fine-tuning run; nothing is inherited silently from the pretraining checkpoint.

    pretrained: checkpoint directory of a pretrained encoder, or "none" to train the same model from
        scratch (the baseline beside every pretrained run). Inside `dnabird run`, null means the
        `pretrain` stage's model.
    model, model_overrides: the encoder trained from scratch: a preset and `EncoderConfig` fields merged
        over it (`dnabird.model.config.build_encoder_config`; vocab_size comes from the tokenizer), checked
        when the config loads. Ignored with a pretrained checkpoint.
    tokenizer: the tokenizer the task's inputs are encoded with (a `.model`, or a Hugging Face `tokenizer.json`
        beside its `special_tokens_map.json`). Null: the pretrained checkpoint's (inside `dnabird run`, when
        `pretrained` is null too: the `tokenizer` stage's). A checkpoint trained with another tokenizer is an error.
    dropout, attention_dropout: the encoder's (and head's) dropout while fine-tuning; null keeps the
        checkpoint's (or the preset's).
    pooling, pool_tokens: the vector the head reads, "cls", "mean", "centre" (over `pool_tokens` central
        tokens) or "centre_max" (that and the maximum over all tokens; `EncoderConfig.pooling`); null keeps
        the checkpoint's (or the preset's). Saved with the fine-tuned model, so scoring reads it back.
    local_max_tokens: "centre_max" only, the maximum over this many central tokens beside the window's
        (`EncoderConfig.local_max_tokens`); null: 0.
    freeze_encoder: train the classification head only (the encoder's weights stay as loaded).
    positive_weight: weight of positive targets in the binary / multi-label loss (1: unweighted).
    epochs: when set, train.max_steps = ceil(epochs × examples per epoch / train.global_batch_size).
    selection_metric: the validation metric that picks the model kept ("loss": lowest; others: highest).
    eval_batch_size: examples per forward pass when evaluating.
    bootstrap_resamples: resamples of the test set for each metric's 95 % interval.
    seed: model initialisation (head; the whole model from scratch), example order, negatives, dropout.
    train: the loop's settings, among them `eval_every` (optimizer steps between validations; the last step
        always validates); `warmup_steps` must be set below `max_steps` (the loop's default of 10,000
        warmup steps suits pretraining, not a few hundred fine-tuning steps).
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
        known = (*BINARY_METRICS, *LOWER_IS_BETTER, "median_auroc", "median_auprc", "macro_f1")
        reject(self.selection_metric not in known, "selection_metric", self.selection_metric, f"one of {known}")
        build_encoder_config(self.model, self.model_overrides)  # the model settings fail when the config loads

    def check_schedule(self, max_steps: int) -> None:
        """Warmup must be stated for fine-tuning: fewer steps than the run has."""
        if self.train.warmup_steps >= max_steps:
            raise ParameterError("train.warmup_steps", self.train.warmup_steps,
                                 f"fewer than the run's {max_steps} steps; set it explicitly for fine-tuning")
