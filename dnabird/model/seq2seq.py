"""The encoder-decoder (LED, BigBird-Pegasus, or one trained here): the `Encoder` with any attention pattern
of the core, a `Decoder` of causal self-attention and cross-attention, word embeddings shared by both and tied
to the output layer (plus a fixed per-token logits bias, BART's `final_logits_bias`). A checkpoint directory
holds its `Seq2SeqConfig` as `config.json`; `load_seq2seq` reads one back.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from dnabird.config import build_config
from dnabird.errors import CheckpointError, ConfigError, ParameterError, check_positive_ints, reject
from dnabird.io import write_text_atomic
from dnabird.labels import IGNORE_INDEX
from dnabird.model.checkpoint import (
    CONFIG_FILE,
    WEIGHTS_FILE,
    add_global_copies,
    load_weights,
    read_json,
    read_tensors,
    require_file,
)
from dnabird.model.config import EncoderConfig
from dnabird.model.decoder import Decoder, DecoderCache
from dnabird.model.encoder import Encoder, initialised

DECODER_KEY = "decoder_layers"  # the config.json key that marks an encoder-decoder checkpoint


@dataclass
class Seq2SeqConfig:
    """An encoder-decoder's settings.

    encoder: the encoder's `EncoderConfig` (not causal; no "cls" pooling: there is no pooler), whose width,
        vocabulary, LayerNorm, embedding, dropout, bias and initialisation settings the decoder shares.
    decoder_layers, decoder_heads, decoder_intermediate_size: the decoder's depth, heads and feed-forward width.
    max_decoder_positions: rows of the decoder's learned position table (the longest output + its start token).
    decoder_start_token_id: the token the decoder starts from; eos_token_id: the token that ends an output.
        Both are the checkpoint's own (LED: </s> and </s>; BigBird-Pegasus: <pad>... as its config says;
        one trained here: its tokenizer's [PAD] and [SEP]).
    """

    encoder: EncoderConfig
    decoder_layers: int = 2
    decoder_heads: int = 4
    decoder_intermediate_size: int = 256
    max_decoder_positions: int = 256
    decoder_start_token_id: int = 0
    eos_token_id: int = 3

    def __post_init__(self):
        if isinstance(self.encoder, dict):
            self.encoder = EncoderConfig.from_dict(self.encoder, source="encoder")
        check_positive_ints(self, ("decoder_layers", "decoder_heads", "decoder_intermediate_size",
                                   "max_decoder_positions"))
        reject(self.encoder.hidden_size % self.decoder_heads, "decoder_heads", self.decoder_heads,
               f"a divisor of the hidden size {self.encoder.hidden_size}")
        for name in ("decoder_start_token_id", "eos_token_id"):
            reject(not 0 <= getattr(self, name) < self.encoder.vocab_size, name, getattr(self, name),
                   f"a token id below vocab_size={self.encoder.vocab_size}")
        reject(self.encoder.causal, "encoder.causal", True, "False (the encoder reads the whole input)")
        if self.encoder.pooling == "cls":
            raise ParameterError("encoder.pooling", "cls", "'mean' (an encoder-decoder has no [CLS] pooler)")

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "encoder": self.encoder.to_dict()}

    @classmethod
    def from_dict(cls, data: dict, *, source: str = "config") -> Seq2SeqConfig:
        """A config from a mapping; errors name `source` and the key."""
        if not isinstance(data, dict) or "encoder" not in data:
            raise ConfigError(f"{source}: expected a mapping with an 'encoder' section and the decoder's settings")
        return build_config(cls, data, source)

    def save(self, path: str | os.PathLike) -> None:
        write_text_atomic(Path(path), json.dumps(self.to_dict(), indent=2) + "\n")


@dataclass
class Seq2SeqOutput:
    loss: torch.Tensor | None  # mean cross-entropy over the target tokens that are not IGNORE_INDEX
    logits: torch.Tensor  # [B, T, V]: position t scores target token t


class EncoderDecoder(nn.Module):
    """Encoder + decoder + tied output layer. `forward` scores a target by teacher forcing; `encode` and
    `decode` are the two halves generation calls (`dnabird.model.generation`)."""

    def __init__(self, config: Seq2SeqConfig, *, seed: int = 0):
        super().__init__()
        self.config = config
        encoder = config.encoder
        self.encoder = Encoder(encoder, seed=seed)
        self.decoder = initialised(lambda: Decoder(config), seed + 1, encoder.initializer_range)
        self.register_buffer("logits_bias", torch.zeros(encoder.vocab_size))

    @property
    def word_embeddings(self) -> nn.Embedding:
        return self.encoder.embeddings.word

    def encode(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, *, step: int = 0,
               global_attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Encoder states [B, S, H] (see `Encoder.forward`)."""
        return self.encoder(input_ids, attention_mask, step=step, global_attention_mask=global_attention_mask)

    def decode(self, decoder_input_ids: torch.Tensor, encoder_hidden: torch.Tensor | None,
               encoder_mask: torch.Tensor | None, cache: DecoderCache | None = None) -> torch.Tensor:
        """Next-token logits [B, T, V] for decoder tokens [B, T] (see `Decoder.forward` for `cache`)."""
        mask = None if encoder_mask is None else encoder_mask.bool()
        hidden = self.decoder(decoder_input_ids, self.word_embeddings, encoder_hidden, mask, cache)
        return F.linear(hidden, self.word_embeddings.weight) + self.logits_bias

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, *,
                decoder_input_ids: torch.Tensor, labels: torch.Tensor | None = None, step: int = 0,
                global_attention_mask: torch.Tensor | None = None) -> Seq2SeqOutput:
        """Teacher forcing: `decoder_input_ids` [B, T] are the target shifted right behind the start token;
        `labels` [B, T] the target (IGNORE_INDEX where padded)."""
        hidden = self.encode(input_ids, attention_mask, step=step, global_attention_mask=global_attention_mask)
        logits = self.decode(decoder_input_ids, hidden, attention_mask)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(), ignore_index=IGNORE_INDEX)
        return Seq2SeqOutput(loss, logits)


