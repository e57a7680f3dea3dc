"""The MLM + NSP objective as a loss function for `dnabird.train.train`."""

from __future__ import annotations

import torch

from dnabird.labels import IGNORE_INDEX
from dnabird.train import LossOutput

MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def mlm_nsp_loss(model: torch.nn.Module, batch: dict[str, torch.Tensor], step: int) -> LossOutput:
    """BERT's summed MLM + NSP loss of a `PretrainingModel` on a collated pretraining batch.

    Metrics: `mlm_acc` (argmax = true token at masked positions), `nsp_acc`, and the two losses.
    """
    out = model(*(batch[k] for k in MODEL_INPUTS), mlm_labels=batch["mlm_labels"],
                nsp_labels=batch["nsp_label"], step=step)
    labels = batch["mlm_labels"][batch["mlm_labels"] != IGNORE_INDEX]   # order of out.mlm_logits' rows
    one = torch.ones((), device=labels.device)
    metrics = {
        "mlm_acc": ((out.mlm_logits.argmax(-1) == labels).sum(), torch.tensor(float(len(labels)))),
        "nsp_acc": ((out.nsp_logits.argmax(-1) == batch["nsp_label"]).sum(),
                    torch.tensor(float(len(batch["nsp_label"])))),
        "mlm_loss": (out.mlm_loss.detach(), one),
        "nsp_loss": (out.nsp_loss.detach(), one),
    }
    return LossOutput(out.loss, int(batch["attention_mask"].sum()), metrics)
