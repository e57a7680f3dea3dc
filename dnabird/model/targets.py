"""`TargetTransform`: how a regression head's targets were changed for training, recorded in task.json, and its
inverse, which brings the head's outputs back to the user's scale.

Forward (the user's targets y → the training scale t): `log1p` when set, then `(t − mean) / std` per target
when standardised. The head's output o relates to t through `link`: "identity" (a squared-error loss: o
estimates t) or "exp" (a Poisson loss on log-rate outputs: exp(o) estimates t). `inverse(o)` undoes all three,
so a prediction comes back in y's units; a variant's regression effect is inverse(o_ALT) − inverse(o_REF).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dnabird.errors import ConfigError

LINKS = ("identity", "exp")


@dataclass(frozen=True)
class TargetTransform:
    """log1p: targets were log1p-transformed. mean, std: per-target standardisation (None: not standardised).
    link: "identity" or "exp" (module docstring)."""

    log1p: bool = False
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None
    link: str = "identity"

    def __post_init__(self):
        def bad(name, expected):
            raise ConfigError(f"task.json: target_transform.{name}={getattr(self, name)!r} is invalid: "
                              f"expected {expected}")

        if not isinstance(self.log1p, bool):
            bad("log1p", "true or false")
        if self.link not in LINKS:
            bad("link", f"one of {LINKS}")
        if (self.mean is None) != (self.std is None):
            bad("std" if self.std is None else "mean", "both mean and std, or neither")
        if self.mean is not None:
            object.__setattr__(self, "mean", tuple(float(x) for x in self.mean))
            object.__setattr__(self, "std", tuple(float(x) for x in self.std))
            if len(self.mean) != len(self.std) or not self.mean:
                bad("std", f"one value per target, as mean has ({len(self.mean)})")
            if not all(math.isfinite(x) for x in self.mean):
                bad("mean", "finite numbers")
            if not all(math.isfinite(x) and x > 0 for x in self.std):
                bad("std", "finite positive numbers")

    @property
    def scale(self) -> str:
        """A short name of the training scale, e.g. "log1p_standardised" ("identity" when nothing changes)."""
        parts = (["log1p"] if self.log1p else []) + (["standardised"] if self.mean is not None else [])
        return "_".join(parts) or "identity"

    def forward(self, targets: np.ndarray) -> np.ndarray:
        """Targets [N, K] (or [N] for one target) in the user's scale → the training scale."""
        t = np.asarray(targets, dtype=np.float64)
        if self.log1p:
            t = np.log1p(t)
        if self.mean is not None:
            t = (t - np.asarray(self.mean)) / np.asarray(self.std)
        return t

    def inverse(self, outputs: np.ndarray) -> np.ndarray:
        """Head outputs [N, K] (or [N]) → predictions in the user's scale (float64)."""
        y = np.asarray(outputs, dtype=np.float64)
        return self.restore(np.exp(y) if self.link == "exp" else y)

    def restore(self, targets: np.ndarray) -> np.ndarray:
        """Targets in the training scale [N, K] (or [N]) → the user's scale (float64): `forward`'s inverse."""
        y = np.asarray(targets, dtype=np.float64)
        if self.mean is not None:
            y = y * np.asarray(self.std) + np.asarray(self.mean)
        if self.log1p:
            y = np.expm1(y)
        return y

    def to_dict(self) -> dict:
        return {"log1p": self.log1p, "mean": None if self.mean is None else list(self.mean),
                "std": None if self.std is None else list(self.std), "link": self.link}

    @classmethod
    def from_dict(cls, data: dict | None) -> TargetTransform:
        """From task.json's `target_transform` object (None: the identity)."""
        if data is None:
            return cls()
        if not isinstance(data, dict) or set(data) - {"log1p", "mean", "std", "link"}:
            raise ConfigError(f"task.json: target_transform={data!r} is invalid: expected an object with keys "
                              "log1p, mean, std, link")
        return cls(**data)
