"""Import Hugging Face `transformers` Longformer weights (`LongformerForMaskedLM` / `LongformerModel`).

Longformer is RoBERTa-shaped: positions start at padding_idx + 1, embedding dropout follows the
LayerNorm, and each layer carries separate global Q/K/V projections. Global tokens are chosen per
call (`Encoder.forward(..., global_positions=...)` or per example with `global_attention_mask`). A
per-layer `attention_window` becomes `layer_attention`. The model has no NSP head (MLM only); the pooler
stays freshly initialised when the source has none.
"""

from __future__ import annotations

from dnabird.model.config import EncoderConfig
from dnabird.model.heads import PretrainingModel
from dnabird.model.hf import LAYER_NAMES, check_activation
from dnabird.model.hf_roberta import import_masked_lm, roberta_names

NAMES = roberta_names("longformer", {
    **LAYER_NAMES,
    "attention.global_query": "attention.self.query_global",
    "attention.global_key": "attention.self.key_global",
    "attention.global_value": "attention.self.value_global",
})


def config_from_longformer(hf: dict) -> EncoderConfig:
    """An `EncoderConfig` equal in behaviour to a Hugging Face `LongformerConfig` (as a dict)."""
    windows = hf["attention_window"]
    windows = windows if isinstance(windows, list) else [windows] * hf["num_hidden_layers"]
    per_layer = [{"window": window} for window in windows] if len(set(windows)) > 1 else []
    check_activation(hf, "hidden_act", "Longformer")
    heads, pad = hf["num_attention_heads"], hf.get("pad_token_id", 1)
    return EncoderConfig(
        vocab_size=hf["vocab_size"], hidden_size=hf["hidden_size"], num_layers=hf["num_hidden_layers"],
        num_heads=heads, intermediate_size=hf["intermediate_size"],
        max_positions=hf["max_position_embeddings"], dropout=hf["hidden_dropout_prob"],
        attention_dropout=hf["attention_probs_dropout_prob"], activation=hf["hidden_act"],
        layer_norm_eps=hf["layer_norm_eps"], type_vocab_size=hf["type_vocab_size"], position_offset=pad + 1,
        pad_token_id=pad, attention={"type": "longformer", "window": windows[0],
                                     "dilation": 1, "global_positions": [], "block_size": 64},
        layer_attention=per_layer, embedding_dropout_before_norm=False,
        initializer_range=hf.get("initializer_range", 0.02))


def from_hf_longformer(source) -> PretrainingModel:
    """A `PretrainingModel` with the weights of a Hugging Face Longformer model object or directory."""
    return import_masked_lm(source, "longformer", config_from=config_from_longformer, names=NAMES)
