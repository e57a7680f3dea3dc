"""Compute backends of the attention call.

Each backend declares why it refuses a call (`refusal_reasons`); "auto" takes the first
backend of the device's preference list that accepts, and a forced backend that refuses
raises `BackendUnavailableError` with its reasons — nothing falls back silently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dnabird.attention.backends.base import Backend
from dnabird.attention.backends.dense import DenseBackend
from dnabird.attention.backends.flex import FlexBackend
from dnabird.attention.backends.sdpa import SdpaBackend
from dnabird.attention.backends.xformers import XformersBackend
from dnabird.errors import BackendUnavailableError, ParameterError

if TYPE_CHECKING:
    from dnabird.attention.core import AttentionCall

BACKENDS: dict[str, Backend] = {b.name: b for b in (SdpaBackend(), XformersBackend(), FlexBackend(),
                                                  DenseBackend())}

# "auto" preference per device type; flex is opt-in and the dense reference is never a default.
# On CUDA, xformers when it imports (the rule; still to be confirmed by benchmarks/gpu_attention.py).
AUTO_ORDER = {"cuda": ("xformers", "sdpa"), "cpu": ("sdpa",)}


def select_backend(call: AttentionCall, name: str = "auto") -> Backend:
    """The backend that will run `call`: the named one, or the first acceptable one for "auto"."""
    if name != "auto" and name not in BACKENDS:
        raise ParameterError("backend", name, f"'auto' or one of {sorted(BACKENDS)}")
    reasons = []
    for candidate in AUTO_ORDER.get(call.q.device.type, ("sdpa",)) if name == "auto" else (name,):
        refusals = BACKENDS[candidate].refusal_reasons(call)
        if not refusals:
            return BACKENDS[candidate]
        reasons += [f"{candidate}: {r}" for r in refusals] if name == "auto" else refusals
    raise BackendUnavailableError(name, reasons)
