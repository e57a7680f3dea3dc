"""The encoder: embeddings → transformer layers (post-LN as BERT/BigBird, or pre-LN) whose self-attention
calls `dnabird.attention`, with learned absolute or rotary positions.

Shapes: B batch, L tokens, H hidden, nh heads, hd head size (H = nh · hd).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from dnabird.attention import Longformer, attention
from dnabird.attention.positional import Rotary
from dnabird.errors import ParameterError
from dnabird.model.config import CENTRE_POOLINGS, POOLINGS, STATE_POOLINGS, EncoderConfig

EVAL_TAG = 1  # distinguishes the fixed evaluation seed from every training step's seed


def layer_seed(config: EncoderConfig, layer: int, step: int, training: bool, *, pattern=None) -> int:
    """Seed of one layer's randomness (random attention blocks, Performer features): from (base seed, layer,
    step) in training, fixed in eval. The layer's pattern maps the step first (`Pattern.seed_step`: a
    Performer that redraws every k steps shares one seed over k steps); `pattern`: that layer's pattern as
    built (the encoder passes its own), else built from `config`.

    With `reseed_each_step=False` it is `base_seed + layer` in both modes (Hugging Face's fixed plan).
    """
    if not config.reseed_each_step:
        return config.base_seed + layer
    step = (config.pattern(layer) if pattern is None else pattern).seed_step(step)
    key = [config.base_seed, layer, step, 0] if training else [config.base_seed, layer, 0, EVAL_TAG]
    return int(np.random.SeedSequence(key).generate_state(1)[0] >> 1)


def spe_seed(config: EncoderConfig, layer: int, step: int, training: bool) -> int:
    """Seed of one layer's SPE noise: from (base seed, layer, step) in training, fixed in evaluation; with
    `spe.share_noise` the same for every layer."""
    owner = -1 if config.spe_spec().share_noise else layer
    key = [config.base_seed, owner & 0xFFFFFFFF, step if training else 0, 2 if training else 2 + EVAL_TAG]
    return int(np.random.SeedSequence(key).generate_state(1)[0] >> 1)


def attention_density(config: EncoderConfig, length: int) -> float:
    """Share of query-key pairs the attention computes at `length` tokens: the mean of every layer's
    `dense_mask` (its evaluation layout, all heads; padding to the block multiple included)."""
    patterns = (config.pattern(layer) for layer in range(config.num_layers))
    masks = (pattern.dense_mask(length, seed=layer_seed(config, layer, 0, training=False, pattern=pattern))
             for layer, pattern in enumerate(patterns))
    return float(sum(mask.float().mean() for mask in masks)) / config.num_layers


def activation(name: str):
    """The feed-forward activation: "gelu" (erf) or "gelu_new" (tanh approximation)."""
    return nn.GELU(approximate="tanh" if name == "gelu_new" else "none")


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """[B, L, H] → [B, nh, L, hd]."""
    batch, length, hidden = x.shape
    return x.view(batch, length, heads, hidden // heads).transpose(1, 2)


def merge_heads(y: torch.Tensor) -> torch.Tensor:
    """[B, nh, L, hd] → [B, L, H]."""
    return y.transpose(1, 2).flatten(2)


def embedding_output(x: torch.Tensor, norm: nn.LayerNorm | None, dropout: nn.Dropout,
                     dropout_before_norm: bool) -> torch.Tensor:
    """Summed embeddings `x` through `dropout` and `norm` (None: no LayerNorm), dropout first with
    `dropout_before_norm`."""
    if norm is None:
        return dropout(x)
    return norm(dropout(x)) if dropout_before_norm else dropout(norm(x))


def residual(x: torch.Tensor, norm: nn.LayerNorm, block, dropout: nn.Dropout, pre_norm: bool) -> torch.Tensor:
    """One residual block: post-LN, x = LN(x + dropout(block(x))), or `pre_norm`, x = x + dropout(block(LN(x)))."""
    if pre_norm:
        return x + dropout(block(norm(x)))
    return norm(x + dropout(block(x)))


class Embeddings(nn.Module):
    """Token (× `embedding_scale`) + segment (+ learned position) embeddings, LayerNorm (unless
    `embedding_norm` is False) and dropout (order set by the config)."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.config = config
        self.word = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.position = nn.Embedding(config.max_positions, config.hidden_size) \
            if config.positional == "learned" else None
        self.segment = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps) if config.embedding_norm else None
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        length, offset = input_ids.shape[1], self.config.position_offset
        if offset + length > self.config.max_positions:
            raise ParameterError("input length", length,
                                 f"at most max_positions - position_offset = "
                                 f"{self.config.max_positions - offset}")
        x = self.word(input_ids) * self.config.embedding_scale + self.segment(token_type_ids)  # [B, L, H]
        if self.position is not None:
            x = x + self.position(torch.arange(offset, offset + length, device=input_ids.device))
        return embedding_output(x, self.norm, self.dropout, self.config.embedding_dropout_before_norm)


