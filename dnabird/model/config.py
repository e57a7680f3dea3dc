"""`EncoderConfig`: every hyper-parameter of the encoder, with YAML/JSON round trip and named presets."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from dnabird.attention.linear import LinearKernel
from dnabird.config import build_config
from dnabird.errors import ConfigError, ParameterError, check_positive_ints, reject
from dnabird.io import write_text_atomic
from dnabird.model.readonly import read_only, writable

ACTIVATIONS = ("gelu", "gelu_new")
ITC_DEFAULT = {"type": "bigbird_itc", "block_size": 64, "window_blocks": 3, "num_random_blocks": 3,
               "random_mode": "uniform"}
POSITIONAL_SCHEMES = ("learned", "rotary", "spe")
INITS = ("bert", "fan_in")
POOLINGS = ("cls", "mean", "centre", "centre_max")
CENTRE_POOLINGS = ("centre", "centre_max")  # the poolings that read `pool_tokens` central tokens
# read-outs of the hidden states with no weights of their own that `Encoder.pool` also gives (embeddings):
# the [CLS] state itself, and the mean over the real tokens without [CLS] and [SEP]
STATE_POOLINGS = ("cls_state", "mean_sequence")
POOLER_ACTIVATIONS = ("tanh", *ACTIVATIONS)
NESTED_SETTINGS = ("attention", "layer_attention", "spe")  # the fields made read-only (`read_only`)


@dataclass(frozen=True)
class EncoderConfig:
    """Shape and behaviour of a BERT-style encoder whose self-attention follows a sparse pattern.

    The fields come in three groups: the architecture, then training (dropout, initialisation, random-block
    seeds), then compatibility, the quirks that reproduce imported layouts (BERT, Hugging Face BigBird,
    RoBERTa/Longformer, Pegasus); their defaults are BERT/BigBird's. The groups are sections of one flat
    record, not nested records, so that checkpoints' config.json, `model_overrides` keys and
    `key.sub=value` overrides name every field as they always have. Frozen, nested settings included
    (`attention`, `layer_attention` and `spe` are read-only dicts and lists, `dnabird.model.readonly`: a change
    raises a `TypeError` naming the field): an `Encoder` builds its attention patterns once from it; change a
    copy (`dataclasses.replace`, `build_encoder_config`) and build another model.

    Architecture:
    vocab_size: tokens in the vocabulary (specials included).
    hidden_size, num_layers, num_heads, intermediate_size: transformer dimensions.
    max_positions: rows of the learned position table (must cover the longest input + position_offset).
    attention: the attention pattern: `type` ("bigbird_itc", "bigbird_etc", "longformer", "full", or a linear
        kernel: "performer", "relu_linear") and that pattern's own keys (docs/attention.md); never `num_heads`,
        the encoder's. Linear kernels need attention_dropout 0 (they form no attention matrix).
    layer_attention: one mapping per layer merged over `attention` (e.g. a window growing with depth), or empty.
    causal: True restricts every token to itself and the tokens before it (a left-to-right language model);
        only patterns with a causal form ("full", "longformer", linear kernels) allow it.
    positional: "learned" absolute embeddings added to the input (BERT, BigBird); "rotary": q and k rotated
        in every attention call (RoFormer; `rotary_base`: its slowest frequency); or "spe": stochastic
        positional encoding (`dnabird.attention.spe`, set by `spe`), with any attention type. The last two
        have no position table.
    spe: the SPE settings (`positional: spe` only; `dnabird.attention.spe.SPESpec`): kind ("sine" | "conv"),
        realizations, num_sines, kernel_size, gated, share_noise (one noise draw per step for all layers).
    pre_norm: False for BERT/BigBird's post-LN blocks, x = LN(x + f(x)); True for pre-LN blocks,
        x = x + f(LN(x)), with a LayerNorm after the last layer. Hugging Face BigBird is post-LN only.
    pooling: the vector the sequence heads (classification, NSP) read (`Encoder.pool`): "cls", the pooler
        (dense + tanh) over the [CLS] token's last hidden state (BERT, BigBird); "mean" over the real tokens,
        no pooler (DNABERT-2, Nucleotide Transformer); "centre", the mean over the `pool_tokens` real tokens
        at the middle (a label of the window's central bin, as DeepSEA's); "centre_max", that mean beside the
        per-channel maximum over all real tokens (2 × hidden_size; as DeepSEA's and Basset's max pooling).
    pool_tokens: how many central tokens `pooling="centre"` or `"centre_max"` averages (0 otherwise).
    local_max_tokens: `"centre_max"` only: when > 0, the per-channel maximum over this many central tokens
        goes between the mean and the window's maximum (3 × hidden_size).

    Training:
    dropout: hidden dropout (embeddings, attention output, feed-forward output, heads).
    attention_dropout: dropout on attention probabilities (training only).
    base_seed: root of every layer's random-block seed.
    reseed_each_step: True draws a layer's random blocks from (base_seed, layer, step) in training;
        False keeps them fixed at seed base_seed + layer (Hugging Face's training behaviour).
    initializer_range: standard deviation of the normal weight initialisation.
    init: "bert": every linear and embedding weight ~ N(0, initializer_range), biases 0 (BERT, BigBird);
        "fan_in": the layers' linear weights and biases ~ U(±1/√fan_in) (PyTorch's `nn.Linear` default),
        embeddings and heads as "bert".

    Compatibility with imported layouts:
    activation: "gelu" (erf) or "gelu_new" (tanh approximation, Hugging Face BigBird).
    layer_norm_eps: epsilon of every LayerNorm.
    type_vocab_size: segment ids (2: sentence A / B).
    position_offset: first position id (0 for BERT/BigBird; padding_idx + 1 for RoBERTa/Longformer).
    pad_token_id: id of [PAD]; its embedding row starts at zero.
    attention_bias: whether the Q/K/V projections carry a bias (Hugging Face `use_bias`).
    embedding_dropout_before_norm: embedding dropout before the LayerNorm (Hugging Face BigBird), else after.
    embedding_norm: False leaves out the embeddings' LayerNorm (Pegasus, BigBird-Pegasus: pre-LN blocks).
    embedding_scale: factor on the word embeddings (√hidden_size for Pegasus and BigBird-Pegasus, else 1).
    mlm_transform: True for BERT's masked-LM head (dense + activation + LayerNorm before the tied
        decoder); False reads the logits off the last hidden state through the tied decoder directly.
    pooler_activation: the "cls" pooler's activation: "tanh" (BERT), or "gelu" / "gelu_new" (an imported
        `BigBirdForSequenceClassification` head's).
    """

    # --- architecture ---
    vocab_size: int = 32000
    hidden_size: int = 768
    num_layers: int = 12
    num_heads: int = 12
    intermediate_size: int = 3072
    max_positions: int = 4096
    attention: dict = field(default_factory=lambda: dict(ITC_DEFAULT))
    layer_attention: list = field(default_factory=list)
    causal: bool = False
    positional: str = "learned"
    rotary_base: float = 10000.0
    spe: dict = field(default_factory=dict)
    pre_norm: bool = False
    pooling: str = "cls"
    pool_tokens: int = 0
    local_max_tokens: int = 0
    # --- training ---
    dropout: float = 0.1
    attention_dropout: float = 0.1
    base_seed: int = 0
    reseed_each_step: bool = True
    initializer_range: float = 0.02
    init: str = "bert"
    # --- compatibility: quirks of imported layouts (BERT, Hugging Face BigBird, RoBERTa/Longformer, Pegasus) ---
    activation: str = "gelu_new"
    layer_norm_eps: float = 1e-12
    type_vocab_size: int = 2
    position_offset: int = 0
    pad_token_id: int = 0
    attention_bias: bool = True
    embedding_dropout_before_norm: bool = True
    embedding_norm: bool = True
    embedding_scale: float = 1.0
    mlm_transform: bool = True
    pooler_activation: str = "tanh"

    def __post_init__(self):
        for name in NESTED_SETTINGS:
            object.__setattr__(self, name, read_only(getattr(self, name), f"EncoderConfig.{name}"))
        check_positive_ints(self, ("vocab_size", "hidden_size", "num_layers", "num_heads", "intermediate_size",
                                   "max_positions", "type_vocab_size"))
        reject(self.hidden_size % self.num_heads, "hidden_size", self.hidden_size,
               f"a multiple of num_heads={self.num_heads}")
        for name in ("dropout", "attention_dropout"):
            value = getattr(self, name)
            reject(not 0.0 <= value < 1.0, name, value, "a probability in [0, 1)")
        for name, allowed in (("activation", ACTIVATIONS), ("init", INITS), ("pooling", POOLINGS),
                              ("pooler_activation", POOLER_ACTIVATIONS)):
            reject(getattr(self, name) not in allowed, name, getattr(self, name), f"one of {allowed}")
        if not isinstance(self.pool_tokens, int) or isinstance(self.pool_tokens, bool) or \
                (self.pool_tokens < 1 if self.pooling in CENTRE_POOLINGS else self.pool_tokens != 0):
            raise ParameterError("pool_tokens", self.pool_tokens,
                                 f"a positive integer with pooling {' or '.join(CENTRE_POOLINGS)}, else 0")
        if not isinstance(self.local_max_tokens, int) or isinstance(self.local_max_tokens, bool) or \
                self.local_max_tokens < 0 or (self.local_max_tokens and self.pooling != "centre_max"):
            raise ParameterError("local_max_tokens", self.local_max_tokens,
                                 "a non-negative integer, and 0 unless pooling is 'centre_max'")
        reject(self.positional not in POSITIONAL_SCHEMES, "positional", self.positional, f"one of {POSITIONAL_SCHEMES}")
        if self.positional == "rotary":
            from dnabird.attention.positional import Rotary

            Rotary(self.head_size, base=self.rotary_base)  # validates its own parameters
        if self.spe and self.positional != "spe":
            raise ParameterError("spe", self.spe, f"empty unless positional is 'spe' (it is {self.positional!r})")
        if self.positional == "spe":
            self.spe_spec()  # validates the keys
        reject(not 0 <= self.pad_token_id < self.vocab_size, "pad_token_id", self.pad_token_id,
               f"an id below vocab_size={self.vocab_size}")
        reject(self.position_offset < 0 or self.position_offset >= self.max_positions, "position_offset",
               self.position_offset, f"an integer in [0, max_positions={self.max_positions})")
        if not isinstance(self.layer_attention, list) or len(self.layer_attention) not in (0, self.num_layers):
            raise ParameterError("layer_attention", self.layer_attention,
                                 f"an empty list or one mapping per layer (num_layers={self.num_layers})")
        for layer in range(self.num_layers):
            pattern = self.pattern(layer)  # validates every layer's pattern parameters
            if self.causal and not pattern.supports_causal():
                raise ParameterError("causal", self.causal, f"False with a {pattern.type_name} pattern (layer "
                                     f"{layer}); only full, longformer and linear kernels have a causal form")
            if self.attention_dropout and isinstance(pattern, LinearKernel):
                raise ParameterError("attention_dropout", self.attention_dropout,
                                     f"0 with a {pattern.type_name} kernel (layer {layer}): linear attention "
                                     "forms no attention matrix to drop from")

    def spe_spec(self):
        """The `spe` settings as a validated `SPESpec`."""
        from dnabird.attention.spe import SPESpec

        return SPESpec.from_dict(self.spe)

    @property
    def pooled_size(self) -> int:
        """Width of the vector `Encoder.pool` returns (what the sequence heads read)."""
        if self.pooling != "centre_max":
            return self.hidden_size
        return (3 if self.local_max_tokens else 2) * self.hidden_size

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_heads

    @property
    def length_multiple(self) -> int:
        """Inputs are padded to a multiple of this: the least common multiple of the layers' block sizes."""
        return math.lcm(*(self.pattern(layer).block_size for layer in range(self.num_layers)))

    def check_length(self, length: int, name: str = "max_length", *, multiple: bool = True) -> None:
        """`length` tokens must fit the position table after `position_offset` and (with `multiple`) be a
        multiple of the attention block size; else a `ParameterError` naming `name`."""
        room = self.max_positions - self.position_offset
        reject(length > room, name, length, f"<= the model's max_positions - position_offset = {room}")
        if multiple and length % self.length_multiple:
            raise ParameterError(name, length, f"a multiple of the attention block size {self.length_multiple}")

    def pattern(self, layer: int = 0):
        """The attention pattern of layer `layer`: `attention`, with that layer's `layer_attention` merged
        over it, built with the encoder's `num_heads`. Errors name the key (`attention.<key>` or
        `layer_attention[i].<key>`)."""
        from dnabird.attention import pattern_from_dict

        where = "attention"
        spec = self.attention
        if not isinstance(spec, dict) or "type" not in spec:
            raise ParameterError(where, spec, "a mapping with a 'type' key and that pattern's parameters")
        if self.layer_attention:
            where = f"layer_attention[{layer}]"
            own = self.layer_attention[layer]
            reject(not isinstance(own, dict), where, own, "a mapping of pattern parameters")
            spec = merge_pattern(spec, own)
        if "num_heads" in spec:
            raise ParameterError(f"{where}.num_heads", spec["num_heads"],
                                 f"no such key: the pattern takes the encoder's num_heads={self.num_heads}")
        try:
            return pattern_from_dict({**spec, "num_heads": self.num_heads})
        except ParameterError as err:
            raise ParameterError(f"{where}.{err.name}", err.value, err.expected) from None

    # --- serialisation -------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Every field as plain, mutable data (dicts and lists; what config.json and YAML hold)."""
        return writable(dataclasses.asdict(self))

    @classmethod
    def from_dict(cls, data: dict, *, source: str = "config") -> EncoderConfig:
        """Build a config from a mapping, checking every key's name and type (errors name `source` and the
        key). Configs written before `attention` lost its `num_heads` load when that value agrees with
        the encoder's."""
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: expected a mapping of encoder settings, got {type(data).__name__}")
        data = dict(data)
        attention = data.get("attention")
        if isinstance(attention, dict) and "num_heads" in attention:
            heads = data.get("num_heads", cls.num_heads)
            if attention["num_heads"] != heads:
                raise ConfigError(f"{source}: attention.num_heads={attention['num_heads']!r} disagrees with "
                                  f"num_heads={heads!r}; delete attention.num_heads (the pattern takes the "
                                  "encoder's num_heads)")
            data["attention"] = {k: v for k, v in attention.items() if k != "num_heads"}
        return build_config(cls, data, source)

    def save(self, path: str | Path) -> None:
        """Write as JSON (`.json`) or YAML (`.yaml`/`.yml`), atomically."""
        path = Path(path)
        text = yaml.safe_dump(self.to_dict(), sort_keys=False) if path.suffix in (".yaml", ".yml") \
            else json.dumps(self.to_dict(), indent=2) + "\n"
        write_text_atomic(path, text)

    @classmethod
    def load(cls, path: str | Path) -> EncoderConfig:
        """Read a config written by `save` (JSON or YAML by suffix)."""
        path = Path(path)
        try:
            text = path.read_text()
        except FileNotFoundError:
            raise ConfigError(f"{path}: encoder config file not found") from None
        try:
            data = yaml.safe_load(text) if path.suffix in (".yaml", ".yml") else json.loads(text)
        except (yaml.YAMLError, json.JSONDecodeError) as err:
            raise ConfigError(f"{path}: not valid {path.suffix.lstrip('.') or 'JSON'}: {err}") from None
        return cls.from_dict(data, source=str(path))


