"""Checkpoint directories: `config.json` + `model.safetensors` (+ tokenizer files, + optional `task.json`).

Loading never unpickles (safetensors only). Every failure raises `CheckpointError` naming the file or
tensor at fault. Writes go to a temporary directory that is renamed into place when complete.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from dnabird import __version__
from dnabird.errors import CheckpointError, ConfigError, InputFormatError, ParameterError, reject
from dnabird.io import follow_umask
from dnabird.model.config import EncoderConfig
from dnabird.model.task_spec import TaskSpec

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
TASK_FILE = "task.json"
TASK_HEADS = {"classifier", "span"}  # weights of a fine-tuned head (SequenceClassifier, SpanExtractor)

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class LoadReport:
    """Which tensors a partial load took from the checkpoint, left out, and initialised afresh."""

    loaded: tuple[str, ...]
    dropped: tuple[str, ...]
    initialised: tuple[str, ...]

    def __str__(self) -> str:
        return (f"loaded {len(self.loaded)} tensors; dropped {len(self.dropped)} "
                f"({', '.join(self.dropped) or 'none'}); freshly initialised {len(self.initialised)} "
                f"({', '.join(self.initialised) or 'none'})")


def save_checkpoint(model: torch.nn.Module, directory: str | os.PathLike, *,
                    tokenizer_files: tuple[str | os.PathLike, ...] = (),
                    task: TaskSpec | None = None) -> Path:
    """Write `model` (which carries `.config`) to `directory`, replacing it atomically if it exists."""
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        model.config.save(tmp / CONFIG_FILE)
        tensors = {name: t.detach().to("cpu").contiguous() for name, t in model.state_dict().items()}
        save_file(tensors, tmp / WEIGHTS_FILE, metadata={"format": "pt", "dnabird": __version__})
        for file in tokenizer_files:
            shutil.copy2(file, tmp / Path(file).name)
        if task is not None:
            task.save(tmp / TASK_FILE)
        follow_umask(tmp)
        if directory.exists():
            old = directory.with_name(f".{directory.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            directory.rename(old)
            tmp.rename(directory)
            shutil.rmtree(old)
        else:
            tmp.rename(directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


def read_config(directory: str | os.PathLike) -> EncoderConfig:
    """The `EncoderConfig` stored in a checkpoint directory."""
    path = require_file(directory, CONFIG_FILE)
    try:
        return EncoderConfig.load(path)
    except (ConfigError, ParameterError) as err:
        raise CheckpointError(f"{path}: invalid encoder config: {err}") from None


def read_task(directory: str | os.PathLike) -> TaskSpec | None:
    """The `TaskSpec` in `task.json`, or None when the checkpoint has none."""
    path = Path(directory) / TASK_FILE
    if not path.exists():
        return None
    try:
        return TaskSpec.load(path)
    except ConfigError as err:
        raise CheckpointError(str(err)) from None


def read_tokenizer(directory: str | os.PathLike, tokenizer_class=None):
    """The tokenizer saved in the checkpoint directory: the DNA tokenizer (one sentencepiece `.model` file, or a
    Hugging Face `tokenizer.json` with `special_tokens_map.json`: `dnabird.data.tokenizer.load_tokenizer`), or with
    `tokenizer_class` a task's own (e.g. `TextTokenizer`) read from its one `.model` file."""
    from dnabird.data.tokenizer import load_tokenizer

    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointError(f"{directory}: checkpoint directory not found")
    models = sorted(directory.glob("*.model"))
    if tokenizer_class is not None and len(models) != 1:
        raise CheckpointError(f"{directory}: expected one tokenizer .model file, found {len(models)}")
    if not models and not (directory / "tokenizer.json").is_file():
        raise CheckpointError(
            f"{directory}: no tokenizer (a .model file or tokenizer.json): scoring, fine-tuning and evaluation "
            "encode DNA with the tokenizer the model was trained with. Copy its tokenizer.json and "
            "special_tokens_map.json (or its .model file) into this directory, or import again with "
            "`dnabird import-hf SOURCE OUT --tokenizer PATH`")
    try:
        return load_tokenizer(directory) if tokenizer_class is None else tokenizer_class.load(models[0])
    except InputFormatError as err:
        raise CheckpointError(str(err)) from None


def read_tensors(directory: str | os.PathLike) -> dict[str, torch.Tensor]:
    """All tensors of `model.safetensors`; a truncated or corrupt file raises `CheckpointError`."""
    path = require_file(directory, WEIGHTS_FILE)
    try:
        return load_file(path)
    except (SafetensorError, OSError, ValueError, RuntimeError) as err:
        raise CheckpointError(f"{path}: corrupt or truncated safetensors file ({err})") from None


