"""`EncoderConfig`: every hyper-parameter of the encoder, with YAML/JSON round trip and named presets."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from dnabird.config import reject_unknown_keys
from dnabird.errors import ConfigError, ParameterError
from dnabird.io import write_text_atomic

ACTIVATIONS = ("gelu", "gelu_new")
POSITIONAL_SCHEMES = ("learned", "rotary")
INITS = ("bert", "fan_in")


@dataclass
class EncoderConfig:
    """Shape and behaviour of a BERT-style encoder whose self-attention follows a sparse pattern.

    vocab_size: tokens in the vocabulary (specials included).
    hidden_size, num_layers, num_heads, intermediate_size: transformer dimensions.
    max_positions: rows of the learned position table (must cover the longest input + position_offset).
    dropout: hidden dropout (embeddings, attention output, feed-forward output, heads).
    attention_dropout: dropout on attention probabilities (training only).
    activation: "gelu" (erf) or "gelu_new" (tanh approximation, Hugging Face BigBird).
    layer_norm_eps: epsilon of every LayerNorm.
    type_vocab_size: segment ids (2: sentence A / B).
    position_offset: first position id (0 for BERT/BigBird; padding_idx + 1 for RoBERTa/Longformer).
    pad_token_id: id of [PAD]; its embedding row starts at zero.
    attention: the attention pattern as `pattern.to_dict()` (its `num_heads` must equal `num_heads`).
    attention_bias: whether the Q/K/V projections carry a bias (Hugging Face `use_bias`).
    embedding_dropout_before_norm: True applies embedding dropout before the LayerNorm (Hugging Face
        BigBird), False after it (BERT).
    base_seed: root of every layer's random-block seed.
    reseed_each_step: True draws a layer's random blocks from (base_seed, layer, step) in training;
        False keeps them fixed at seed base_seed + layer (Hugging Face's training behaviour).
    positional: position scheme: "learned" absolute embeddings added to the input (BERT, BigBird), or
        "rotary": q and k rotated inside every attention call (RoFormer), no position table; the
        score then depends on the relative offset only. `rotary_base` sets its slowest frequency.
    pre_norm: False for BERT/BigBird's post-LN blocks, x = LN(x + f(x)); True for pre-LN blocks,
        x = x + f(LN(x)), with a LayerNorm after the last layer. Hugging Face BigBird is post-LN only.
    mlm_transform: True for BERT's masked-LM head (dense + activation + LayerNorm before the tied
        decoder); False reads the logits off the last hidden state through the tied decoder directly.
        A small model trained briefly learns context far faster without it: at initialisation the
        transform is a random projection that hides the "tokens like my context" bias of tied weights.
    initializer_range: standard deviation of the normal weight initialisation.
    init: "bert": every linear and embedding weight ~ N(0, initializer_range), biases 0 (BERT, BigBird,
        Hugging Face); "fan_in": the layers' linear maps as PyTorch's `nn.Linear` default, weights and
        biases ~ U(±1/√fan_in), a scale that follows the width (std 0.05 at width 128, where BERT's 0.02
        is tuned for 768), while embeddings and heads stay N(0, initializer_range).
    """

    vocab_size: int = 32000
    hidden_size: int = 768
    num_layers: int = 12
    num_heads: int = 12
    intermediate_size: int = 3072
    max_positions: int = 4096
    dropout: float = 0.1
    attention_dropout: float = 0.1
    activation: str = "gelu_new"
    layer_norm_eps: float = 1e-12
    type_vocab_size: int = 2
    position_offset: int = 0
    pad_token_id: int = 0
    attention: dict = field(default_factory=lambda: {
        "type": "bigbird_itc", "num_heads": 12, "block_size": 64, "window_blocks": 3,
        "num_random_blocks": 3, "random_mode": "uniform"})
    attention_bias: bool = True
    embedding_dropout_before_norm: bool = True
    base_seed: int = 0
    reseed_each_step: bool = True
    positional: str = "learned"
    rotary_base: float = 10000.0
    pre_norm: bool = False
    mlm_transform: bool = True
    initializer_range: float = 0.02
    init: str = "bert"

    def __post_init__(self):
        for name in ("vocab_size", "hidden_size", "num_layers", "num_heads", "intermediate_size",
                     "max_positions", "type_vocab_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ParameterError(name, value, "a positive integer")
        if self.hidden_size % self.num_heads:
            raise ParameterError("hidden_size", self.hidden_size,
                                 f"a multiple of num_heads={self.num_heads}")
        for name in ("dropout", "attention_dropout"):
            value = getattr(self, name)
            if not 0.0 <= value < 1.0:
                raise ParameterError(name, value, "a probability in [0, 1)")
        if self.activation not in ACTIVATIONS:
            raise ParameterError("activation", self.activation, f"one of {ACTIVATIONS}")
        if self.init not in INITS:
            raise ParameterError("init", self.init, f"one of {INITS}")
        if self.positional not in POSITIONAL_SCHEMES:
            raise ParameterError("positional", self.positional, f"one of {POSITIONAL_SCHEMES}")
        if self.positional == "rotary":
            from dnabird.attention.positional import Rotary

            Rotary(self.head_size, base=self.rotary_base)  # validates its own parameters
        if not 0 <= self.pad_token_id < self.vocab_size:
            raise ParameterError("pad_token_id", self.pad_token_id,
                                 f"an id below vocab_size={self.vocab_size}")
        if self.position_offset < 0 or self.position_offset >= self.max_positions:
            raise ParameterError("position_offset", self.position_offset,
                                 f"an integer in [0, max_positions={self.max_positions})")
        pattern = self.pattern()  # validates the pattern's own parameters
        if pattern.num_heads != self.num_heads:
            raise ParameterError("attention.num_heads", pattern.num_heads,
                                 f"num_heads={self.num_heads} of the encoder")

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_heads

    def pattern(self):
        """The attention pattern object described by `attention`."""
        from dnabird.attention import pattern_from_dict

        if not isinstance(self.attention, dict) or "type" not in self.attention:
            raise ParameterError("attention", self.attention, "a pattern dict with a 'type' key")
        return pattern_from_dict(dict(self.attention))

    # --- serialisation -------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict, *, source: str = "config") -> EncoderConfig:
        """Build a config from a mapping; unknown keys fail by name (`source` names the file)."""
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: expected a mapping of encoder settings, got {type(data).__name__}")
        reject_unknown_keys(cls, data, source)
        return cls(**data)

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
    settings = dict(vocab_size=32000, hidden_size=768, num_layers=12, num_heads=12, intermediate_size=3072,
                    max_positions=4096, attention_dropout=SPARSE_ATTENTION_DROPOUT,
                    attention={"type": "bigbird_itc", "num_heads": 12, "block_size": 64, "window_blocks": 3,
                               "num_random_blocks": 3, "random_mode": "uniform"})
    settings.update(overrides)
    return EncoderConfig(**settings)


def tiny(**overrides) -> EncoderConfig:
    """A 2-layer, 128-wide, 4-head ITC encoder for tests and demos (4096 positions, 512-token vocab)."""
    settings = dict(vocab_size=512, hidden_size=128, num_layers=2, num_heads=4, intermediate_size=256,
                    max_positions=4096, attention_dropout=SPARSE_ATTENTION_DROPOUT,
                    attention={"type": "bigbird_itc", "num_heads": 4, "block_size": 64, "window_blocks": 3,
                               "num_random_blocks": 3, "random_mode": "uniform"})
    settings.update(overrides)
    return EncoderConfig(**settings)


PRESETS = {"bigbird-base": bigbird_base, "tiny": tiny}


def preset(name: str, **overrides) -> EncoderConfig:
    """A named preset (`bigbird-base` or `tiny`) with optional field overrides."""
    if name not in PRESETS:
        raise ParameterError("preset", name, f"one of {sorted(PRESETS)}")
    return PRESETS[name](**overrides)
