import math

import pytest
import torch

from dnabird.errors import ParameterError
from dnabird.model import (
    IGNORE_INDEX,
    CausalLanguageModel,
    PretrainingModel,
    SequenceClassifier,
    SpanExtractor,
    TaskSpec,
    load_checkpoint,
    load_encoder_for_finetuning,
    save_checkpoint,
    tiny,
)


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


def test_mean_pooling_averages_the_real_tokens_only_and_has_no_pooler():
    model = SequenceClassifier(small(pooling="mean"), 3, problem="multilabel", seed=0).eval()
    assert model.encoder.pooler is None and not [n for n in model.state_dict() if "pooler" in n]
    tokens, _ = batch()
    mask = torch.ones_like(tokens)
    mask[1, 40:] = 0  # the second example has 40 real tokens
    with torch.no_grad():
        hidden = model.encoder(tokens, mask).double()
        logits = model(tokens, mask).logits.double()
    # by hand: example 0 averages its 96 states, example 1 its first 40 (padding ignored)
    pooled = torch.stack([hidden[0].sum(0) / 96, hidden[1, :40].sum(0) / 40])
    expected = pooled @ model.classifier.weight.double().T + model.classifier.bias.double()
    torch.testing.assert_close(logits, expected, rtol=0, atol=1e-5)
    # the padded tokens' states do not reach the head
    changed = tokens.clone()
    changed[1, 40:] = 5
    with torch.no_grad():
        assert torch.equal(model(changed, mask).logits[1], model(tokens, mask).logits[1])


def test_pool_by_name_reads_what_each_name_says():
    model = SequenceClassifier(small(), 2, problem="multilabel", seed=0).eval()
    tokens, _ = batch()
    mask = torch.ones_like(tokens)
    mask[1, 40:] = 0  # the second example has 40 real tokens: [CLS] at 0, [SEP] at 39
    with torch.no_grad():
        hidden = model.encoder(tokens, mask)
        pool = model.encoder.pool
        torch.testing.assert_close(pool(hidden, mask), pool(hidden, mask, "cls"))  # the config's: "cls"
        torch.testing.assert_close(pool(hidden, mask, "cls_state"), hidden[:, 0])
        torch.testing.assert_close(pool(hidden, mask, "mean")[1], hidden[1, :40].mean(0))
        torch.testing.assert_close(pool(hidden, mask, "mean_sequence")[1], hidden[1, 1:39].mean(0))
        torch.testing.assert_close(pool(hidden, mask, "mean_sequence")[0], hidden[0, 1:95].mean(0))
        with pytest.raises(ParameterError, match="pool_tokens is 0"):
            pool(hidden, mask, "centre")
        with pytest.raises(ParameterError, match="pooling"):
            pool(hidden, mask, "max")


def test_a_mean_pooled_classifier_fine_tunes_from_a_cls_checkpoint_and_reloads_as_mean(tmp_path):
    save_checkpoint(PretrainingModel(small(), seed=0), tmp_path / "pretrained")
    spec = TaskSpec(task="t", problem="binary", labels=["x"], eval_length=96)
    model, report = load_encoder_for_finetuning(tmp_path / "pretrained", spec, config=small(pooling="mean"))
    assert model.encoder.pooler is None and "encoder.pooler.weight" in report.dropped
    save_checkpoint(model, tmp_path / "tuned", task=spec)
    reloaded = load_checkpoint(tmp_path / "tuned")
    tokens, _ = batch()
    assert reloaded.config.pooling == "mean"
    with torch.no_grad():
        torch.testing.assert_close(reloaded.eval()(tokens).logits, model.eval()(tokens).logits)


def test_centre_pooling_averages_the_middle_tokens_of_each_example():
    model = SequenceClassifier(small(pooling="centre", pool_tokens=4), 2, problem="multilabel", seed=0).eval()
    assert model.encoder.pooler is None
    tokens, _ = batch()
    mask = torch.ones_like(tokens)
    mask[1, 41:] = 0  # 41 real tokens: the middle four are 18..21 (41 // 2 - 2 = 18); example 0: 46..49
    with torch.no_grad():
        hidden = model.encoder(tokens, mask).double()
        logits = model(tokens, mask).logits.double()
    pooled = torch.stack([hidden[0, 46:50].mean(0), hidden[1, 18:22].mean(0)])
    expected = pooled @ model.classifier.weight.double().T + model.classifier.bias.double()
    torch.testing.assert_close(logits, expected, rtol=0, atol=1e-5)
    with pytest.raises(ParameterError, match="pool_tokens"):
        small(pooling="centre")
    with pytest.raises(ParameterError, match="pool_tokens"):
        small(pooling="mean", pool_tokens=4)


