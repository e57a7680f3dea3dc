"""The one attention core: patterns (what may attend to what) and the `attention` call (how)."""

from dnabird.attention.core import AttentionCall, attention
from dnabird.attention.linear import Performer, ReluLinear
from dnabird.attention.patterns import (
    BigBirdETC,
    BigBirdITC,
    BlockLayout,
    Full,
    Longformer,
    Pattern,
    pattern_from_dict,
)

__all__ = ["AttentionCall", "BigBirdETC", "BigBirdITC", "BlockLayout", "Full", "Longformer", "Pattern", "Performer",
           "ReluLinear", "attention", "pattern_from_dict"]
