"""The decoder of an encoder-decoder: causal self-attention, cross-attention over the encoder's states and a
feed-forward block per layer, every attention through the one `dnabird.attention.attention` call (Full
pattern; queries apart from the keys via `query_offset`), and a `DecoderCache` that keeps each layer's keys
and values while generating, so each new token costs one row of work instead of the whole prefix again.

Shapes: B batch (× beams), T decoder tokens, S encoder tokens, H hidden, nh heads, hd head size.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from dnabird.attention import Full, attention
from dnabird.errors import ParameterError
from dnabird.model.encoder import activation, embedding_output, merge_heads, residual, split_heads


@dataclass
class DecoderCache:
    """What a decoder keeps while generating: per layer, its self-attention keys and values for the tokens so
    far (in buffers of `capacity` positions; the first `length` are filled) and its cross-attention keys and
    values over the encoder's states (computed once), with the encoder's key padding mask."""

    self_keys: list[torch.Tensor]  # [B, nh, capacity, hd] per layer
    self_values: list[torch.Tensor]
    cross_keys: list[torch.Tensor]  # [B, nh, S, hd] per layer
    cross_values: list[torch.Tensor]
    encoder_mask: torch.Tensor | None  # bool [B, S]
    length: int = 0

    def reorder(self, rows: torch.Tensor) -> None:
        """Keep the self-attention rows `rows` (long [B]; beam search's surviving beams). The cross-attention
        keys stay: beams of one example share its encoder states."""
        self.self_keys = [k.index_select(0, rows) for k in self.self_keys]
        self.self_values = [v.index_select(0, rows) for v in self.self_values]


class DecoderAttention(nn.Module):
    """Q/K/V and output projections around the attention call: causal self-attention over the decoder's own
    tokens, or (`cross`) attention over the encoder's states."""

    def __init__(self, hidden: int, heads: int, bias: bool, dropout: float):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.query, self.key, self.value, self.output = (nn.Linear(hidden, hidden, bias=bias) for _ in range(4))
        self.pattern = Full(heads)

    def keys_values(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The keys and values of states `x` [B, L, H], each [B, nh, L, hd]."""
        return split_heads(self.key(x), self.heads), split_heads(self.value(x), self.heads)

    def forward(self, x: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, *, causal: bool,
                query_offset: int | None, key_padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """x [B, T, H] attends over `keys`, `values` [B, nh, K, hd]; see `attention` for `query_offset`."""
        dropout_p = self.dropout if self.training else 0.0
        y = attention(split_heads(self.query(x), self.heads), keys, values, self.pattern, causal=causal,
                      dropout_p=dropout_p, key_padding_mask=key_padding_mask, query_offset=query_offset)
        return self.output(merge_heads(y))  # y: [B, nh, T, hd]


class DecoderLayer(nn.Module):
    """Self-attention, cross-attention and feed-forward blocks, post-LN (BART, LED: x = LN(x + f(x))) or
    pre-LN (Pegasus, BigBird-Pegasus: x = x + f(LN(x))); sizes and settings from a `Seq2SeqConfig`."""

    def __init__(self, config):
        super().__init__()
        shared, heads, intermediate = config.encoder, config.decoder_heads, config.decoder_intermediate_size
        hidden, eps = shared.hidden_size, shared.layer_norm_eps
        self.self_attention = DecoderAttention(hidden, heads, shared.attention_bias, shared.attention_dropout)
        self.self_attention_norm = nn.LayerNorm(hidden, eps=eps)
        self.cross_attention = DecoderAttention(hidden, heads, shared.attention_bias, shared.attention_dropout)
        self.cross_attention_norm = nn.LayerNorm(hidden, eps=eps)
        self.ffn_in = nn.Linear(hidden, intermediate)
        self.activation = activation(shared.activation)
        self.ffn_out = nn.Linear(intermediate, hidden)
        self.ffn_norm = nn.LayerNorm(hidden, eps=eps)
        self.dropout = nn.Dropout(shared.dropout)
        self.pre_norm = shared.pre_norm

    def forward(self, x: torch.Tensor, encoder_kv: tuple[torch.Tensor, torch.Tensor], encoder_mask, *,
                cache: DecoderCache | None = None, layer: int = 0) -> torch.Tensor:
        def self_attention(h):
            keys, values = self.self_attention.keys_values(h)
            if cache is None:  # teacher forcing: the whole target at once
                return self.self_attention(h, keys, values, causal=True, query_offset=None)
            end = cache.length + h.shape[1]
            cache.self_keys[layer][:, :, cache.length:end] = keys
            cache.self_values[layer][:, :, cache.length:end] = values
            return self.self_attention(h, cache.self_keys[layer][:, :, :end], cache.self_values[layer][:, :, :end],
                                       causal=True, query_offset=cache.length)

        def cross_attention(h):
            return self.cross_attention(h, *encoder_kv, causal=False, query_offset=0, key_padding_mask=encoder_mask)

        x = residual(x, self.self_attention_norm, self_attention, self.dropout, self.pre_norm)
        x = residual(x, self.cross_attention_norm, cross_attention, self.dropout, self.pre_norm)
        return residual(x, self.ffn_norm, lambda h: self.ffn_out(self.activation(self.ffn_in(h))), self.dropout,
                        self.pre_norm)


class Decoder(nn.Module):
    """Learned positions added to the (shared, scaled) word embeddings, an optional LayerNorm, the layers and,
    pre-LN, a final LayerNorm, as a `Seq2SeqConfig` sets them (the decoder shares the encoder's width, LayerNorm,
    embedding, dropout, bias and activation settings). The word embeddings are the encoder's, passed in (`word`)."""

    def __init__(self, config):
        super().__init__()
        shared, hidden = config.encoder, config.encoder.hidden_size
        self.heads, self.head_size = config.decoder_heads, hidden // config.decoder_heads
        self.max_positions = config.max_decoder_positions
        self.embedding_scale, self.dropout_before_norm = shared.embedding_scale, shared.embedding_dropout_before_norm
        self.position = nn.Embedding(self.max_positions, hidden)
        self.embedding_norm = nn.LayerNorm(hidden, eps=shared.layer_norm_eps) if shared.embedding_norm else None
        self.dropout = nn.Dropout(shared.dropout)
        self.layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.decoder_layers))
        self.final_norm = nn.LayerNorm(hidden, eps=shared.layer_norm_eps) if shared.pre_norm else None

    def new_cache(self, encoder_hidden: torch.Tensor, encoder_mask: torch.Tensor | None,
                  capacity: int) -> DecoderCache:
        """An empty cache for up to `capacity` tokens, with every layer's cross-attention keys and values."""
        batch = encoder_hidden.shape[0]
        shape = (batch, self.heads, capacity, self.head_size)
        empty = [encoder_hidden.new_zeros(shape) for _ in self.layers]
        cross = [layer.cross_attention.keys_values(encoder_hidden) for layer in self.layers]
        return DecoderCache(empty, [t.clone() for t in empty], [k for k, _ in cross], [v for _, v in cross],
                            encoder_mask)

    def forward(self, input_ids: torch.Tensor, word: nn.Embedding, encoder_hidden: torch.Tensor | None,
                encoder_mask: torch.Tensor | None, cache: DecoderCache | None = None) -> torch.Tensor:
        """Hidden states [B, T, H] of decoder tokens `input_ids` [B, T]. Without `cache` the tokens are a whole
        target (teacher forcing) and the cross-attention keys come from `encoder_hidden` [B, S, H]; with it
        they follow the `cache.length` tokens before them, and the cache grows by T."""
        start = 0 if cache is None else cache.length
        length = input_ids.shape[1]
        if start + length > self.max_positions:
            raise ParameterError("decoder length", start + length,
                                 f"at most the model's {self.max_positions} decoder positions")
        x = word(input_ids) * self.embedding_scale + self.position(
            torch.arange(start, start + length, device=input_ids.device))  # [B, T, H]
        x = embedding_output(x, self.embedding_norm, self.dropout, self.dropout_before_norm)
        if cache is not None:
            encoder_mask = cache.encoder_mask
        for index, layer in enumerate(self.layers):
            encoder_kv = (cache.cross_keys[index], cache.cross_values[index]) if cache is not None \
                else layer.cross_attention.keys_values(encoder_hidden)
            x = layer(x, encoder_kv, encoder_mask, cache=cache, layer=index)
        if cache is not None:
            cache.length += length
        return x if self.final_norm is None else self.final_norm(x)