def test_centre_max_pooling_concatenates_the_centre_mean_and_the_maximum_over_real_tokens():
    model = SequenceClassifier(small(pooling="centre_max", pool_tokens=4), 2, problem="multilabel",
                               seed=0).eval()
    assert model.encoder.pooler is None and model.classifier.in_features == 64  # 2 x hidden
    tokens, _ = batch()
    mask = torch.ones_like(tokens)
    mask[1, 41:] = 0  # 41 real tokens: centre 18..21; example 0: 46..49
    with torch.no_grad():
        hidden = model.encoder(tokens, mask).double()
        logits = model(tokens, mask).logits.double()
    # by hand, channel by channel over the real tokens only
    peak = torch.stack([torch.tensor([max(hidden[0, :, c].tolist()) for c in range(32)]),
                        torch.tensor([max(hidden[1, :41, c].tolist()) for c in range(32)])]).double()
    centre = torch.stack([hidden[0, 46:50].mean(0), hidden[1, 18:22].mean(0)])
    expected = torch.cat([centre, peak], 1) @ model.classifier.weight.double().T + model.classifier.bias.double()
    torch.testing.assert_close(logits, expected, rtol=0, atol=1e-5)
    # padded tokens never win the maximum, however large their states
    changed = tokens.clone()
    changed[1, 41:] = 5
    with torch.no_grad():
        assert torch.equal(model(changed, mask).logits[1], model(tokens, mask).logits[1])
    with pytest.raises(ParameterError, match="pool_tokens"):
        small(pooling="centre_max")


def test_centre_max_pooling_with_a_local_maximum_between_the_mean_and_the_window_maximum():
    model = SequenceClassifier(small(pooling="centre_max", pool_tokens=4, local_max_tokens=10), 2,
                               problem="multilabel", seed=0).eval()
    assert model.classifier.in_features == 96  # 3 x hidden
    tokens, _ = batch()
    mask = torch.ones_like(tokens)
    mask[1, 41:] = 0  # 41 real tokens: mean over 18..21, local maximum over 15..24; example 0: 46..49, 43..52
    with torch.no_grad():
        hidden = model.encoder(tokens, mask).double()
        logits = model(tokens, mask).logits.double()

    def channel_max(rows):  # by hand, channel by channel
        return torch.tensor([max(rows[:, c].tolist()) for c in range(32)]).double()

    centre = torch.stack([hidden[0, 46:50].mean(0), hidden[1, 18:22].mean(0)])
    local = torch.stack([channel_max(hidden[0, 43:53]), channel_max(hidden[1, 15:25])])
    window = torch.stack([channel_max(hidden[0]), channel_max(hidden[1, :41])])
    expected = torch.cat([centre, local, window], 1) @ model.classifier.weight.double().T \
        + model.classifier.bias.double()
    torch.testing.assert_close(logits, expected, rtol=0, atol=1e-5)
    for bad in (dict(pooling="centre", pool_tokens=4, local_max_tokens=8),
                dict(pooling="centre_max", pool_tokens=4, local_max_tokens=-1)):
        with pytest.raises(ParameterError, match="local_max_tokens"):
            small(**bad)


def test_unknown_pooling_is_refused():
    with pytest.raises(ParameterError, match="pooling"):
        small(pooling="max")


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


@pytest.mark.parametrize("problem, loss", [("multilabel", "bce"), ("multiclass", "cross_entropy"),
                                           ("regression", "mse"), ("regression", "poisson")])
def test_classifier_losses_with_weights_and_regression(problem, loss):
    """Weighted BCE, weighted cross-entropy, MSE and Poisson NLL (Stirling's term for counts > 1) written out."""
    outputs = 3
    model = SequenceClassifier(small(), outputs, problem=problem, seed=0).eval()
    tokens, _ = batch()
    labels = {"multilabel": torch.tensor([[1, 0, 1], [0, 0, 1.0]]), "multiclass": torch.tensor([2, 0]),
              "regression": torch.tensor([[0.0, 1.0, 4.0], [2.0, 7.0, 0.5]])}[problem]
    weights = torch.tensor([2.0, 0.5, 3.0])
    options = {"bce": {"pos_weight": weights}, "cross_entropy": {"class_weights": weights}}.get(loss, {})
    with torch.no_grad():
        out = model(tokens, labels=labels, loss=loss, **options)
    z, y = out.logits.double(), labels.double()
    if loss == "bce":
        p = torch.sigmoid(z)
        expected = -(weights * y * p.log() + (1 - y) * (1 - p).log()).mean()
    elif loss == "cross_entropy":
        w = weights[labels]
        expected = -(w * z.log_softmax(-1)[[0, 1], labels]).sum() / w.sum()
    elif loss == "mse":
        expected = ((z - y) ** 2).mean()
    else:
        stirling = torch.where(y > 1, y * y.log() - y + 0.5 * torch.log(2 * math.pi * y), torch.zeros_like(y))
        expected = (z.exp() - y * z + stirling).mean()
    assert z.shape == (2, outputs)
    assert math.isclose(out.loss.item(), expected.item(), rel_tol=1e-5)


