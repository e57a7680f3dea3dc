"""`predict_to_files`: `predict` written to files chunk by chunk; an interrupted run, rerun the same way,
continues where it stopped and writes the same bytes.

Inputs are predicted in chunks of `chunk_rows` (in input order); each chunk's rows are saved in `OUT.partial/`
as one file written atomically (`dnabird.inference.chunks`: the fingerprint in run.json — settings, the
model, genome and input files, chunking, batch size, device and number of processes — checked by a rerun,
which predicts only the chunks still missing). When every chunk is done the outputs are written from the
chunk files: OUT (a TSV, parquet or HDF5 table: one row per prediction, one column per output),
OUT.unpredicted.tsv (the inputs not predicted, with a reason), for tiles OUT.tracks/ (a bigWig and a bedGraph
per output, `dnabird.prediction.tracks`), and last OUT.json (the settings, the scale, counts and file names);
then `OUT.partial/` is removed. Under torchrun every rank predicts its inputs of each chunk and rank 0 writes.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dnabird.errors import check_int, reject
from dnabird.inference.chunks import PartialRun, input_fingerprints, load_frames, save_frames
from dnabird.inference.tables import append_rows, hdf5_output, string_dataset, write_table, write_tsv_tables
from dnabird.io import check_outputs, sha256_hex, write_json_atomic
from dnabird.prediction.run import PredictionRun, prepare
from dnabird.progress import progress_bar
from dnabird.train import distributed

FORMATS = ("tsv", "parquet", "hdf5")
CHUNK_ROWS = 1000  # inputs per chunk: the most work an interruption loses


@dataclass(frozen=True)
class PredictionPaths(PartialRun):
    """The files a run writes beside its output `out`, and the folder of its partial run."""

    @property
    def unpredicted(self) -> Path:
        return self.beside(".unpredicted.tsv")

    @property
    def tracks(self) -> Path:
        return self.beside(".tracks")


def output_format(path: str | os.PathLike, given: str | None = None) -> str:
    """`given`, else from the file name: .parquet → parquet, .h5/.hdf5 → hdf5, anything else → tsv."""
    if given:
        reject(given not in FORMATS, "format", given, f"one of {FORMATS}")
        return given
    name = str(path).lower()
    return "parquet" if name.endswith(".parquet") else "hdf5" if name.endswith((".h5", ".hdf5")) else "tsv"


def predict_to_files(model: str | os.PathLike, out: str | os.PathLike, *,
                     sequences: str | os.PathLike | Sequence[str] | None = None,
                     regions: str | os.PathLike | None = None, tiles: bool | Sequence[str] = False,
                     genome: str | os.PathLike | None = None, format: str | None = None,
                     chunk_rows: int = CHUNK_ROWS, restart: bool = False, progress: bool = True,
                     **options) -> dict | None:
    """Predict with the checkpoint directory `model` as `predict` does (its keyword arguments `options`
    takes: step, strand, sequence_column, id_column, batch_size, device, precision) and write `out` in
    `format` ("tsv", "parquet" or "hdf5"; default from the name), `out`.unpredicted.tsv, for tiles
    `out`.tracks/, and `out`.json, resuming a partial run of the same settings (module docstring). restart:
    discard a partial run with other settings instead of refusing. Returns what `out`.json holds (on rank 0;
    None on other ranks)."""
    kind = output_format(out, format)
    check_int("chunk_rows", chunk_rows, 1)
    reject(not isinstance(model, (str, os.PathLike)) or not Path(model).is_dir(), "model", model,
           "a checkpoint directory")
    paths = PredictionPaths(Path(out))
    files = {name: Path(value) for name, value in (("sequences", sequences), ("regions", regions),
                                                   ("genome", genome)) if isinstance(value, (str, os.PathLike))}
    check_outputs([paths.out, paths.unpredicted, paths.record], folders=[paths.partial, paths.tracks],
                  inputs=[*files.values(), *([f"{genome}.fai"] if genome is not None else []),
                          *(p for p in Path(model).iterdir())])
    run = prepare(model, sequences=sequences, regions=regions, tiles=tiles, genome=genome, **options)
    identity = _fingerprint(run, model, files, sequences, tiles, chunk_rows)
    done, _ = paths.resume_point(identity, restart, run.ctx)
    chunks = done
    with progress_bar(enabled=progress and run.ctx.is_main, desc=f"predicting {run.setup.kind}",
                      unit=" inputs") as bar:
        for number, items in _input_chunks(run.inputs(), chunk_rows, done):
            part = run.merged(run.predict(run.mine(items), bar))
            if run.ctx.is_main:
                save_frames(paths.chunk(number), {"rows": part.table(), "unpredicted": part.unpredicted},
                            summary=part.summary())
            chunks = number + 1
    record = _write_outputs(paths, kind, run, chunks) if run.ctx.is_main else None
    distributed.teardown(run.ctx)
    return record


def _input_chunks(items: Iterable, chunk_rows: int, start: int) -> Iterator[tuple[int, Iterator]]:
    """(chunk number, its inputs) for chunks from `start` on; no inputs at all give one empty chunk 0, so
    every output has its header."""
    items = itertools.islice(items, start * chunk_rows, None)
    empty = True
    for number, group in itertools.groupby(enumerate(items, start * chunk_rows), key=lambda x: x[0] // chunk_rows):
        empty = False
        yield number, (item for _, item in group)
    if empty and start == 0:
        yield 0, iter(())


def _fingerprint(run: PredictionRun, model, files: dict[str, Path], sequences, tiles, chunk_rows: int) -> dict:
    """What a partial run must share with this one to be continued by it, as plain JSON values."""
    given = {} if sequences is None or isinstance(sequences, (str, os.PathLike)) else \
        {"sequences_sha256": sha256_hex("\n".join(sequences))}
    return {"settings": {k: v for k, v in run.settings.items() if k != "model"},
            "inputs": input_fingerprints(files, model), **given,
            "tiles": tiles if isinstance(tiles, bool) else list(tiles), "chunk_rows": chunk_rows,
            "batch_size": run.batch_size, "device": run.ctx.device.type, "processes": run.ctx.world_size}


def _write_outputs(paths: PredictionPaths, kind: str, run: PredictionRun, chunks: int) -> dict:
    """The outputs from the chunk files; OUT.json last, then the partial run removed. Returns OUT.json's."""
    files = [paths.chunk(n) for n in range(chunks)]

    def tables(name: str) -> Iterator[pd.DataFrame]:
        return (load_frames(path)[0][name] for path in files)

    if kind == "hdf5":
        _write_hdf5(tables("rows"), tables("unpredicted"), paths.out, run)
    else:
        write_table(tables("rows"), paths.out, kind, na_rep="NA")
    write_tsv_tables(tables("unpredicted"), paths.unpredicted)
    outputs, scale = list(run.outputs), run.setup.scale
    record = {"settings": run.settings, "scale": scale, "outputs": outputs,
              "summary": _summed([load_frames(path)[1]["summary"] for path in files]),
              "files": {"table": paths.out.name, "unpredicted": paths.unpredicted.name}}
    if run.setup.kind == "tiles":
        from dnabird.prediction.tracks import write_tracks

        tiles = pd.concat(list(tables("rows")), ignore_index=True)
        tracks = write_tracks(tiles, outputs, scale, run.genome.lengths, paths.tracks)
        record["files"]["tracks"] = {"folder": paths.tracks.name, "by_output": tracks}
    write_json_atomic(paths.record, record)
    paths.remove()
    return record