class SelfAttention(nn.Module):
    """Q/K/V projections, the sparse attention call, and the output projection.

    Longformer patterns add separate global Q/K/V projections, used for the global query rows. With
    rotary positions the attention call rotates q and k (the global ones too).
    """

    def __init__(self, config: EncoderConfig, pattern):
        super().__init__()
        self.config = config
        hidden, bias = config.hidden_size, config.attention_bias
        self.query, self.key, self.value = (nn.Linear(hidden, hidden, bias=bias) for _ in range(3))
        self.output = nn.Linear(hidden, hidden)
        self.positional = Rotary(config.head_size, base=config.rotary_base, offset=config.position_offset) \
            if config.positional == "rotary" else None
        self.spe = config.spe_spec().build(config.num_heads, config.head_size) if config.positional == "spe" \
            else None
        self.has_global_projections = isinstance(pattern, Longformer)
        if self.has_global_projections:
            self.global_query, self.global_key, self.global_value = (nn.Linear(hidden, hidden, bias=bias)
                                                                     for _ in range(3))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None, pattern, seed: int,
                global_mask: torch.Tensor | None = None, positional_seed: int = 0) -> torch.Tensor:
        heads = self.config.num_heads
        q, k, v = (split_heads(proj(x), heads) for proj in (self.query, self.key, self.value))
        global_qkv = None
        if self.has_global_projections and (pattern.global_positions or global_mask is not None):
            global_qkv = tuple(split_heads(proj(x), heads) for proj in (self.global_query, self.global_key,
                                                                        self.global_value))
        dropout_p = self.config.attention_dropout if self.training else 0.0
        y = attention(q, k, v, pattern, key_padding_mask=mask, seed=seed, dropout_p=dropout_p,
                      causal=self.config.causal, global_qkv=global_qkv, global_mask=global_mask,
                      positional=self.positional if self.spe is None else self.spe.bind(positional_seed))
        return self.output(merge_heads(y))  # y: [B, nh, L, hd]


class EncoderLayer(nn.Module):
    """A BERT block, post-LN: x = LN(x + attention(x)); x = LN(x + FFN(x)); or with `pre_norm`:
    x = x + attention(LN(x)); x = x + FFN(LN(x)). `pattern`: the layer's attention pattern (Longformer adds
    global projections)."""

    def __init__(self, config: EncoderConfig, pattern):
        super().__init__()
        self.attention = SelfAttention(config, pattern)
        self.attention_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.ffn_in = nn.Linear(config.hidden_size, config.intermediate_size)
        self.activation = activation(config.activation)
        self.ffn_out = nn.Linear(config.intermediate_size, config.hidden_size)
        self.ffn_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout)
        self.pre_norm = config.pre_norm

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None, pattern, seed: int,
                global_mask: torch.Tensor | None = None, positional_seed: int = 0) -> torch.Tensor:
        x = residual(x, self.attention_norm, lambda h: self.attention(h, mask, pattern, seed, global_mask,
                                                                      positional_seed), self.dropout, self.pre_norm)
        return residual(x, self.ffn_norm, lambda h: self.ffn_out(self.activation(self.ffn_in(h))), self.dropout,
                        self.pre_norm)


