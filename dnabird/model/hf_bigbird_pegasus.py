"""Import Hugging Face `BigBirdPegasusForConditionalGeneration` (Zaheer et al. 2020 §4, Table 4).

BigBird-Pegasus is Pegasus (pre-LN blocks, word embeddings × √d_model, no LayerNorm after the embeddings, a
final LayerNorm on each side, learned positions here) with BigBird ITC block-sparse self-attention in the
encoder, and no biases in its attention projections (`use_bias=False`; the encoder's attention output bias
loads as zeros). Its random blocks follow transformers' placement (`random_mode: hf`, layer i seeded with i),
so its encoder equals transformers' in the settings `dnabird.model.hf` states for BigBird: train mode, at
lengths above (5 + 2r)·b tokens other than 1024 (see `block_sparse_differences`, logged at import).
"""

from __future__ import annotations

import logging
import math

from dnabird.model.config import SPARSE_ATTENTION_DROPOUT, EncoderConfig
from dnabird.model.hf import block_sparse_differences, check_activation
from dnabird.model.hf_seq2seq import import_seq2seq, seq2seq_config, seq2seq_names
from dnabird.model.seq2seq import EncoderDecoder, Seq2SeqConfig

log = logging.getLogger(__name__)
NAMES = seq2seq_names("model", norms={"encoder.final_norm": "encoder.layernorm_embedding",
                                      "decoder.final_norm": "decoder.layernorm_embedding"},
                      encoder_layer={
                          "attention.query": "self_attn.self.query", "attention.key": "self_attn.self.key",
                          "attention.value": "self_attn.self.value", "attention.output": "self_attn.output",
                          "attention_norm": "self_attn_layer_norm", "ffn_in": "fc1", "ffn_out": "fc2",
                          "ffn_norm": "final_layer_norm"})


def config_from_bigbird_pegasus(hf: dict) -> Seq2SeqConfig:
    """A `Seq2SeqConfig` equal in behaviour to a Hugging Face `BigBirdPegasusConfig` (as a dict)."""
    check_activation(hf, "activation_function", "BigBird-Pegasus")
    attention_dropout = hf["attention_dropout"]
    if hf.get("attention_type", "block_sparse") == "original_full":
        pattern = {"type": "full"}
    else:
        pattern = {"type": "bigbird_itc", "block_size": hf["block_size"], "window_blocks": 3,
                   "num_random_blocks": hf["num_random_blocks"], "random_mode": "hf"}
        attention_dropout = SPARSE_ATTENTION_DROPOUT  # transformers' block-sparse path drops nothing
        log.warning("%s", block_sparse_differences(hf))
    width = hf["d_model"]
    encoder = EncoderConfig(
        vocab_size=hf["vocab_size"], hidden_size=width, num_layers=hf["encoder_layers"],
        num_heads=hf["encoder_attention_heads"], intermediate_size=hf["encoder_ffn_dim"],
        max_positions=hf["max_position_embeddings"], dropout=hf["dropout"], attention_dropout=attention_dropout,
        activation=hf["activation_function"], layer_norm_eps=1e-5, type_vocab_size=1,
        pad_token_id=hf.get("pad_token_id", 0), attention=pattern, attention_bias=hf.get("use_bias", False),
        embedding_norm=False, embedding_scale=math.sqrt(width) if hf.get("scale_embedding", True) else 1.0,
        pre_norm=True, base_seed=0, reseed_each_step=False, pooling="mean",
        initializer_range=hf.get("init_std", 0.02))
    return seq2seq_config(hf, encoder, max_decoder_positions=hf["max_position_embeddings"], eos_token_id=1)


def from_hf_bigbird_pegasus(source) -> EncoderDecoder:
    """An `EncoderDecoder` with the weights of a Hugging Face BigBird-Pegasus model object or directory."""
    return import_seq2seq(source, "model", config_from=config_from_bigbird_pegasus, names=NAMES)
