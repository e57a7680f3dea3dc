from types import SimpleNamespace

import pytest
import torch

from dnabird.pretraining.objective import mlm_nsp_loss


class FixedOutputs(torch.nn.Module):
    """Returns preset logits, and records what it was called with."""

    def __init__(self, mlm_logits, nsp_logits):
        super().__init__()
        self.mlm_logits, self.nsp_logits = mlm_logits, nsp_logits

    def forward(self, input_ids, attention_mask, token_type_ids, *, mlm_labels, nsp_labels, step):
        self.step = step
        return SimpleNamespace(loss=torch.tensor(3.0), mlm_loss=torch.tensor(2.0), nsp_loss=torch.tensor(1.0),
                               mlm_logits=self.mlm_logits, nsp_logits=self.nsp_logits)


def test_accuracies_tokens_and_step_are_passed_through():
    labels = torch.tensor([[-100, 7, -100, 5], [6, -100, -100, -100]])     # masked ids in order: 7, 5, 6
    mlm_logits = torch.nn.functional.one_hot(torch.tensor([7, 9, 6]), 10).float()  # 2 of 3 right
    nsp_logits = torch.tensor([[2.0, 0.0], [2.0, 0.0]])                     # predicts 0, 0
    batch = {"input_ids": torch.ones(2, 4, dtype=torch.long), "token_type_ids": torch.zeros(2, 4, dtype=torch.long),
             "attention_mask": torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]]).bool(), "mlm_labels": labels,
             "nsp_label": torch.tensor([0, 1])}
    model = FixedOutputs(mlm_logits, nsp_logits)
    out = mlm_nsp_loss(model, batch, step=17)
    assert model.step == 17 and out.loss.item() == 3.0 and out.num_tokens == 6
    num, den = out.metrics["mlm_acc"]
    assert (num.item(), den.item()) == (2, 3)
    num, den = out.metrics["nsp_acc"]
    assert num.item() / den.item() == pytest.approx(0.5)