class Encoder(nn.Module):
    """Embeddings and `num_layers` encoder layers (pre-LN: then a final LayerNorm), plus, with
    `pooling="cls"`, the [CLS] pooler (dense + tanh, or the config's `pooler_activation`).

    The layers' attention patterns (`patterns`, one per layer) are built and validated once, here. Weights
    are initialised from `seed` alone (never the global RNG). Set `gradient_checkpointing` to recompute each
    layer's activations in the backward pass.
    """

    def __init__(self, config: EncoderConfig, *, seed: int = 0):
        super().__init__()
        self.config = config
        self.patterns = tuple(config.pattern(layer) for layer in range(config.num_layers))
        self.gradient_checkpointing = False
        with torch.device("meta"):
            self.embeddings = Embeddings(config)
            self.layers = nn.ModuleList(EncoderLayer(config, pattern) for pattern in self.patterns)
            self.final_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps) \
                if config.pre_norm else None
            self.pooler = nn.Linear(config.hidden_size, config.hidden_size) if config.pooling == "cls" else None
        materialise(self, seed)
        self.pooler_activation = nn.Tanh() if config.pooler_activation == "tanh" \
            else activation(config.pooler_activation)

    def pattern(self, layer: int = 0, global_positions: tuple[int, ...] | None = None):
        """The attention pattern of `layer` in this call (Longformer global positions set per call)."""
        pattern = self.patterns[layer]
        if global_positions is not None:
            if not isinstance(pattern, Longformer):
                raise ParameterError("global_positions", global_positions,
                                     f"None for a {pattern.type_name} pattern (only Longformer takes them)")
            pattern = dataclasses.replace(pattern, global_positions=tuple(global_positions))
        return pattern

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, *, step: int = 0,
                global_positions: tuple[int, ...] | None = None,
                global_attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Hidden states [B, L, H] of `input_ids` [B, L].

        attention_mask: bool/int [B, L], True/1 where a token is real (padded rows come out as the
            layers compute them and must be ignored by the caller).
        step: the training step, which (with the base seed and layer) selects the random blocks.
        global_positions: Longformer only, token positions with global attention in every example.
        global_attention_mask: Longformer only, bool/int [B, L], True/1 at each example's own global tokens
            (e.g. a question's tokens), in addition to `global_positions`.
        """
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        mask = None if attention_mask is None else attention_mask.bool()
        if mask is not None and bool(mask.all()):
            mask = None  # nothing padded: let the attention core skip masking
        global_mask = None if global_attention_mask is None else global_attention_mask.bool()
        x = self.embeddings(input_ids, token_type_ids)  # [B, L, H]
        for index, layer in enumerate(self.layers):
            pattern = self.pattern(index, global_positions)
            seed = layer_seed(self.config, index, step, self.training, pattern=pattern)
            noise = spe_seed(self.config, index, step, self.training) if self.config.positional == "spe" else 0
            if self.gradient_checkpointing and self.training and torch.is_grad_enabled():
                x = checkpoint(layer, x, mask, pattern, seed, global_mask, noise, use_reentrant=False)
            else:
                x = layer(x, mask, pattern, seed, global_mask, noise)
        return x if self.final_norm is None else self.final_norm(x)

    def pool(self, hidden: torch.Tensor, attention_mask: torch.Tensor | None = None,
             pooling: str | None = None) -> torch.Tensor:
        """The pooled vector [B, D] by `pooling`: one of `EncoderConfig.pooling` (default the config's, what the
        heads read; D is then `config.pooled_size`; "cls" only where the encoder has the pooler), "cls_state"
        (the [CLS] state hidden[:, 0]) or "mean_sequence" (the mean without the first and last real tokens,
        [CLS] and [SEP]). Real tokens: where `attention_mask` is true (all without a mask)."""
        pooling = self.config.pooling if pooling is None else pooling
        if pooling not in (*POOLINGS, *STATE_POOLINGS):
            raise ParameterError("pooling", pooling, f"one of {(*POOLINGS, *STATE_POOLINGS)}")
        if pooling == "cls":
            if self.pooler is None:
                raise ParameterError("pooling", pooling, f"one this encoder has: it has no [CLS] pooler (its pooling "
                                                         f"is {self.config.pooling!r}); 'cls_state' is the [CLS] state")
            return self.pooler_activation(self.pooler(hidden[:, 0]))
        if pooling == "cls_state":
            return hidden[:, 0]
        if pooling in CENTRE_POOLINGS and not self.config.pool_tokens:
            raise ParameterError("pooling", pooling, "one this encoder has: its pool_tokens is 0")
        batch, length = hidden.shape[:2]
        real = torch.ones(batch, length, dtype=torch.bool, device=hidden.device) if attention_mask is None \
            else attention_mask.bool()
        count = real.sum(1, keepdim=True)  # [B, 1]
        index = torch.arange(length, device=hidden.device)[None]

        def central(tokens: int) -> torch.Tensor:  # [B, L]: the `tokens` real tokens at the middle
            start = (count // 2 - tokens // 2).clamp(min=0)
            return real & (index >= start) & (index < start + tokens)

        def peak(where: torch.Tensor) -> torch.Tensor:  # [B, H]: per-channel maximum over `where`
            return hidden.masked_fill(~where[..., None], torch.finfo(hidden.dtype).min).amax(1)

        if pooling in CENTRE_POOLINGS:
            averaged = central(self.config.pool_tokens)
        elif pooling == "mean_sequence":
            averaged = real & (index > 0) & (index < count - 1)
        else:
            averaged = real
        weights = averaged.to(hidden.dtype)[..., None]  # [B, L, 1]
        mean = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1)
        if pooling != "centre_max":
            return mean
        local = [peak(central(self.config.local_max_tokens))] if self.config.local_max_tokens else []
        return torch.cat([mean, *local, peak(real)], dim=-1)


def initialised(build, seed: int, std: float | None = None) -> nn.Module:
    """The module `build()` makes, built on the meta device, then allocated and initialised (`materialise`)."""
    with torch.device("meta"):
        module = build()
    materialise(module, seed, std)
    return module


@torch.no_grad()
def materialise(module: nn.Module, seed: int, std: float | None = None) -> None:
    """Allocate a module built on the meta device and initialise it BERT-style from `seed`.

    Linear and embedding weights ~ N(0, std) (default: the config's initializer_range), every other
    parameter 0 except LayerNorm weights (1) and padding rows (0); with the config's `init="fan_in"`
    the encoder layers' linear weights and biases are then redrawn ~ U(±1/√fan_in). Longformer global
    projections start as copies of the local ones.
    """
    module.to_empty(device="cpu")
    std = module.config.initializer_range if std is None else std
    generator = torch.Generator().manual_seed(seed)
    for param in module.parameters():
        param.zero_()
    for sub in module.modules():
        if isinstance(sub, (nn.Linear, nn.Embedding)):
            nn.init.normal_(sub.weight, 0.0, std, generator=generator)
            if isinstance(sub, nn.Embedding) and sub.padding_idx is not None:
                sub.weight[sub.padding_idx].zero_()
        elif isinstance(sub, nn.LayerNorm):
            sub.weight.fill_(1.0)
    layers = [sub for sub in module.modules() if isinstance(sub, EncoderLayer)]
    if layers and module.config.init == "fan_in":
        for layer in layers:
            for linear in (sub for sub in layer.modules() if isinstance(sub, nn.Linear)):
                bound = linear.in_features ** -0.5
                for param in (linear.weight, linear.bias):
                    if param is not None:
                        param.uniform_(-bound, bound, generator=generator)
    for sub in (sub for sub in module.modules() if isinstance(sub, SelfAttention)):
        if sub.spe is not None:  # after every other draw: models without SPE initialise as before
            sub.spe.reset_parameters(generator)
        if sub.has_global_projections:
            for name in ("query", "key", "value"):
                getattr(sub, f"global_{name}").load_state_dict(getattr(sub, name).state_dict())
