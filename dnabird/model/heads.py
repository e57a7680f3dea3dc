"""Heads on the encoder: masked LM (tied decoder) and next-sentence prediction (`PretrainingModel`), sequence
classification (`SequenceClassifier`), causal language modelling (`CausalLanguageModel`) and answer spans
(`SpanExtractor`)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from dnabird.errors import ParameterError, reject
from dnabird.labels import IGNORE_INDEX
from dnabird.model.config import EncoderConfig
from dnabird.model.encoder import Encoder, activation, initialised
from dnabird.model.task_spec import CLASSIFICATION_PROBLEMS, REGRESSION, TaskSpec


class MLMHead(nn.Module):
    """Transform (dense + activation + LayerNorm; absent with `mlm_transform=False`), then the decoder tied
    to the word embeddings, + bias. Also the LM head of causal models (RoBERTa's `lm_head` has this form)."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.config = config
        if config.mlm_transform:
            self.transform = nn.Linear(config.hidden_size, config.hidden_size)
            self.activation = activation(config.activation)
            self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.bias = nn.Parameter(torch.empty(config.vocab_size))

    def forward(self, hidden: torch.Tensor, word_embeddings: torch.Tensor) -> torch.Tensor:
        """Logits [..., V] for hidden states [..., H]."""
        if self.config.mlm_transform:
            hidden = self.norm(self.activation(self.transform(hidden)))
        return F.linear(hidden, word_embeddings, self.bias)


@dataclass
class PretrainingOutput:
    """loss = mlm_loss + nsp_loss (those whose labels were given). `mlm_logits` is [N, V] at the masked
    positions `mlm_positions` ([N, 2] (batch, token) indices) when labels were given, else [B, L, V].
    `nsp_logits` is None for a model without the NSP head."""

    loss: torch.Tensor | None
    mlm_loss: torch.Tensor | None
    nsp_loss: torch.Tensor | None
    mlm_logits: torch.Tensor
    nsp_logits: torch.Tensor | None
    mlm_positions: torch.Tensor | None


class PretrainingModel(nn.Module):
    """Encoder + masked-LM head + next-sentence head (NSP label 0 = B follows A, 1 = B is random); with
    `nsp=False` the MLM head only (RoBERTa's and Longformer's objective)."""

    def __init__(self, config: EncoderConfig, *, seed: int = 0, nsp: bool = True):
        super().__init__()
        self.config = config
        self.encoder = Encoder(config, seed=seed)
        self.mlm = initialised(lambda: MLMHead(config), seed + 1)
        self.nsp = initialised(lambda: nn.Linear(config.pooled_size, 2), seed + 2, config.initializer_range) \
            if nsp else None

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, *, mlm_labels: torch.Tensor | None = None,
                nsp_labels: torch.Tensor | None = None, full_logits: bool = False,
                **encoder_options) -> PretrainingOutput:
        """mlm_labels: [B, L] target ids, `IGNORE_INDEX` where not masked; with them the MLM logits are
        computed only at masked positions unless `full_logits`. nsp_labels: [B] in {0, 1}.
        encoder_options (step, global_positions, global_attention_mask): as in `Encoder.forward`."""
        if nsp_labels is not None and self.nsp is None:
            raise ParameterError("nsp_labels", "a tensor", "None for a model without the NSP head (nsp=False)")
        hidden = self.encoder(input_ids, attention_mask, token_type_ids, **encoder_options)  # [B, L, H]
        nsp_logits = None if self.nsp is None else self.nsp(self.encoder.pool(hidden, attention_mask))  # [B, 2]
        words = self.encoder.embeddings.word.weight
        mlm_loss = nsp_loss = positions = None
        if mlm_labels is not None and not full_logits:
            selected = mlm_labels != IGNORE_INDEX  # [B, L]
            positions = selected.nonzero()  # [N, 2]
            mlm_logits = self.mlm(hidden[selected], words)  # [N, V]
            mlm_loss = F.cross_entropy(mlm_logits.float(), mlm_labels[selected])
        else:
            mlm_logits = self.mlm(hidden, words)  # [B, L, V]
            if mlm_labels is not None:
                mlm_loss = F.cross_entropy(mlm_logits.flatten(0, 1).float(), mlm_labels.flatten(),
                                           ignore_index=IGNORE_INDEX)
        if nsp_labels is not None:
            nsp_loss = F.cross_entropy(nsp_logits.float(), nsp_labels)
        losses = [x for x in (mlm_loss, nsp_loss) if x is not None]
        loss = sum(losses) if losses else None
        return PretrainingOutput(loss, mlm_loss, nsp_loss, mlm_logits, nsp_logits, positions)


