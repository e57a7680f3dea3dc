"""Import Hugging Face `BigBirdPegasusForConditionalGeneration` (Zaheer et al. 2020 §4, Table 4).

BigBird-Pegasus is Pegasus (pre-LN blocks, word embeddings × √d_model, no LayerNorm after the embeddings, a
final LayerNorm on each side, learned positions here) with BigBird ITC block-sparse self-attention in the
encoder, and no biases in its attention projections (`use_bias=False`; the encoder's attention output bias
loads as zeros). Its block-sparse encoder matches transformers' where BigBird's does (`bigbird_attention`).
"""

from __future__ import annotations

import math

from dnabird.model.hf import bigbird_attention, check_activation, projection_names
from dnabird.model.hf_seq2seq import import_seq2seq, seq2seq_config, seq2seq_names
from dnabird.model.seq2seq import EncoderDecoder, Seq2SeqConfig

NAMES = seq2seq_names("model", norms={"encoder.final_norm": "encoder.layernorm_embedding",
                                      "decoder.final_norm": "decoder.layernorm_embedding"},
                      projections=projection_names("self_attn.self"))


def config_from_bigbird_pegasus(hf: dict) -> Seq2SeqConfig:
    """A `Seq2SeqConfig` equal in behaviour to a Hugging Face `BigBirdPegasusConfig` (as a dict)."""
    check_activation(hf, "activation_function", "BigBird-Pegasus")
    scale = math.sqrt(hf["d_model"]) if hf.get("scale_embedding", True) else 1.0
    return seq2seq_config(
        hf, max_decoder_positions=hf["max_position_embeddings"], eos_token_id=1,
        max_positions=hf["max_position_embeddings"], pad_token_id=hf.get("pad_token_id", 0),
        attention_bias=hf.get("use_bias", False), embedding_norm=False, embedding_scale=scale, pre_norm=True,
        **bigbird_attention(hf))


def from_hf_bigbird_pegasus(source) -> EncoderDecoder:
    """An `EncoderDecoder` with the weights of a Hugging Face BigBird-Pegasus model object or directory."""
    return import_seq2seq(source, "model", config_from=config_from_bigbird_pegasus, names=NAMES)
