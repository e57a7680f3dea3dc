"""Heads on the encoder: masked LM (tied decoder), next-sentence prediction, sequence classification.

`PretrainingModel` = encoder + MLM + NSP with BERT's summed loss; `SequenceClassifier` = encoder + a
linear layer on the pooled [CLS] vector (binary, multi-class or multi-label).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from dnabird.errors import ParameterError
from dnabird.labels import IGNORE_INDEX
from dnabird.model.config import EncoderConfig
from dnabird.model.encoder import Encoder, activation, materialise
from dnabird.model.task_spec import PROBLEMS


class MLMHead(nn.Module):
    """Transform (dense + activation + LayerNorm; absent with `mlm_transform=False`), then the decoder tied
    to the word embeddings, + bias."""

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
    positions `mlm_positions` ([N, 2] (batch, token) indices) when labels were given, else [B, L, V]."""

    loss: torch.Tensor | None
    mlm_loss: torch.Tensor | None
    nsp_loss: torch.Tensor | None
    mlm_logits: torch.Tensor
    nsp_logits: torch.Tensor
    mlm_positions: torch.Tensor | None


class PretrainingModel(nn.Module):
    """Encoder + masked-LM head + next-sentence head (NSP label 0 = B follows A, 1 = B is random)."""

    def __init__(self, config: EncoderConfig, *, seed: int = 0):
        super().__init__()
        self.config = config
        self.encoder = Encoder(config, seed=seed)
        with torch.device("meta"):
            self.mlm = MLMHead(config)
            self.nsp = nn.Linear(config.hidden_size, 2)
        materialise(self.mlm, seed + 1)
        materialise(self.nsp, seed + 2, std=config.initializer_range)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, *, mlm_labels: torch.Tensor | None = None,
                nsp_labels: torch.Tensor | None = None, step: int = 0, full_logits: bool = False,
                global_positions: tuple[int, ...] | None = None) -> PretrainingOutput:
        """mlm_labels: [B, L] target ids, `IGNORE_INDEX` where not masked; with them the MLM logits are
        computed only at masked positions unless `full_logits`. nsp_labels: [B] in {0, 1}.
        step, global_positions: as in `Encoder.forward`."""
        hidden = self.encoder(input_ids, attention_mask, token_type_ids, step=step,
                              global_positions=global_positions)  # [B, L, H]
        nsp_logits = self.nsp(self.encoder.pool(hidden))  # [B, 2]
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
    """Encoder + dropout + linear layer on the pooled [CLS] vector.

    problem: "binary" (one logit, BCE), "multiclass" (softmax CE) or "multilabel" (one sigmoid BCE per
    output, e.g. 919 chromatin features; `pos_weight` up-weights positives).
    """

    def __init__(self, config: EncoderConfig, num_outputs: int, *, problem: str = "binary", seed: int = 0):
        super().__init__()
        if problem not in PROBLEMS:
            raise ParameterError("problem", problem, f"one of {PROBLEMS}")
        if not isinstance(num_outputs, int) or num_outputs < 1 or (problem == "binary" and num_outputs != 1):
            raise ParameterError("num_outputs", num_outputs,
                                 "1 for a binary problem, a positive integer otherwise")
        self.config, self.problem = config, problem
        self.encoder = Encoder(config, seed=seed)
        self.dropout = nn.Dropout(config.dropout)
        with torch.device("meta"):
            self.classifier = nn.Linear(config.hidden_size, num_outputs)
        materialise(self.classifier, seed + 3, std=config.initializer_range)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, *, labels: torch.Tensor | None = None,
                pos_weight: torch.Tensor | None = None, step: int = 0,
                global_positions: tuple[int, ...] | None = None) -> ClassifierOutput:
        hidden = self.encoder(input_ids, attention_mask, token_type_ids, step=step,
                              global_positions=global_positions)
        logits = self.classifier(self.dropout(self.encoder.pool(hidden)))  # [B, num_outputs]
        if self.problem == "binary":
            logits = logits.squeeze(-1)  # [B]
        loss = None
        if labels is not None:
            if self.problem == "multiclass":
                loss = F.cross_entropy(logits.float(), labels)
            else:
                loss = F.binary_cross_entropy_with_logits(logits.float(), labels.float(),
                                                          pos_weight=pos_weight)
        return ClassifierOutput(loss, logits)