def test_classifier_rejects_bad_heads():
    with pytest.raises(ParameterError, match="num_outputs=2"):
        SequenceClassifier(small(), 2, problem="binary")
    model = SequenceClassifier(small(), 1, problem="regression")
    with pytest.raises(ParameterError, match=r"loss='bce' is invalid: expected a loss of a 'regression' problem"):
        model(batch()[0], labels=torch.zeros(2, 1), loss="bce")


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


def test_mlm_only_model_has_no_nsp_head():
    model = PretrainingModel(small(), seed=0, nsp=False).eval()
    assert not [name for name in model.state_dict() if name.startswith("nsp.")]
    tokens, labels = batch()
    with torch.no_grad():
        out = model(tokens, mlm_labels=labels)
        logp = model(tokens).mlm_logits.log_softmax(-1)
    expected = -(logp[0, 3, tokens[0, 3]] + logp[0, 50, tokens[0, 50]] + logp[1, 7, tokens[1, 7]]) / 3
    torch.testing.assert_close(out.loss, expected)
    assert out.nsp_logits is None and out.nsp_loss is None
    with pytest.raises(ParameterError, match="nsp_labels"):
        model(tokens, mlm_labels=labels, nsp_labels=torch.tensor([0, 1]))


def causal_small(**overrides):
    return small(causal=True, attention={"type": "longformer", "window": 16, "block_size": 16}, **overrides)


def test_causal_lm_loss_scores_each_next_token():
    model = CausalLanguageModel(causal_small(), seed=0).eval()
    tokens = batch()[0][:, :40]
    labels = tokens.clone()
    labels[1, 30:] = IGNORE_INDEX  # e.g. padding
    with torch.no_grad():
        out = model(tokens, labels=labels)
    logp = out.logits.log_softmax(-1)
    terms = [-logp[b, t, tokens[b, t + 1]] for b in range(2) for t in range(39) if labels[b, t + 1] != IGNORE_INDEX]
    assert len(terms) == 39 + 29
    torch.testing.assert_close(out.loss, torch.stack(terms).mean())
    assert out.logits.shape == (2, 40, 40)
    with pytest.raises(ParameterError, match="causal"):
        CausalLanguageModel(small())


def test_span_loss_marginalises_over_every_gold_occurrence():
    model = SpanExtractor(small(), seed=0).eval()
    tokens = batch()[0][:, :48]
    real = torch.ones(2, 48, dtype=torch.bool)
    real[1, 40:] = False
    starts = torch.zeros(2, 48, dtype=torch.bool)
    ends = torch.zeros(2, 48, dtype=torch.bool)
    starts[0, [5, 20]], ends[0, [6, 22]] = True, True  # an answer that occurs twice
    starts[1, 9], ends[1, 9] = True, True
    with torch.no_grad():
        out = model(tokens, real, start_targets=starts, end_targets=ends)
    assert (out.start_logits[1, 40:] < -1e30).all()  # padding can never be chosen
    ps, pe = out.start_logits.softmax(-1), out.end_logits.softmax(-1)
    first = -(ps[0, 5] + ps[0, 20]).log() - (pe[0, 6] + pe[0, 22]).log()
    second = -ps[1, 9].log() - pe[1, 9].log()
    torch.testing.assert_close(out.loss, (first + second) / 4)
    with pytest.raises(ParameterError, match="gold"):
        model(tokens, real, start_targets=torch.zeros_like(starts), end_targets=ends)


@pytest.mark.parametrize("kind", ["mlm_only", "causal", "span"])
def test_checkpoints_reload_as_the_same_kind_of_model(tmp_path, kind):
    task = None
    if kind == "mlm_only":
        model = PretrainingModel(small(), seed=1, nsp=False)
    elif kind == "causal":
        model = CausalLanguageModel(causal_small(), seed=1)
    else:
        task = TaskSpec(task="qa", problem="span", labels=("start", "end"), eval_length=64)
        model = SpanExtractor(small(), seed=1)
    save_checkpoint(model.eval(), tmp_path / "model", task=task)
    loaded = load_checkpoint(tmp_path / "model").eval()
    assert type(loaded) is type(model)
    assert loaded.state_dict().keys() == model.state_dict().keys()
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), model.state_dict().values(),
                                                  strict=True))


def test_span_head_fine_tunes_from_a_pretrained_encoder(tmp_path):
    pretrained = PretrainingModel(small(), seed=1, nsp=False)
    save_checkpoint(pretrained, tmp_path / "pre")
    spec = TaskSpec(task="qa", problem="span", labels=("start", "end"), eval_length=64)
    model, report = load_encoder_for_finetuning(tmp_path / "pre", spec, seed=5)
    assert isinstance(model, SpanExtractor)
    assert set(report.initialised) == {"span.weight", "span.bias"} and "mlm.bias" in report.dropped
    assert torch.equal(model.encoder.embeddings.word.weight, pretrained.encoder.embeddings.word.weight)
    from dnabird.errors import ConfigError

    with pytest.raises(ConfigError, match="span"):
        TaskSpec(task="qa", problem="span", labels=("answer",), eval_length=64)
