"""Read what a Hugging Face `save_pretrained` directory holds: `config.json` and the weights.

Weights come from `model.safetensors` or, as older hub checkpoints store them, `pytorch_model.bin` (each
possibly sharded, with its `.index.json`). A `.bin` file is read with `torch.load(weights_only=True)`:
tensors and plain containers only; a pickle that needs any other object (code) is refused, naming the file.
"""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

from dnabird.errors import CheckpointError
from dnabird.model.checkpoint import read_json, require_file

CONFIG_FILE = "config.json"
SAFETENSORS_FILE = "model.safetensors"
PICKLE_FILE = "pytorch_model.bin"


def read_hf_config(directory: str | Path) -> dict:
    """The `config.json` of a Hugging Face directory as a dict (`CheckpointError` naming it if absent or bad)."""
    path = require_file(directory, CONFIG_FILE, "Hugging Face")
    config = read_json(path)
    if not isinstance(config, dict):
        raise CheckpointError(f"{path}: expected a JSON object of model settings")
    return config


def weight_files(directory: Path) -> list[Path]:
    """The weight files of a directory: safetensors first, else `pytorch_model.bin` (each single or sharded)."""
    for name in (SAFETENSORS_FILE, PICKLE_FILE):
        index = directory / f"{name}.index.json"
        if index.is_file():
            try:
                shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as err:
                raise CheckpointError(f"{index}: not a weight index (no weight_map: {err})") from None
            return [directory / shard for shard in shards]
        if (directory / name).is_file():
            return [directory / name]
    raise CheckpointError(f"{directory}: no weights: expected {SAFETENSORS_FILE} or {PICKLE_FILE} "
                          "(or a sharded .index.json of either)")


def read_weight_file(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of one safetensors or pickled (`.bin`) weight file; anything else is a `CheckpointError`."""
    if not path.is_file():
        raise CheckpointError(f"{path}: missing (named by the weight index)")
    if path.suffix == ".safetensors":
        try:
            return load_file(path)
        except (SafetensorError, OSError) as err:
            raise CheckpointError(f"{path}: corrupt or truncated safetensors file ({err})") from None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        raise CheckpointError(f"{path}: refused: torch.load(weights_only=True) reads tensors and plain containers "
                              f"only, and this pickle needs more ({_reason(err)}); dnabird never unpickles code "
                              "from a weight file (convert it to safetensors where you trust it)") from None
    except (RuntimeError, EOFError, OSError, zipfile.BadZipFile, ValueError) as err:
        raise CheckpointError(f"{path}: corrupt or not a PyTorch weight file ({err})") from None
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                              for k, v in state.items()):
        raise CheckpointError(f"{path}: expected a state dict (tensor names -> tensors), got {type(state).__name__}")
    return state


def _reason(err: Exception) -> str:
    """The line of torch's weights-only refusal that says what the pickle asked for."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    said = [line for line in lines[1:] if not line.startswith(("Check the documentation", "Please file an issue"))]
    return " ".join(said) or (lines[0] if lines else "an unsupported object")


def read_hf_weights(directory: str | Path) -> tuple[dict[str, torch.Tensor], str]:
    """All tensors of a Hugging Face directory and a description of where they came from (for messages)."""
    files = weight_files(Path(directory))
    tensors = {name: tensor for path in files for name, tensor in read_weight_file(path).items()}
    return tensors, str(files[0]) if len(files) == 1 else f"{files[0].parent} ({len(files)} weight shards)"
