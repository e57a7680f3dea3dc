"""Import Hugging Face `LEDForConditionalGeneration` (Longformer-Encoder-Decoder, Beltagy et al. 2020 §6).

LED is BART with Longformer self-attention in the encoder: post-LN blocks, learned positions from 0 (16,384
in the encoder of `allenai/led-base-16384`, 1,024 in the decoder), a LayerNorm after the embeddings on both
sides, a sliding window per layer (`attention_window`, both sides together) with separate global Q/K/V
projections. Global attention goes on the first token (`<s>`), as LED's authors advise for summarisation:
the imported pattern sets `global_positions: [0]` (transformers' LED has global attention only where the
caller's `global_attention_mask` puts it). `activation_dropout` has no counterpart (dnabird drops out after
the feed-forward block only); it is 0 in the published models.
"""

from __future__ import annotations

from dnabird.model.hf import attention_windows, check_activation, projection_names
from dnabird.model.hf_seq2seq import import_seq2seq, seq2seq_config, seq2seq_names
from dnabird.model.seq2seq import EncoderDecoder, Seq2SeqConfig

_SELF = "self_attn.longformer_self_attn"
NAMES = seq2seq_names("led", norms={"encoder.embeddings.norm": "encoder.layernorm_embedding",
                                    "decoder.embedding_norm": "decoder.layernorm_embedding"},
                      projections={**projection_names(_SELF), **projection_names(_SELF, global_=True)})


def config_from_led(hf: dict) -> Seq2SeqConfig:
    """A `Seq2SeqConfig` equal in behaviour to a Hugging Face `LEDConfig` (as a dict), global attention on the
    first token."""
    check_activation(hf, "activation_function", "LED")
    window, per_layer = attention_windows(hf, hf["encoder_layers"])
    return seq2seq_config(
        hf, max_decoder_positions=hf["max_decoder_position_embeddings"], eos_token_id=2,
        max_positions=hf["max_encoder_position_embeddings"], pad_token_id=hf.get("pad_token_id", 1),
        attention={"type": "longformer", "window": window, "global_positions": [0], "block_size": 64},
        layer_attention=per_layer, embedding_dropout_before_norm=False)


def from_hf_led(source) -> EncoderDecoder:
    """An `EncoderDecoder` with the weights of a Hugging Face LED model object or `save_pretrained` directory."""
    return import_seq2seq(source, "led", config_from=config_from_led, names=NAMES)