# Block-sparse BigBird applies no dropout to attention probabilities: neither Google's reference code
# nor Hugging Face's `BigBirdBlockSparseAttention` does (only their full attention uses
# attention_probs_dropout_prob). The sparse presets follow them; hidden dropout stays 0.1.
SPARSE_ATTENTION_DROPOUT = 0.0


def bigbird_base(**overrides) -> EncoderConfig:
    """BigBird genomics (Zaheer et al. 2020, Tab. 21): 12 x 768, 12 heads, 4096 tokens, ITC b=64 w=3 r=3."""
    return EncoderConfig(**merge_settings(
        dict(vocab_size=32000, hidden_size=768, num_layers=12, num_heads=12, intermediate_size=3072,
             max_positions=4096, attention_dropout=SPARSE_ATTENTION_DROPOUT, attention=dict(ITC_DEFAULT)),
        overrides))


def tiny(**overrides) -> EncoderConfig:
    """A 2-layer, 128-wide, 4-head ITC encoder for tests and demos (4096 positions, 512-token vocab)."""
    return EncoderConfig(**merge_settings(
        dict(vocab_size=512, hidden_size=128, num_layers=2, num_heads=4, intermediate_size=256,
             max_positions=4096, attention_dropout=SPARSE_ATTENTION_DROPOUT, attention=dict(ITC_DEFAULT)),
        overrides))