def read_seq2seq_config(directory: str | os.PathLike) -> Seq2SeqConfig:
    """The `Seq2SeqConfig` of an encoder-decoder checkpoint; an encoder-only checkpoint is named as such."""
    path = require_file(directory, CONFIG_FILE)
    data = read_json(path)
    if DECODER_KEY not in data:
        raise CheckpointError(f"{directory}: an encoder-only checkpoint (its {CONFIG_FILE} has no decoder): "
                              "summarising needs an encoder-decoder, e.g. one imported with `dnabird import-hf "
                              "--architecture led|bigbird_pegasus` or trained by the summarise task")
    try:
        return Seq2SeqConfig.from_dict(data, source=str(path))
    except (ConfigError, ParameterError) as err:
        raise CheckpointError(f"{path}: invalid encoder-decoder config: {err}") from None


def load_seq2seq(directory: str | os.PathLike, *, attention: dict | None = None) -> EncoderDecoder:
    """The `EncoderDecoder` saved in `directory` (config.json + model.safetensors). `attention`: an encoder
    attention pattern (as `EncoderConfig.attention`) in place of the saved one, as LED runs BART's weights with
    Longformer attention; global projections the checkpoint lacks start as copies of the local ones (LED's
    initialisation)."""
    config = read_seq2seq_config(directory)
    tensors = read_tensors(directory)
    if attention is not None:
        config = dataclasses.replace(config, encoder=EncoderConfig.from_dict(
            {**config.encoder.to_dict(), "attention": attention}, source=f"{directory}: attention"))
    model = EncoderDecoder(config)
    if attention is not None:
        tensors = add_global_copies(tensors, model)
    load_weights(model, tensors, source=str(Path(directory) / WEIGHTS_FILE))
    return model
