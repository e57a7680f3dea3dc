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

from dnabird.errors import ConfigError
from dnabird.model.config import EncoderConfig
from dnabird.model.hf_seq2seq import NameTables, import_seq2seq
from dnabird.model.seq2seq import EncoderDecoder, Seq2SeqConfig

DECODER_LAYER = {
    "self_attention.query": "self_attn.q_proj", "self_attention.key": "self_attn.k_proj",
    "self_attention.value": "self_attn.v_proj", "self_attention.output": "self_attn.out_proj",
    "self_attention_norm": "self_attn_layer_norm",
    "cross_attention.query": "encoder_attn.q_proj", "cross_attention.key": "encoder_attn.k_proj",
    "cross_attention.value": "encoder_attn.v_proj", "cross_attention.output": "encoder_attn.out_proj",
    "cross_attention_norm": "encoder_attn_layer_norm",
    "ffn_in": "fc1", "ffn_out": "fc2", "ffn_norm": "final_layer_norm",
}
_SELF = "self_attn.longformer_self_attn"
NAMES = NameTables(
    fixed={"encoder.embeddings.position": "led.encoder.embed_positions",
           "encoder.embeddings.norm": "led.encoder.layernorm_embedding",
           "decoder.position": "led.decoder.embed_positions",
           "decoder.embedding_norm": "led.decoder.layernorm_embedding"},
    encoder_prefix="led.encoder.layers",
    encoder_layer={"attention.query": f"{_SELF}.query", "attention.key": f"{_SELF}.key",
                   "attention.value": f"{_SELF}.value", "attention.global_query": f"{_SELF}.query_global",
                   "attention.global_key": f"{_SELF}.key_global", "attention.global_value": f"{_SELF}.value_global",
                   "attention.output": "self_attn.output", "attention_norm": "self_attn_layer_norm",
                   "ffn_in": "fc1", "ffn_out": "fc2", "ffn_norm": "final_layer_norm"},
    decoder_prefix="led.decoder.layers", decoder_layer=DECODER_LAYER, word="led.shared.weight",
    tied=("led.encoder.embed_tokens.weight", "led.decoder.embed_tokens.weight", "lm_head.weight"))


def config_from_led(hf: dict) -> Seq2SeqConfig:
    """A `Seq2SeqConfig` equal in behaviour to a Hugging Face `LEDConfig` (as a dict), global attention on the
    first token."""
    if hf.get("activation_function") not in ("gelu", "gelu_new"):
        raise ConfigError(f"Hugging Face LED config: activation_function={hf.get('activation_function')!r} is "
                          "not supported (expected 'gelu' or 'gelu_new')")
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
    return Seq2SeqConfig(encoder=encoder, decoder_layers=hf["decoder_layers"],
                         decoder_heads=hf["decoder_attention_heads"], decoder_intermediate_size=hf["decoder_ffn_dim"],
                         max_decoder_positions=hf["max_decoder_position_embeddings"],
                         decoder_start_token_id=hf.get("decoder_start_token_id", 2),
                         eos_token_id=hf.get("eos_token_id", 2))


def from_hf_led(source) -> EncoderDecoder:
    """An `EncoderDecoder` with the weights of a Hugging Face LED model object or `save_pretrained` directory."""
    return import_seq2seq(source, config_from=config_from_led, names=NAMES)
