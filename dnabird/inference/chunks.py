"""A long run saved chunk by chunk, so an interrupted run, rerun the same way, continues where it stopped.

A run writing `OUT` keeps its work in `OUT.partial/`: `run.json`, the run's fingerprint (plain JSON: its
settings and `input_fingerprints` of its files), then one file per chunk (`chunk_000000.h5` …), each
written atomically, so a chunk is on disk complete or not at all (`save_frames` / `load_frames` keep tables
in one exactly). `PartialRun.resume_point` opens that
folder: it starts one, or finds the complete chunks of a run with the same fingerprint; a fingerprint that
differs is refused naming what differs (`restart` discards it instead). Once the outputs are written from
the chunk files, `PartialRun.remove` deletes the folder. Under torchrun rank 0 opens the folder and every
rank gets its answer.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import torch

from dnabird.errors import OutputPathError
from dnabird.io import atomic_output, file_fingerprint, write_json_atomic
from dnabird.train import distributed

_PARTIAL_FILE = re.compile(r"run\.json|chunk_\d{6,}\.h5|\..+\.tmp")


@dataclass(frozen=True)
class PartialRun:
    """The files of a chunked run writing `out`: its partial folder, its chunk files and the files beside
    `out`. `kept`: names of other files the run saves in its partial folder (e.g. "background.h5")."""

    out: Path
    kept: tuple[str, ...] = ()

    def beside(self, suffix: str) -> Path:
        """The file `out` + `suffix` (e.g. ".json": the run's record)."""
        return self.out.with_name(self.out.name + suffix)

    @property
    def record(self) -> Path:
        return self.beside(".json")

    @property
    def partial(self) -> Path:
        return self.beside(".partial")

    def chunk(self, number: int) -> Path:
        return self.partial / f"chunk_{number:06d}.h5"

    def resume_point(self, identity: dict, restart: bool, ctx: distributed.Context) -> tuple[int, set[str]]:
        """The number of complete chunks and the `kept` files present, found on rank 0 (`open`) and shared
        with every rank; its refusal is raised on every rank."""
        done, present, problem = 0, set(), None
        if ctx.is_main:
            try:
                done, present = self.open(identity, restart)
            except OutputPathError as err:
                problem = str(err)
        if ctx.distributed:
            shared = [done, present, problem]
            torch.distributed.broadcast_object_list(shared, src=0)
            done, present, problem = shared
        if problem is not None:
            distributed.teardown(ctx)
            raise OutputPathError(problem)
        return done, present

    def open(self, identity: dict, restart: bool) -> tuple[int, set[str]]:
        """The number of complete chunks of the partial run and the `kept` files it holds — (0, set()) after
        starting one; `OutputPathError` when its fingerprint differs from `identity` (unless `restart`) or
        the folder holds files that are not a partial run's."""
        folder, run = self.partial, self.partial / "run.json"
        if folder.exists():
            strangers = [p.name for p in folder.iterdir()
                         if not (p.is_file() and (_PARTIAL_FILE.fullmatch(p.name) or p.name in self.kept))]
            if not folder.is_dir() or strangers:
                raise OutputPathError(f"{folder}: holds files that are not a dnabird partial run ({strangers[:3]}); "
                                      "move it away or choose another output path")
            recorded = json.loads(run.read_text()) if run.is_file() else None
            if recorded is not None and recorded != identity and not restart:
                raise OutputPathError(f"{folder}: holds a partial run with other settings or inputs (differ: "
                                      f"{', '.join(differences(recorded, identity))}); rerun the command that "
                                      "started it to continue it, or pass --restart (restart=True) to discard it")
            if recorded == identity and not restart:
                done = 0
                while self.chunk(done).is_file():
                    done += 1
                return done, {name for name in self.kept if (folder / name).is_file()}
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        write_json_atomic(run, identity)
        return 0, set()

    def remove(self) -> None:
        """Delete the partial folder (its outputs are written)."""
        shutil.rmtree(self.partial)


def input_fingerprints(files: dict[str, str | os.PathLike], model: str | os.PathLike | None = None) -> dict:
    """`dnabird.io.file_fingerprint` of each named file, and of every file of the checkpoint folder `model`
    (named "model/<file>")."""
    if model is not None:
        files = {**files, **{f"model/{p.name}": p for p in sorted(Path(model).iterdir()) if p.is_file()}}
    return {name: file_fingerprint(path) for name, path in files.items()}


def differences(recorded, current, at: str = "") -> list[str]:
    """The dotted keys whose values differ between two fingerprints."""
    if not (isinstance(recorded, dict) and isinstance(current, dict)):
        return [] if recorded == current else [at or "fingerprint"]
    return [name for key in sorted(set(recorded) | set(current))
            for name in differences(recorded.get(key), current.get(key), f"{at}.{key}" if at else key)]


def save_frames(path: str | os.PathLike, frames: dict[str, pd.DataFrame], **attributes) -> None:
    """Tables (numbers, flags and strings; every column of one type) and JSON `attributes` in one HDF5 file,
    written atomically; `load_frames` reads them back exactly (float64 stays float64)."""
    with atomic_output(path) as tmp, h5py.File(tmp, "w") as out:
        for key, value in attributes.items():
            out.attrs[key] = json.dumps(value)
        for name, frame in frames.items():
            group = out.create_group(name)
            group.attrs["columns"] = json.dumps([str(c) for c in frame.columns])
            for n, column in enumerate(frame.columns):
                values = frame[column].to_numpy()
                if values.dtype == object:
                    group.create_dataset(str(n), data=values.astype(str).astype(object), dtype=h5py.string_dtype())
                else:
                    group.create_dataset(str(n), data=values)


def load_frames(path: str | os.PathLike) -> tuple[dict[str, pd.DataFrame], dict]:
    """The tables and attributes `save_frames` wrote."""
    with h5py.File(path, "r") as stored:
        frames = {}
        for name, group in stored.items():
            columns = json.loads(group.attrs["columns"])
            data = {c: (group[str(n)].asstr()[:].astype(object) if h5py.check_string_dtype(group[str(n)].dtype)
                        else np.asarray(group[str(n)][:])) for n, c in enumerate(columns)}
            frames[name] = pd.DataFrame(data, columns=columns)
        return frames, {key: json.loads(value) for key, value in stored.attrs.items()}
