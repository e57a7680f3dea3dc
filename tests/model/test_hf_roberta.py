"""Hugging Face RoBERTa import with output parity, and Longformer's warm start from it (position copy,
Longformer attention, global projections copied from the local ones)."""

import pytest
import torch

from dnabird.errors import ParameterError
from dnabird.model.hf_roberta import extend_position_table, from_hf_roberta

transformers = pytest.importorskip("transformers")
from transformers import RobertaConfig, RobertaForMaskedLM, RobertaModel  # noqa: E402

POSITIONS = 64  # RoBERTa's 512, scaled down: max_position_embeddings = 64 + 2 (padding_idx + 1 = 2)


def build(cls):
    config = RobertaConfig(vocab_size=90, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=64, max_position_embeddings=POSITIONS + 2, type_vocab_size=1,
                           hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, initializer_range=0.2)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return cls(config).eval()


def inputs(length=POSITIONS, padded_from=50):
    ids = torch.randint(3, 90, (2, length), generator=torch.Generator().manual_seed(1))
    mask = torch.ones(2, length, dtype=torch.long)
    mask[1, padded_from:] = 0
    ids[1, padded_from:] = 1  # RoBERTa's pad id
    return ids, mask


def test_masked_lm_parity_through_save_pretrained(tmp_path):
    hf_model = build(RobertaForMaskedLM)
    hf_model.save_pretrained(tmp_path)
    ours = from_hf_roberta(tmp_path).eval()
    assert ours.config.position_offset == 2 and ours.config.pattern().type_name == "full" and ours.nsp is None
    ids, mask = inputs()
    with torch.no_grad():
        expected = hf_model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        hidden = ours.encoder(ids, mask)
        logits = ours(ids, mask).mlm_logits
    real = mask.bool()
    torch.testing.assert_close(hidden[real], expected.hidden_states[-1][real], rtol=0, atol=1e-4)
    torch.testing.assert_close(logits[real], expected.logits[real], rtol=0, atol=1e-4)


def test_base_model_object_with_pooler():
    hf_model = build(RobertaModel)
    ours = from_hf_roberta(hf_model).eval()
    ids, mask = inputs()
    with torch.no_grad():
        expected = hf_model(input_ids=ids, attention_mask=mask)
        hidden = ours.encoder(ids, mask)
    torch.testing.assert_close(ours.encoder.pool(hidden), expected.pooler_output, rtol=0, atol=1e-4)


def test_position_table_is_copied_block_by_block():
    table = torch.arange(10.0)[:, None].expand(10, 3)  # rows 0, 1: padding positions; 2..9 trained
    grown = extend_position_table(table, 2, 21)
    assert grown[:, 0].tolist() == [0, 1, *range(2, 10), *range(2, 10), 2, 3, 4]
    with pytest.raises(ParameterError, match="max_positions"):
        extend_position_table(table, 2, 8)


def test_position_copy_leaves_outputs_at_the_first_positions_unchanged():
    hf_model = build(RobertaForMaskedLM)
    short = from_hf_roberta(hf_model).eval()
    long = from_hf_roberta(hf_model, max_positions=4 * POSITIONS + 2).eval()
    table = long.encoder.embeddings.position.weight
    assert table.shape[0] == 4 * POSITIONS + 2
    trained = hf_model.roberta.embeddings.position_embeddings.weight[2:]
    for copy in range(4):
        assert torch.equal(table[2 + copy * POSITIONS: 2 + (copy + 1) * POSITIONS], trained)
    ids, mask = inputs()
    with torch.no_grad():
        assert torch.equal(long(ids, mask).mlm_logits, short(ids, mask).mlm_logits)
        longer = long(torch.randint(3, 90, (1, 4 * POSITIONS)))  # four times the trained length now fits
    assert torch.isfinite(longer.mlm_logits).all()


def test_longformer_warm_start_copies_the_global_projections():
    hf_model = build(RobertaForMaskedLM)
    full = from_hf_roberta(hf_model).eval()
    # a window covering the whole input reads every token: the same outputs as RoBERTa's full attention
    wide = from_hf_roberta(hf_model, attention={"type": "longformer", "window": 2 * POSITIONS, "block_size": 16},
                           max_positions=4 * POSITIONS + 2).eval()
    layer = wide.encoder.layers[1].attention
    assert torch.equal(layer.global_query.weight, layer.query.weight)
    assert torch.equal(layer.global_value.bias, layer.value.bias)
    ids, mask = inputs()
    with torch.no_grad():
        expected = full(ids, mask).mlm_logits
        got = wide(ids, mask, global_positions=(0,)).mlm_logits
    real = mask.bool()
    torch.testing.assert_close(got[real], expected[real], rtol=0, atol=1e-4)
    narrow = from_hf_roberta(hf_model, attention={"type": "longformer", "window": 8, "block_size": 16}).eval()
    with torch.no_grad():
        assert not torch.allclose(narrow(ids, mask).mlm_logits[real], expected[real], atol=1e-3)