@dataclass
class ClassifierOutput:
    loss: torch.Tensor | None
    logits: torch.Tensor  # [B] for binary, [B, num_outputs] otherwise


class SequenceClassifier(nn.Module):
    """Encoder + dropout + linear layer on the pooled vector (`Encoder.pool`, `config.pooling`).

    problem: "binary" (one logit), "multiclass" (softmax over classes), "multilabel" (one sigmoid per output,
    e.g. 919 chromatin features) or "regression" (one real output per target, [B, num_outputs] even for one
    target). The loss (`loss`) is the one `LOSSES` allows for the problem, by default the first it lists.
    """

    def __init__(self, config: EncoderConfig, num_outputs: int, *, problem: str = "binary", seed: int = 0):
        super().__init__()
        problems = (*CLASSIFICATION_PROBLEMS, REGRESSION)
        reject(problem not in problems, "problem", problem, f"one of {problems}")
        reject(not isinstance(num_outputs, int) or num_outputs < 1 or (problem == "binary" and num_outputs != 1),
               "num_outputs", num_outputs, "1 for a binary problem, a positive integer otherwise")
        self.config, self.problem = config, problem
        self.encoder = Encoder(config, seed=seed)
        self.dropout = nn.Dropout(config.dropout)
        self.classifier = initialised(lambda: nn.Linear(config.pooled_size, num_outputs), seed + 3,
                                      config.initializer_range)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, *, labels: torch.Tensor | None = None,
                loss: str | None = None, pos_weight: torch.Tensor | None = None,
                class_weights: torch.Tensor | None = None, **encoder_options) -> ClassifierOutput:
        """labels: [B] (binary, float), [B] class ids (multiclass), [B, num_outputs] (multilabel; regression,
        float targets in the training scale). loss, pos_weight, class_weights: as `classifier_loss`.
        encoder_options (step, global_positions, global_attention_mask): as in `Encoder.forward`."""
        hidden = self.encoder(input_ids, attention_mask, token_type_ids, **encoder_options)
        logits = self.classifier(self.dropout(self.encoder.pool(hidden, attention_mask)))  # [B, num_outputs]
        if self.problem == "binary":
            logits = logits.squeeze(-1)  # [B]
        if labels is None:
            return ClassifierOutput(None, logits)
        return ClassifierOutput(classifier_loss(logits, labels, self.problem, loss, pos_weight=pos_weight,
                                                class_weights=class_weights), logits)


# loss -> the problems it trains; a problem's default loss is the first that lists it
LOSSES = {"bce": ("binary", "multilabel"), "cross_entropy": ("multiclass",), "mse": (REGRESSION,),
          "poisson": (REGRESSION,)}


def default_loss(problem: str) -> str:
    """The loss a `problem` trains with unless a task names another (`LOSSES`)."""
    return next(kind for kind, problems in LOSSES.items() if problem in problems)


def classifier_loss(logits: torch.Tensor, labels: torch.Tensor, problem: str, loss: str | None = None, *,
                    pos_weight: torch.Tensor | None = None, class_weights: torch.Tensor | None = None) -> torch.Tensor:
    """The mean loss of a `SequenceClassifier`'s outputs, computed in fp32. loss (None: the problem's default):
    "bce" (binary cross-entropy of logits; `pos_weight` [num_outputs] or a scalar weighs positive targets),
    "cross_entropy" (softmax over classes; `class_weights` [classes] weigh each class, the mean then divides
    by the summed weights of the batch's labels, as torch's), "mse" (squared error), "poisson" (the Poisson
    negative log-likelihood of counts given log-rate outputs, Stirling's term included: torch's
    `PoissonNLLLoss(log_input=True, full=True)`)."""
    loss = default_loss(problem) if loss is None else loss
    reject(problem not in LOSSES.get(loss, ()), "loss", loss,
           f"a loss of a {problem!r} problem: one of {[k for k, v in LOSSES.items() if problem in v]}")
    logits = logits.float()
    if loss == "cross_entropy":
        return F.cross_entropy(logits, labels, weight=class_weights)
    labels = labels.float().reshape(logits.shape)
    if loss == "bce":
        return F.binary_cross_entropy_with_logits(logits, labels, pos_weight=pos_weight)
    if loss == "mse":
        return F.mse_loss(logits, labels)
    return F.poisson_nll_loss(logits, labels, log_input=True, full=True)