def _write_hdf5(rows: Iterable[pd.DataFrame], unpredicted: Iterable[pd.DataFrame], path: Path,
                run: PredictionRun) -> None:
    """/values [rows, outputs] float64 in the run's scale, /outputs, /rows/<column> and /unpredicted/<column>
    (one dataset per table column); the settings as a JSON attribute."""
    outputs = list(run.outputs)
    with hdf5_output(path, run.settings) as out:
        string_dataset(out, "outputs", outputs)
        out.attrs["scale"] = run.setup.scale
        for table in rows:
            append_rows(out, "values", table[outputs].to_numpy("float64").reshape(len(table), len(outputs)))
            _append_columns(out, "rows", table.drop(columns=outputs))
        for table in unpredicted:
            _append_columns(out, "unpredicted", table)


def _append_columns(out, group: str, table: pd.DataFrame) -> None:
    for column in table.columns:
        values = table[column].to_numpy()
        append_rows(out, f"{group}/{column}", values.astype(str).astype(object) if values.dtype == object else values)


def _summed(summaries: list[dict]) -> dict:
    """`Predictions.summary` of the chunks together (the counts add)."""
    total = {key: sum(s[key] for s in summaries) for key in summaries[0] if key != "unpredicted_by_reason"}
    reasons = sum((Counter(s["unpredicted_by_reason"]) for s in summaries), Counter())
    return {**total, "unpredicted_by_reason": dict(sorted(reasons.items()))}