PRESETS = {"bigbird-base": bigbird_base, "tiny": tiny}


def preset(name: str, **overrides) -> EncoderConfig:
    """A named preset (`bigbird-base` or `tiny`) with optional overrides, merged as `merge_settings` does."""
    reject(name not in PRESETS, "preset", name, f"one of {sorted(PRESETS)}")
    return PRESETS[name](**overrides)


def merge_pattern(base: dict, overrides: dict) -> dict:
    """Pattern settings `overrides` over `base`: key by key for the same pattern type; a different `type`
    starts from that type's own defaults instead (keys of the old type would not apply)."""
    if "type" in overrides and overrides["type"] != base.get("type"):
        return dict(overrides)
    return {**base, **overrides}


def merge_settings(settings: dict, overrides: dict, where: str = "overrides") -> dict:
    """Encoder settings with `overrides` over them: `attention` merges key by key (`merge_pattern`), so
    `attention.block_size=32` keeps the pattern's other keys; every other key replaces."""
    merged = {**settings, **overrides}
    if "attention" in overrides:
        if not isinstance(overrides["attention"], dict):
            raise ConfigError(f"{where}: attention: expected a mapping of pattern settings, got "
                              f"{overrides['attention']!r}")
        merged["attention"] = merge_pattern(settings.get("attention") or {}, overrides["attention"])
    return merged