@dataclass
class LanguageModelOutput:
    loss: torch.Tensor | None  # mean cross-entropy over the scored next tokens
    logits: torch.Tensor  # [B, L, V]: position t scores token t + 1


class CausalLanguageModel(nn.Module):
    """A causal encoder (`config.causal`) + LM head (the MLM head's form, decoder tied to the word
    embeddings): the logits at position t are the distribution of token t + 1 given tokens 0..t."""

    def __init__(self, config: EncoderConfig, *, seed: int = 0):
        super().__init__()
        reject(not config.causal, "config.causal", config.causal, "True for a causal language model")
        self.config = config
        self.encoder = Encoder(config, seed=seed)
        self.lm = initialised(lambda: MLMHead(config), seed + 1)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, *,
                labels: torch.Tensor | None = None, step: int = 0) -> LanguageModelOutput:
        """labels: [B, L] token ids aligned with the input (usually the input itself), IGNORE_INDEX where a
        token is not scored; the loss scores labels[:, t + 1] with the logits at t."""
        hidden = self.encoder(input_ids, attention_mask, step=step)  # [B, L, H]
        logits = self.lm(hidden, self.encoder.embeddings.word.weight)  # [B, L, V]
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits[:, :-1].flatten(0, 1).float(), labels[:, 1:].flatten(),
                                   ignore_index=IGNORE_INDEX)
        return LanguageModelOutput(loss, logits)


@dataclass
class SpanOutput:
    loss: torch.Tensor | None
    start_logits: torch.Tensor  # [B, L], padding at the dtype's minimum
    end_logits: torch.Tensor  # [B, L]


class SpanExtractor(nn.Module):
    """Encoder + a linear layer giving every token a start and an end logit (extractive QA, as BERT's SQuAD
    head). The loss is the negative log-likelihood of the gold starts and of the gold ends, each marginalised
    over every gold occurrence (Longformer's TriviaQA loss; plain cross-entropy for one answer)."""

    def __init__(self, config: EncoderConfig, *, seed: int = 0):
        super().__init__()
        self.config = config
        self.encoder = Encoder(config, seed=seed)
        self.dropout = nn.Dropout(config.dropout)
        self.span = initialised(lambda: nn.Linear(config.hidden_size, 2), seed + 4, config.initializer_range)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, *, start_targets: torch.Tensor | None = None,
                end_targets: torch.Tensor | None = None, **encoder_options) -> SpanOutput:
        """start_targets, end_targets: bool [B, L], True at every gold start (end) token of an example (at
        least one per example; [CLS] when the answer is not in the input). Other arguments as the encoder's."""
        hidden = self.encoder(input_ids, attention_mask, token_type_ids, **encoder_options)
        logits = self.span(self.dropout(hidden)).float()  # [B, L, 2]
        if attention_mask is not None:
            logits = logits.masked_fill(~attention_mask.bool()[..., None], torch.finfo(logits.dtype).min)
        start, end = logits.unbind(-1)
        loss = None
        if start_targets is not None and end_targets is not None:
            loss = (_marginal_nll(start, start_targets.bool()) + _marginal_nll(end, end_targets.bool())) / 2
        return SpanOutput(loss, start, end)


def _marginal_nll(logits: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """Mean over the batch of −log Σ_{gold positions} softmax(logits)."""
    reject(not bool(gold.any(-1).all()), "span targets", "an example without a gold position",
           "at least one gold token per example ([CLS] when the answer is not in the input)")
    gold_logits = logits.masked_fill(~gold, torch.finfo(logits.dtype).min)
    return (logits.logsumexp(-1) - gold_logits.logsumexp(-1)).mean()


def model_for_task(config: EncoderConfig, spec: TaskSpec, *, seed: int = 0) -> nn.Module:
    """The model of a task's head: a `SpanExtractor` for a "span" problem, else a `SequenceClassifier`."""
    if spec.problem == "span":
        return SpanExtractor(config, seed=seed)
    return SequenceClassifier(config, spec.num_outputs, problem=spec.problem, seed=seed)
