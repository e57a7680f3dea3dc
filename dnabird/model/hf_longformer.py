"""Import Hugging Face `transformers` Longformer weights (`LongformerForMaskedLM` / `LongformerModel`).

Longformer is RoBERTa-shaped (`roberta_config`) with separate global Q/K/V projections in each layer; global
tokens are chosen per call (`Encoder.forward`'s `global_positions`, `global_attention_mask`). MLM head only; the
pooler stays freshly initialised when the source has none.
"""

from __future__ import annotations

from dnabird.model.config import EncoderConfig
from dnabird.model.heads import PretrainingModel
from dnabird.model.hf import LAYER_NAMES, attention_windows, check_activation, projection_names
from dnabird.model.hf_roberta import import_masked_lm, roberta_config, roberta_names

NAMES = roberta_names("longformer", {**LAYER_NAMES, **projection_names("attention.self", global_=True)})


def config_from_longformer(hf: dict) -> EncoderConfig:
    """An `EncoderConfig` equal in behaviour to a Hugging Face `LongformerConfig` (as a dict)."""
    window, per_layer = attention_windows(hf, hf["num_hidden_layers"])
    check_activation(hf, "hidden_act", "Longformer")
    return roberta_config(hf, attention={"type": "longformer", "window": window, "dilation": 1, "global_positions": [],
                                         "block_size": 64}, layer_attention=per_layer)


def from_hf_longformer(source) -> PretrainingModel:
    """A `PretrainingModel` with the weights of a Hugging Face Longformer model object or directory."""
    return import_masked_lm(source, "longformer", config_from=config_from_longformer, names=NAMES)
