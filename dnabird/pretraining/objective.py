"""Pretraining objectives as loss functions for `dnabird.train.train`: MLM + NSP (BERT, BigBird) and MLM alone."""

from __future__ import annotations

import math

import torch

from dnabird.labels import IGNORE_INDEX
from dnabird.train import LossOutput

MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _masked_lm(model: torch.nn.Module, batch: dict[str, torch.Tensor], step: int, **nsp_labels) -> tuple:
    """The `PretrainingModel`'s output on a collated pretraining batch, and its metric `mlm_acc` (argmax = true
    token at masked positions)."""
    out = model(*(batch[k] for k in MODEL_INPUTS), mlm_labels=batch["mlm_labels"], step=step, **nsp_labels)
    labels = batch["mlm_labels"][batch["mlm_labels"] != IGNORE_INDEX]   # order of out.mlm_logits' rows
    return out, {"mlm_acc": ((out.mlm_logits.argmax(-1) == labels).sum(), torch.tensor(float(len(labels))))}


def mlm_nsp_loss(model: torch.nn.Module, batch: dict[str, torch.Tensor], step: int) -> LossOutput:
    """BERT's summed MLM + NSP loss of a `PretrainingModel`; metrics `mlm_acc`, `nsp_acc` and the two losses."""
    out, metrics = _masked_lm(model, batch, step, nsp_labels=batch["nsp_label"])
    one = torch.ones((), device=batch["mlm_labels"].device)
    metrics.update(nsp_acc=((out.nsp_logits.argmax(-1) == batch["nsp_label"]).sum(),
                            torch.tensor(float(len(batch["nsp_label"])))),
                   mlm_loss=(out.mlm_loss.detach(), one), nsp_loss=(out.nsp_loss.detach(), one))
    return LossOutput(out.loss, int(batch["attention_mask"].sum()), metrics)


def mlm_loss(model: torch.nn.Module, batch: dict[str, torch.Tensor], step: int) -> LossOutput:
    """The masked-LM loss alone (RoBERTa / Longformer: no NSP); metrics `mlm_acc` and `mlm_bits` (mean
    masked-token loss in bits: the "MLM BPC" of the BigBird and Longformer papers, which is per subword token)."""
    out, metrics = _masked_lm(model, batch, step)
    metrics["mlm_bits"] = (out.mlm_loss.detach() / math.log(2), torch.ones((), device=batch["mlm_labels"].device))
    return LossOutput(out.loss, int(batch["attention_mask"].sum()), metrics)
