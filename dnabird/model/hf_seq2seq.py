"""What importing a Hugging Face encoder-decoder (LED, BigBird-Pegasus) shares: reading the weights, mapping
their names onto an `EncoderDecoder`, and writing a dnabird checkpoint with the model's own tokenizer.

Each architecture module gives its config mapping and name tables (`hf_led`, `hf_bigbird_pegasus`). The
word embeddings are shared by encoder, decoder and output layer on both sides; Hugging Face's tied copies
(`embed_tokens`, `lm_head`) must equal the shared table. Tensors dnabird has and the source lacks are the
token-type table (one row) and biases the source's layers go without (BigBird-Pegasus's `use_bias=False`
attention output): they load as zeros, which computes what the source computes.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from pathlib import Path

import torch

from dnabird.errors import CheckpointError, reject
from dnabird.model.checkpoint import save_checkpoint
from dnabird.model.config import EncoderConfig
from dnabird.model.hf import NameMap, import_model
from dnabird.model.seq2seq import EncoderDecoder, Seq2SeqConfig

log = logging.getLogger(__name__)
ZERO_FILLED = re.compile(r"encoder\.embeddings\.segment\.weight|encoder\.layers\.\d+\.attention\.output\.bias")
FFN_NAMES = {"ffn_in": "fc1", "ffn_out": "fc2", "ffn_norm": "final_layer_norm"}  # a BART-shaped layer's
_DECODER_LEAVES = ((".query", ".q_proj"), (".key", ".k_proj"), (".value", ".v_proj"), (".output", ".out_proj"),
                   ("_norm", "_layer_norm"))
# a BART-shaped decoder layer (LED's and BigBird-Pegasus's)
DECODER_LAYER = {**FFN_NAMES, **{f"{ours}{leaf}": f"{theirs}{their_leaf}" for ours, theirs in (
    ("self_attention", "self_attn"), ("cross_attention", "encoder_attn")) for leaf, their_leaf in _DECODER_LEAVES}}
# EncoderConfig field → the key of a BART-shaped Hugging Face config (LED, BigBird-Pegasus)
BART_KEYS = {"vocab_size": "vocab_size", "hidden_size": "d_model", "num_layers": "encoder_layers",
             "num_heads": "encoder_attention_heads", "intermediate_size": "encoder_ffn_dim", "dropout": "dropout",
             "attention_dropout": "attention_dropout", "activation": "activation_function"}


def seq2seq_names(base: str, *, projections: dict[str, str], norms: dict[str, str]) -> NameMap:
    """The names of a BART-shaped encoder-decoder whose base model is called `base`: shared word table,
    learned positions on both sides, `norms` (dnabird module → module under `base`), and the encoder's layer,
    whose attention `projections` (`projection_names`) are the architecture's own."""
    encoder_layer = {**projections, "attention.output": "self_attn.output", "attention_norm": "self_attn_layer_norm",
                     **FFN_NAMES}
    return NameMap(
        {"encoder.embeddings.word": f"{base}.shared", "encoder.embeddings.position": f"{base}.encoder.embed_positions",
         "decoder.position": f"{base}.decoder.embed_positions", **{k: f"{base}.{v}" for k, v in norms.items()}},
        {"encoder.layers": (f"{base}.encoder.layers", encoder_layer),
         "decoder.layers": (f"{base}.decoder.layers", DECODER_LAYER)},
        {"logits_bias": "final_logits_bias"})


def seq2seq_config(hf: dict, *, max_decoder_positions: int, eos_token_id: int, **encoder) -> Seq2SeqConfig:
    """The `Seq2SeqConfig` of a BART-shaped Hugging Face config (as a dict): an encoder of its `BART_KEYS`,
    LayerNorm epsilon 1e-5, one token type and mean pooling, with `encoder` settings over them;
    `eos_token_id`: the default where the config has none."""
    encoder = EncoderConfig(**{**{ours: hf[theirs] for ours, theirs in BART_KEYS.items()}, "layer_norm_eps": 1e-5,
                               "type_vocab_size": 1, "pooling": "mean",
                               "initializer_range": hf.get("init_std", 0.02), **encoder})
    return Seq2SeqConfig(encoder=encoder, decoder_layers=hf["decoder_layers"],
                         decoder_heads=hf["decoder_attention_heads"], decoder_intermediate_size=hf["decoder_ffn_dim"],
                         max_decoder_positions=max_decoder_positions,
                         decoder_start_token_id=hf.get("decoder_start_token_id", 2),
                         eos_token_id=hf.get("eos_token_id", eos_token_id))


def _fill_absent(tensors: dict[str, torch.Tensor], model: EncoderDecoder) -> dict[str, torch.Tensor]:
    """The source's tensors with the logits bias flattened and zeros for what it goes without (see above)."""
    tensors = dict(tensors)
    if "logits_bias" in tensors:
        tensors["logits_bias"] = tensors["logits_bias"].reshape(-1)
    absent = sorted(k for k, v in model.state_dict().items()
                    if k not in tensors and (ZERO_FILLED.fullmatch(k) or k == "logits_bias"))
    tensors.update({k: torch.zeros_like(model.state_dict()[k]) for k in absent})
    if absent:
        log.info("zero-filled (absent from the source): %s", ", ".join(absent))
    return tensors


def import_seq2seq(source, base: str, *, config_from, names: NameMap) -> EncoderDecoder:
    """An `EncoderDecoder` with the weights of a Hugging Face model object or `save_pretrained` directory.

    base: the base model's name; config_from: Hugging Face config dict → `Seq2SeqConfig`; names: the
    architecture's `seq2seq_names(base, ...)`.
    """
    tied = (f"{base}.encoder.embed_tokens.weight", f"{base}.decoder.embed_tokens.weight", "lm_head.weight")
    return import_model(source, EncoderDecoder, config_from=config_from, names=names, tied=tied,
                        adapt=_fill_absent, required=lambda name: True)


def save_imported(model: EncoderDecoder, tokenizer_source: str | os.PathLike, output: str | os.PathLike) -> Path:
    """Write `model` as a dnabird checkpoint with the source directory's tokenizer as `tokenizer.json`."""
    from dnabird.data.pretrained_tokenizer import FILE, PretrainedTokenizer

    tokenizer = PretrainedTokenizer.load(tokenizer_source)
    if tokenizer.vocab_size > model.config.encoder.vocab_size:
        raise CheckpointError(f"{tokenizer_source}: its tokenizer has {tokenizer.vocab_size} tokens, more than the "
                              f"model's vocab_size={model.config.encoder.vocab_size}")
    with tempfile.TemporaryDirectory() as scratch:
        return save_checkpoint(model, output, tokenizer_files=(tokenizer.save(Path(scratch) / FILE),))


def import_encoder_decoder(architecture: str, source: str | os.PathLike, output: str | os.PathLike) -> EncoderDecoder:
    """Import a Hugging Face directory of `architecture` ("led" or "bigbird_pegasus") with its tokenizer into
    the dnabird checkpoint `output`; returns the model."""
    from dnabird.model.hf_bigbird_pegasus import from_hf_bigbird_pegasus
    from dnabird.model.hf_led import from_hf_led

    importers = {"led": from_hf_led, "bigbird_pegasus": from_hf_bigbird_pegasus}
    reject(architecture not in importers, "architecture", architecture, f"one of {sorted(importers)}")
    model = importers[architecture](source)
    save_imported(model, source, output)
    return model