def load_weights(model: torch.nn.Module, tensors: dict[str, torch.Tensor], *, source: str = WEIGHTS_FILE,
                 strict: bool = True) -> LoadReport:
    """Copy `tensors` into `model`, checking names and shapes.

    strict: missing or unexpected keys raise; otherwise they are reported (dropped / left initialised).
    """
    expected = model.state_dict()
    for name, tensor in tensors.items():
        if name in expected and tuple(tensor.shape) != tuple(expected[name].shape):
            raise CheckpointError(f"{source}: tensor {name!r} has shape {tuple(tensor.shape)}, "
                                  f"the model expects {tuple(expected[name].shape)}")
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if strict and (missing or unexpected):
        raise CheckpointError(f"{source}: state does not match the model: missing keys {missing[:10]}"
                              f"{' …' if len(missing) > 10 else ''}, unexpected keys {unexpected[:10]}"
                              f"{' …' if len(unexpected) > 10 else ''}")
    loaded = {k: v for k, v in tensors.items() if k in expected}
    model.load_state_dict(loaded, strict=False)
    return LoadReport(tuple(sorted(loaded)), tuple(unexpected), tuple(missing))


def load_checkpoint(directory: str | os.PathLike) -> torch.nn.Module:
    """The model in `directory`: its task's model if it has a task.json (`model_for_task`), else a
    `CausalLanguageModel` for a causal config, else a `PretrainingModel` (with NSP if the weights have it)."""
    from dnabird.model.heads import CausalLanguageModel, PretrainingModel, model_for_task

    config, task, tensors = read_config(directory), read_task(directory), read_tensors(directory)
    heads = sorted({name.split(".")[0] for name in tensors} & TASK_HEADS)
    if task is None and heads:
        raise CheckpointError(f"{Path(directory) / TASK_FILE}: missing: the weights hold a fine-tuned head "
                              f"({', '.join(f'{h}.*' for h in heads)}) whose outputs task.json describes; copy it "
                              "from the fine-tuning run's model folder")
    if task is not None:
        model = model_for_task(config, task)
    elif config.causal:
        model = CausalLanguageModel(config)
    else:
        model = PretrainingModel(config, nsp="nsp.weight" in tensors)
    load_weights(model, tensors, source=str(Path(directory) / WEIGHTS_FILE))
    return model


def load_encoder_for_finetuning(directory: str | os.PathLike, head: TaskSpec, *, seed: int = 0,
                                config: EncoderConfig | None = None) -> tuple[torch.nn.Module, LoadReport]:
    """The model of `head` (`model_for_task`) whose encoder (and [CLS] pooler, if it pools [CLS]) comes from the
    checkpoint in `directory`, its new head initialised from `seed`; and the (logged) `LoadReport`. A Longformer
    pattern's global projections the checkpoint lacks start as copies of the local ones (`add_global_copies`).
    `config`: the encoder's config, the stored one with changes that leave the weights' shapes alone (e.g. the
    fine-tuning dropout: `build_encoder_config(read_config(directory), dropout=...)`); None: the stored one."""
    from dnabird.model.heads import model_for_task

    reject(not isinstance(head, TaskSpec), "head", head, "a TaskSpec describing the new head")
    config = read_config(directory) if config is None else config
    model = model_for_task(config, head, seed=seed)
    stored = read_tensors(directory)
    copied = add_global_copies(stored, model)   # a Longformer pattern on an encoder pretrained without one
    if len(copied) > len(stored):
        log.info("fine-tuning from %s: %d global attention projections start as copies of the local ones",
                 directory, len(copied) - len(stored))
    encoder_keys = {k for k in model.state_dict() if k.startswith("encoder.")}
    # the pooler too is dropped when the new head pools the mean state (`pooling="mean"`)
    tensors = {k: v for k, v in copied.items() if k in encoder_keys}
    if encoder_keys - set(tensors):
        raise CheckpointError(f"{Path(directory) / WEIGHTS_FILE}: encoder tensors missing: "
                              f"{sorted(encoder_keys - set(tensors))[:10]}")
    report = load_weights(model, tensors, source=str(Path(directory) / WEIGHTS_FILE), strict=False)
    report = dataclasses.replace(report, dropped=tuple(sorted(set(stored) - set(tensors))))
    log.info("fine-tuning from %s: %s", directory, report)
    return model, report


def read_json(path: Path):
    """The JSON value in file `path`; `CheckpointError` naming it when that is not valid JSON."""
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CheckpointError(f"{path}: not valid JSON ({err})") from None


def add_global_copies(tensors: dict[str, torch.Tensor], model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """`tensors` with a copy of the local Q/K/V for each Longformer global projection of `model` they lack
    (Longformer's and LED's initialisation of global attention)."""
    copies = {name: tensors[name.replace(".global_", ".")].clone() for name in model.state_dict()
              if ".global_" in name and name not in tensors and name.replace(".global_", ".") in tensors}
    return {**copies, **tensors}


def require_file(directory: str | os.PathLike, name: str, kind: str = "checkpoint") -> Path:
    """`directory / name`; a `CheckpointError` naming the directory (a `kind` directory) or file if absent."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointError(f"{directory}: {kind} directory not found")
    path = directory / name
    if not path.is_file():
        raise CheckpointError(f"{path}: missing from the {kind} directory")
    return path
