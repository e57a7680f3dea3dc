import math

import pytest
import torch

from dnabird.errors import ParameterError
from dnabird.model import IGNORE_INDEX, PretrainingModel, SequenceClassifier, tiny


def small(**overrides):
    settings = dict(num_layers=1, hidden_size=32, num_heads=2, intermediate_size=64, vocab_size=40,
                    dropout=0.0, attention_dropout=0.0, max_positions=512,
                    attention={"type": "bigbird_itc", "block_size": 16, "window_blocks": 3,
                               "num_random_blocks": 1, "random_mode": "uniform"})
    settings.update(overrides)
    return tiny(**settings)


def batch(length=96):
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(5, 40, (2, length), generator=g)
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[0, [3, 50]] = tokens[0, [3, 50]]
    labels[1, [7]] = tokens[1, [7]]
    return tokens, labels


def test_masked_only_logits_equal_full_logits_at_masked_positions():
    model = PretrainingModel(small(), seed=0).eval()
    tokens, labels = batch()
    with torch.no_grad():
        sparse = model(tokens, mlm_labels=labels, nsp_labels=torch.tensor([0, 1]))
        full = model(tokens, mlm_labels=labels, nsp_labels=torch.tensor([0, 1]), full_logits=True)
    assert sparse.mlm_logits.shape == (3, 40) and full.mlm_logits.shape == (2, 96, 40)
    assert sparse.mlm_positions.tolist() == [[0, 3], [0, 50], [1, 7]]
    torch.testing.assert_close(sparse.mlm_logits, full.mlm_logits[[0, 0, 1], [3, 50, 7]])
    torch.testing.assert_close(sparse.loss, full.loss)
    # BERT's summed loss, written out by hand: mean masked-token NLL + mean NSP NLL
    logp = full.mlm_logits.log_softmax(-1)
    mlm = -(logp[0, 3, tokens[0, 3]] + logp[0, 50, tokens[0, 50]] + logp[1, 7, tokens[1, 7]]) / 3
    nsp_logp = full.nsp_logits.log_softmax(-1)
    nsp = -(nsp_logp[0, 0] + nsp_logp[1, 1]) / 2
    torch.testing.assert_close(sparse.loss, mlm + nsp)


def test_decoder_is_tied_to_word_embeddings():
    model = PretrainingModel(small(), seed=0).eval()
    tokens, _ = batch()
    with torch.no_grad():
        before = model(tokens).mlm_logits
        model.encoder.embeddings.word.weight[11] += 1.0
        after = model(tokens).mlm_logits
    changed = (before != after).any(dim=(0, 1))
    assert changed[11]
    assert "mlm.decoder.weight" not in model.state_dict()


def test_without_transform_the_logits_are_the_hidden_state_times_the_word_embeddings():
    model = PretrainingModel(small(mlm_transform=False, pre_norm=True), seed=0).eval()
    assert not [name for name in model.state_dict() if name.startswith("mlm.") and name != "mlm.bias"]
    tokens, _ = batch()
    with torch.no_grad():
        model.mlm.bias.normal_(generator=torch.Generator().manual_seed(1))
        hidden = model.encoder(tokens)
        logits = model(tokens).mlm_logits
    expected = torch.einsum("blh,vh->blv", hidden.double(), model.encoder.embeddings.word.weight.double())
    torch.testing.assert_close(logits.double(), expected + model.mlm.bias.double(), rtol=0, atol=1e-5)


def test_nsp_uses_pooled_cls():
    model = PretrainingModel(small(), seed=0).eval()
    tokens, _ = batch()
    with torch.no_grad():
        hidden = model.encoder(tokens)
        expected = torch.tanh(hidden[:, 0] @ model.encoder.pooler.weight.T + model.encoder.pooler.bias)
        expected = expected @ model.nsp.weight.T + model.nsp.bias
        torch.testing.assert_close(model(tokens).nsp_logits, expected)


@pytest.mark.parametrize("problem, outputs", [("binary", 1), ("multilabel", 5), ("multiclass", 3)])
def test_classifier_losses(problem, outputs):
    model = SequenceClassifier(small(), outputs, problem=problem, seed=0).eval()
    tokens, _ = batch()
    labels = {"binary": torch.tensor([1.0, 0.0]), "multiclass": torch.tensor([2, 0]),
              "multilabel": torch.tensor([[1, 0, 1, 0, 0], [0, 0, 0, 1, 1.0]])}[problem]
    with torch.no_grad():
        out = model(tokens, labels=labels)
    z = out.logits
    if problem == "multiclass":
        expected = -(z.log_softmax(-1)[[0, 1], labels]).mean()
    else:
        p = torch.sigmoid(z.double())
        expected = -(labels * p.log() + (1 - labels) * (1 - p).log()).mean()
    assert z.shape == ((2,) if problem == "binary" else (2, outputs))
    assert math.isclose(out.loss.item(), expected.item(), rel_tol=1e-5)


def test_classifier_rejects_bad_heads():
    with pytest.raises(ParameterError, match="num_outputs=2"):
        SequenceClassifier(small(), 2, problem="binary")
    with pytest.raises(ParameterError, match="problem='regression'"):
        SequenceClassifier(small(), 1, problem="regression")


def test_tiny_model_overfits_a_small_batch():
    """MLM loss falls by > 90 % within a few hundred CPU steps at a short length."""
    config = tiny(dropout=0.0, attention_dropout=0.0)
    model = PretrainingModel(config, seed=0).train()
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(5, config.vocab_size, (4, 64), generator=g)
    masked = torch.rand(4, 64, generator=g) < 0.15
    inputs = torch.where(masked, 4, tokens)  # [MASK] = 4
    labels = torch.where(masked, tokens, IGNORE_INDEX)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for step in range(300):
        loss = model(inputs, mlm_labels=labels, step=step).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if loss.item() < 0.05 * losses[0]:
            break
    assert losses[-1] < 0.1 * losses[0], (losses[0], losses[-1])
