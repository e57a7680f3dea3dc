"""Hugging Face Longformer import with output parity (global attention on a few tokens)."""

import pytest
import torch

from dnabird.model.hf_longformer import from_hf_longformer

transformers = pytest.importorskip("transformers")
from transformers import LongformerConfig, LongformerForMaskedLM, LongformerModel  # noqa: E402

GLOBALS = (0, 37, 120)


def build(cls, windows=(32, 32)):
    config = LongformerConfig(vocab_size=120, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                              intermediate_size=128, attention_window=list(windows), max_position_embeddings=512,
                              hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, initializer_range=0.1)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return cls(config).eval()


def inputs(length=300, padded_from=250):
    ids = torch.randint(5, 120, (2, length), generator=torch.Generator().manual_seed(1))
    mask = torch.ones(2, length, dtype=torch.long)
    mask[1, padded_from:] = 0
    ids[1, padded_from:] = 1  # Longformer's pad id
    global_mask = torch.zeros_like(mask)
    global_mask[:, list(GLOBALS)] = 1
    return ids, mask, global_mask


def test_masked_lm_parity_through_save_pretrained(tmp_path):
    hf_model = build(LongformerForMaskedLM)
    hf_model.save_pretrained(tmp_path)
    ours = from_hf_longformer(tmp_path).eval()
    assert ours.config.position_offset == 2 and not ours.config.embedding_dropout_before_norm
    ids, mask, global_mask = inputs()
    with torch.no_grad():
        expected_hidden = hf_model.longformer(input_ids=ids, attention_mask=mask,
                                              global_attention_mask=global_mask).last_hidden_state
        expected_logits = hf_model(input_ids=ids, attention_mask=mask, global_attention_mask=global_mask).logits
        hidden = ours.encoder(ids, mask, global_positions=GLOBALS)
        logits = ours(ids, mask, global_positions=GLOBALS).mlm_logits
        without_globals = ours.encoder(ids, mask)
    real = mask.bool()
    torch.testing.assert_close(hidden[real], expected_hidden[real], rtol=0, atol=1e-4)
    torch.testing.assert_close(logits[real], expected_logits[real], rtol=0, atol=1e-4)
    assert (without_globals - hidden)[real].abs().max() > 1e-3  # global attention matters here


def test_base_model_object_with_pooler():
    hf_model = build(LongformerModel)
    ours = from_hf_longformer(hf_model).eval()
    ids, mask, global_mask = inputs()
    with torch.no_grad():
        expected = hf_model(input_ids=ids, attention_mask=mask, global_attention_mask=global_mask)
        hidden = ours.encoder(ids, mask, global_positions=GLOBALS)
    torch.testing.assert_close(ours.encoder.pool(hidden), expected.pooler_output, rtol=0, atol=1e-4)


def test_per_layer_windows_become_layer_attention():
    hf_model = build(LongformerForMaskedLM, windows=(16, 64))
    ours = from_hf_longformer(hf_model).eval()
    assert [ours.config.pattern(layer).window for layer in range(2)] == [16, 64]
    ids, mask, global_mask = inputs()
    global_mask[1, 37] = 0  # each example its own global tokens
    global_mask[1, 200] = 1
    with torch.no_grad():
        expected = hf_model(input_ids=ids, attention_mask=mask, global_attention_mask=global_mask).logits
        got = ours(ids, mask, global_attention_mask=global_mask).mlm_logits
    real = mask.bool()
    torch.testing.assert_close(got[real], expected[real], rtol=0, atol=1e-4)
