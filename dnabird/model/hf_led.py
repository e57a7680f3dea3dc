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

from dnabird.model.config import EncoderConfig
from dnabird.model.hf import check_activation
from dnabird.model.hf_seq2seq import import_seq2seq, seq2seq_config, seq2seq_names
from dnabird.model.seq2seq import EncoderDecoder, Seq2SeqConfig

_SELF = "self_attn.longformer_self_attn"
NAMES = seq2seq_names("led", norms={"encoder.embeddings.norm": "encoder.layernorm_embedding",
                                    "decoder.embedding_norm": "decoder.layernorm_embedding"},
                      encoder_layer={
                          "attention.query": f"{_SELF}.query", "attention.key": f"{_SELF}.key",
                          "attention.value": f"{_SELF}.value", "attention.global_query": f"{_SELF}.query_global",
                          "attention.global_key": f"{_SELF}.key_global",
                          "attention.global_value": f"{_SELF}.value_global", "attention.output": "self_attn.output",
                          "attention_norm": "self_attn_layer_norm", "ffn_in": "fc1", "ffn_out": "fc2",
                          "ffn_norm": "final_layer_norm"})


def config_from_led(hf: dict) -> Seq2SeqConfig:
    """A `Seq2SeqConfig` equal in behaviour to a Hugging Face `LEDConfig` (as a dict), global attention on the
    first token."""
    check_activation(hf, "activation_function", "LED")
    layers = hf["encoder_layers"]
    windows = hf["attention_window"]
    windows = windows if isinstance(windows, list) else [windows] * layers
    encoder = EncoderConfig(
        vocab_size=hf["vocab_size"], hidden_size=hf["d_model"], num_layers=layers,
        num_heads=hf["encoder_attention_heads"], intermediate_size=hf["encoder_ffn_dim"],
        max_positions=hf["max_encoder_position_embeddings"], dropout=hf["dropout"],
        attention_dropout=hf["attention_dropout"], activation=hf["activation_function"], layer_norm_eps=1e-5,
        type_vocab_size=1, pad_token_id=hf.get("pad_token_id", 1),
        attention={"type": "longformer", "window": windows[0], "global_positions": [0], "block_size": 64},
        layer_attention=[{"window": w} for w in windows] if len(set(windows)) > 1 else [],
        embedding_dropout_before_norm=False, pooling="mean", initializer_range=hf.get("init_std", 0.02))
    return seq2seq_config(hf, encoder, max_decoder_positions=hf["max_decoder_position_embeddings"],
                          eos_token_id=2)


def from_hf_led(source) -> EncoderDecoder:
    """An `EncoderDecoder` with the weights of a Hugging Face LED model object or `save_pretrained` directory."""
    return import_seq2seq(source, "led", config_from=config_from_led, names=NAMES)
