"""The bp per token of a checkpoint's tokenizer, which sizes default `mlm_llr` windows: a property of the
model and its tokenizer, never of the genome scored.

Stored as `bp_per_token.json` in the checkpoint directory (`{"bp_per_token": 4.1464, "source": "…"}`): the
pretrain recipe measures it on its held-out shards (else its training shards) when it saves the model;
`dnabird import-hf` stores the figure given with `--bp-per-token`, else the reference figure. A checkpoint
without the file (older ones, models passed loaded) gets the reference figure: the tokenizer's bp per token
on `REFERENCE_SEQUENCES` × `REFERENCE_BP` uniform pseudo-random bases (SHA-256 in counter mode, so the same
on every machine and version). Genome-trained tokenizers merge real DNA into longer pieces than random
sequence, so the reference figure errs on the small (safe) side.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
from pathlib import Path

from dnabird.errors import CheckpointError, reject
from dnabird.io import write_json_atomic

BP_PER_TOKEN_FILE = "bp_per_token.json"
REFERENCE_SEQUENCES, REFERENCE_BP = 64, 1000
REFERENCE_SOURCE = "reference: uniform random sequence"


@dataclasses.dataclass(frozen=True)
class BpPerToken:
    """A bp-per-token figure (rounded to 4 decimals) and where it came from."""

    value: float
    source: str

    def __post_init__(self):
        reject(not isinstance(self.value, (int, float)) or not math.isfinite(self.value) or self.value <= 0,
               "bp_per_token", self.value, "a positive number of bp per token")
        object.__setattr__(self, "value", round(float(self.value), 4))


def reference_sequences() -> list[str]:
    """`REFERENCE_SEQUENCES` sequences of `REFERENCE_BP` bases: SHA-256 of "dnabird bp-per-token reference
    {n}" for n = 0, 1, …, each byte giving four bases (two bits each, low bits first, 0-3 = A, C, G, T)."""
    bases, n = [], 0
    while len(bases) < REFERENCE_SEQUENCES * REFERENCE_BP:
        for byte in hashlib.sha256(f"dnabird bp-per-token reference {n}".encode()).digest():
            bases.extend("ACGT"[byte >> shift & 3] for shift in (0, 2, 4, 6))
        n += 1
    text = "".join(bases)
    return [text[i * REFERENCE_BP:(i + 1) * REFERENCE_BP] for i in range(REFERENCE_SEQUENCES)]


def reference_bp_per_token(tokenizer) -> BpPerToken:
    """The tokenizer's bp per token on the reference sequences (the fallback of a checkpoint without a figure)."""
    return BpPerToken(tokenizer.bp_per_token(reference_sequences()), REFERENCE_SOURCE)


def read_bp_per_token(directory: str | os.PathLike) -> BpPerToken | None:
    """The figure stored in a checkpoint directory, or None when it has none."""
    path = Path(directory) / BP_PER_TOKEN_FILE
    if not path.is_file():
        return None
    try:
        stored = json.loads(path.read_text())
        return BpPerToken(stored["bp_per_token"], str(stored["source"]))
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"{path}: not a bp-per-token record ({type(err).__name__}: {err}); expected "
                              '{"bp_per_token": <bp per token>, "source": "<where it came from>"}') from None


def write_bp_per_token(directory: str | os.PathLike, figure: BpPerToken) -> Path:
    """Store `figure` in a checkpoint directory (atomically)."""
    path = Path(directory) / BP_PER_TOKEN_FILE
    write_json_atomic(path, {"bp_per_token": figure.value, "source": figure.source})
    return path


def checkpoint_bp_per_token(tokenizer, directory: str | os.PathLike | None = None,
                            given: float | None = None) -> BpPerToken:
    """The figure that sizes windows: `given` (by the user), else the one stored in `directory`, else the
    tokenizer's reference figure."""
    if given is not None:
        return BpPerToken(given, "given")
    stored = read_bp_per_token(directory) if directory is not None else None
    return stored or reference_bp_per_token(tokenizer)
