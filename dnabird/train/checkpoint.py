"""Training checkpoints: one directory per step, written atomically, the last K kept, no pickle.

Layout of `<run>/checkpoints/step_00001000/`:
  model/             written by the caller's `save_model(model, dir)` (default: `model/model.safetensors`)
  optimizer.safetensors + optimizer.json   optimizer tensors, and its param groups / scalars as JSON
  rng_rank<R>.safetensors                  torch RNG states of each rank
  train_state.json                         step (= data position) and world size
Every rank writes into `.tmp-step_…`; rank 0 renames it once all have finished, so a directory named
`step_…` is always complete.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import safetensors.torch
import torch
from safetensors import SafetensorError

from dnabird.errors import CheckpointError
from dnabird.io import follow_umask
from dnabird.train import distributed

log = logging.getLogger(__name__)

PREFIX = "step_"
TRAIN_STATE = "train_state.json"
MODEL_DIR = "model"


def save_model_safetensors(model: torch.nn.Module, directory: Path) -> None:
    """Default model writer: the state dict as `directory/model.safetensors`."""
    directory.mkdir(parents=True, exist_ok=True)
    safetensors.torch.save_model(model, str(directory / "model.safetensors"))


def load_model_safetensors(model: torch.nn.Module, directory: Path) -> None:
    """Default model reader, the counterpart of `save_model_safetensors`; names mismatched tensors."""
    path = directory / "model.safetensors"
    tensors = _read_safetensors(path)
    expected = model.state_dict()
    for name, tensor in expected.items():
        if name not in tensors:
            raise CheckpointError(f"{path}: tensor {name!r} is missing (the model config changed?)")
        if tensors[name].shape != tensor.shape:
            raise CheckpointError(f"{path}: tensor {name!r} has shape {tuple(tensors[name].shape)}, "
                                  f"the model expects {tuple(tensor.shape)} (the model config changed?)")
    unexpected = sorted(set(tensors) - set(expected))
    if unexpected:
        raise CheckpointError(f"{path}: unexpected tensors {unexpected[:5]} (the model config changed?)")
    model.load_state_dict(tensors)


def checkpoint_dirs(root: Path) -> list[Path]:
    """Complete checkpoint directories under `root`, oldest first."""
    if not root.is_dir():
        return []
    return sorted((p for p in root.iterdir() if p.is_dir() and p.name.startswith(PREFIX)),
                  key=lambda p: int(p.name[len(PREFIX):]))


def latest(root: Path) -> Path | None:
    """The newest complete checkpoint under `root`, or None."""
    return next(reversed(checkpoint_dirs(root)), None)


def resumable(out_dir: str | os.PathLike) -> bool:
    """Whether run folder `out_dir` holds a checkpoint to resume from, its own or a training phase's
    (`phase_<k>/`, staged MLM); a pipeline stage resumes when it does."""
    out_dir = Path(out_dir)
    return any(out_dir.glob("checkpoints/step_*")) or any(out_dir.glob("phase_*/checkpoints/step_*"))


def save(root: Path, step: int, model: torch.nn.Module, optimizer: torch.optim.Optimizer, *,
         ctx: distributed.Context, keep_last: int,
         save_model: Callable[[torch.nn.Module, Path], None] = save_model_safetensors) -> Path:
    """Write the checkpoint after `step` optimizer steps; every rank must call it. Returns its path."""
    final = root / f"{PREFIX}{step:08d}"
    tmp = root / f".tmp-{final.name}"
    if ctx.is_main:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    distributed.barrier(ctx)
    rng = {"cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        rng["cuda"] = torch.cuda.get_rng_state()
    safetensors.torch.save_file(rng, str(tmp / f"rng_rank{ctx.rank}.safetensors"))
    if ctx.is_main:
        save_model(model, tmp / MODEL_DIR)
        tensors, meta = _flatten_optimizer(optimizer.state_dict())
        safetensors.torch.save_file(tensors, str(tmp / "optimizer.safetensors"))
        (tmp / "optimizer.json").write_text(json.dumps(meta))
        (tmp / TRAIN_STATE).write_text(json.dumps({"step": step, "world_size": ctx.world_size}, indent=2))
    distributed.barrier(ctx)
    if ctx.is_main:
        follow_umask(tmp)
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        for old in checkpoint_dirs(root)[:-keep_last]:
            shutil.rmtree(old)
    distributed.barrier(ctx)
    return final


def load(path: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, *,
         ctx: distributed.Context,
         load_model: Callable[[torch.nn.Module, Path], None] = load_model_safetensors) -> dict:
    """Restore model, optimizer and this rank's RNG from checkpoint `path`; returns its train state."""
    state_file = path / TRAIN_STATE
    if not state_file.is_file():
        raise CheckpointError(f"{path}: not a checkpoint ({TRAIN_STATE} is missing)")
    try:
        state = json.loads(state_file.read_text())
        meta = json.loads((path / "optimizer.json").read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise CheckpointError(f"{path}: unreadable checkpoint metadata ({err})") from err
    load_model(model, path / MODEL_DIR)
    tensors = _read_safetensors(path / "optimizer.safetensors")
    optimizer.load_state_dict(_unflatten_optimizer(tensors, meta))
    rng_file = path / f"rng_rank{ctx.rank}.safetensors"
    if state.get("world_size") != ctx.world_size or not rng_file.is_file():
        log.warning("%s was written by %s process(es), resuming with %d: RNG streams restart from the seed, "
                    "so the resumed run is not bit-identical", path, state.get("world_size"), ctx.world_size)
    else:
        rng = _read_safetensors(rng_file)
        torch.set_rng_state(rng["cpu"])
        if "cuda" in rng and torch.cuda.is_available():
            torch.cuda.set_rng_state(rng["cuda"])
    return state


def _read_safetensors(path: Path) -> dict[str, torch.Tensor]:
    if not path.is_file():
        raise CheckpointError(f"{path}: file is missing")
    try:
        return safetensors.torch.load_file(str(path))
    except (SafetensorError, OSError, ValueError) as err:
        raise CheckpointError(f"{path}: corrupt safetensors file ({err})") from err


def _flatten_optimizer(state_dict: dict) -> tuple[dict[str, torch.Tensor], dict]:
    """Split an optimizer state dict into safetensors-storable tensors and JSON-storable rest."""
    tensors, scalars = {}, {}
    for param_id, per_param in state_dict["state"].items():
        for key, value in per_param.items():
            if torch.is_tensor(value):
                tensors[f"{param_id}.{key}"] = value.detach().contiguous().cpu()
            else:
                scalars[f"{param_id}.{key}"] = value
    return tensors, {"param_groups": state_dict["param_groups"], "scalars": scalars}


def _unflatten_optimizer(tensors: dict[str, torch.Tensor], meta: dict) -> dict:
    state: dict[int, dict] = {}
    for flat, value in [*tensors.items(), *meta["scalars"].items()]:
        param_id, key = flat.split(".", 1)
        state.setdefault(int(param_id), {})[key] = value
    groups = meta["param_groups"]
    for group in groups:
        if "betas" in group:
            group["betas"] = tuple(group["betas"])
    return {"state": state, "param_groups": groups}