def build_encoder_config(base: str | EncoderConfig, overrides: dict | None = None, *,
                         where: str = "model_overrides", adjust=None, max_length: int | None = None,
                         **fixed) -> EncoderConfig:
    """The one path from settings to an `EncoderConfig`, which every recipe takes (pretraining, fine-tuning,
    the text recipes; `recipe_encoder_config` reads a recipe config's fields for it):

    1. `base`: a preset by name (`PRESETS`), or a config (a checkpoint's, `read_config`);
    2. `overrides`, a config file's `model_overrides`, merged over it (`merge_settings`: `attention` key by key);
    3. `fixed`: values no override may change (the tokenizer's vocab_size, a fine-tuning head's pooling);
    4. `adjust(config) -> dict`: fields that depend on the config so far and replace its own (a task's
       `encoder_overrides`, e.g. global attention at [CLS] in a Longformer pattern);
    5. with `max_length`, that many tokens must fit the model and be a multiple of its block size.

    Every key's name and type is checked; errors (`ConfigError`) name `where` and the key, what is allowed
    and what was given."""
    if isinstance(base, str) and base not in PRESETS:
        raise ConfigError(f"{where}: model={base!r} is invalid: expected one of {sorted(PRESETS)}")
    if not isinstance(overrides or {}, dict):
        raise ConfigError(f"{where}: expected a mapping of EncoderConfig fields, got {overrides!r}")
    settings = PRESETS[base]().to_dict() if isinstance(base, str) else base.to_dict()
    model = EncoderConfig.from_dict(merge_settings(settings, {**(overrides or {}), **fixed}, where), source=where)
    changes = adjust(model) if adjust is not None else {}
    if changes:
        model = EncoderConfig.from_dict({**model.to_dict(), **changes}, source=f"{where}, then the task's changes")
    if max_length is not None:
        model.check_length(max_length)
    return model


def recipe_encoder_config(config, vocab_size: int | None = None, **fixed) -> EncoderConfig:
    """`build_encoder_config` for a recipe config (its `model`, `model_overrides` and `max_length`): `fixed`
    values and (when known) the tokenizer's `vocab_size` over the overrides."""
    if vocab_size is not None:
        fixed["vocab_size"] = vocab_size
    return build_encoder_config(config.model, config.model_overrides, max_length=config.max_length, **fixed)
