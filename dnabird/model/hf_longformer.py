"""Import Hugging Face `transformers` Longformer weights (`LongformerForMaskedLM` / `LongformerModel`).

Longformer is RoBERTa-shaped: positions start at padding_idx + 1, embedding dropout follows the
LayerNorm, and each layer carries separate global Q/K/V projections. Global tokens are chosen per
call (`Encoder.forward(..., global_positions=...)`). dnabird has no NSP counterpart; it stays
freshly initialised, as does the pooler when the source has none.
"""

from __future__ import annotations

from dnabird.errors import ConfigError
from dnabird.model.config import EncoderConfig
from dnabird.model.heads import PretrainingModel
from dnabird.model.hf import LAYER_NAMES as BIGBIRD_LAYER_NAMES
from dnabird.model.hf import import_pretrained, map_name

_LAYER = {
    **BIGBIRD_LAYER_NAMES,
    "attention.global_query": "attention.self.query_global",
    "attention.global_key": "attention.self.key_global",
    "attention.global_value": "attention.self.value_global",
}
_FIXED = {
    "encoder.embeddings.word": "longformer.embeddings.word_embeddings",
    "encoder.embeddings.position": "longformer.embeddings.position_embeddings",
    "encoder.embeddings.segment": "longformer.embeddings.token_type_embeddings",
    "encoder.embeddings.norm": "longformer.embeddings.LayerNorm",
    "encoder.pooler": "longformer.pooler.dense",
    "mlm.transform": "lm_head.dense",
    "mlm.norm": "lm_head.layer_norm",
}
_TIED = ("lm_head.decoder.weight", "lm_head.decoder.bias")


def longformer_name(name: str) -> str | None:
    """The Hugging Face `LongformerForMaskedLM` key of a dnabird key (None for the NSP head)."""
    return map_name(name, layer_prefix="longformer.encoder.layer", layer_names=_LAYER, fixed=_FIXED,
                    bias="lm_head.bias")


def config_from_longformer(hf: dict) -> EncoderConfig:
    """An `EncoderConfig` equal in behaviour to a Hugging Face `LongformerConfig` (as a dict)."""
    windows = hf["attention_window"]
    windows = windows if isinstance(windows, list) else [windows] * hf["num_hidden_layers"]
    if len(set(windows)) != 1:
        raise ConfigError(f"Hugging Face Longformer config: per-layer attention_window {windows} is not "
                          "supported (dnabird uses one pattern for every layer)")
    if hf.get("hidden_act") not in ("gelu", "gelu_new"):
        raise ConfigError(f"Hugging Face Longformer config: hidden_act={hf.get('hidden_act')!r} is not supported")
    heads, pad = hf["num_attention_heads"], hf.get("pad_token_id", 1)
    return EncoderConfig(
        vocab_size=hf["vocab_size"], hidden_size=hf["hidden_size"], num_layers=hf["num_hidden_layers"],
        num_heads=heads, intermediate_size=hf["intermediate_size"],
        max_positions=hf["max_position_embeddings"], dropout=hf["hidden_dropout_prob"],
        attention_dropout=hf["attention_probs_dropout_prob"], activation=hf["hidden_act"],
        layer_norm_eps=hf["layer_norm_eps"], type_vocab_size=hf["type_vocab_size"], position_offset=pad + 1,
        pad_token_id=pad, attention={"type": "longformer", "window": windows[0],
                                     "dilation": 1, "global_positions": [], "block_size": 64},
        embedding_dropout_before_norm=False, initializer_range=hf.get("initializer_range", 0.02))


def from_hf_longformer(source) -> PretrainingModel:
    """A `PretrainingModel` with the weights of a Hugging Face Longformer model object or directory."""
    return import_pretrained(source, prefix="longformer.", config_from=config_from_longformer,
                             name_of=longformer_name, tied=_TIED)
