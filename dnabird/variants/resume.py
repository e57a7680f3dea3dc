"""`score_variants_to_files`: score a VCF into output files chunk by chunk; an interrupted run, rerun the
same way, continues where it stopped.

Records are scored in chunks of `chunk_records`. Each chunk's scores are saved in `OUT.partial/` as one
file written atomically (`chunk_000000.h5` …, exact float64 values and the chunk's counts), so a chunk is
on disk complete or not at all. When every chunk is done the outputs (OUT, OUT.unscored.tsv, with a
background OUT.background.tsv, and last OUT.json) are written from the chunk files one at a time — memory
stays flat in the number of records — and `OUT.partial/` is removed. A rerun finds `OUT.partial/`, checks
its `run.json` fingerprint (the resolved settings; the model, genome, VCF and TSS files; the chunking;
the background; batch size, device and number of processes) and scores only the chunks still missing;
the outputs are byte-identical to an uninterrupted run's. A fingerprint that differs is refused, naming
what differs (`restart=True` discards the partial run). With `background=N` the background
(`dnabird.variants.background`) is scored first and saved (`background.h5`), so a resumed run reuses it;
every chunk is calibrated against it when the outputs are written. Under torchrun every rank scores its
records of each chunk (`ScoringSetup.mine`) and rank 0 writes; shared-pass groups are formed once from the
whole VCF (`ScoringSetup.pass_groups`), so they never depend on the chunking or the processes.
The partial folder, its fingerprint check and resume point are `dnabird.inference.chunks`'; the chunk
files and outputs, this module's.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

from dnabird.errors import check_int, reject
from dnabird.genome.reference import Genome
from dnabird.inference.chunks import PartialRun, input_fingerprints
from dnabird.io import atomic_output, write_json_atomic
from dnabird.progress import progress_bar
from dnabird.train import distributed
from dnabird.variants.background import check_background, score_background_with
from dnabird.variants.records import check_vcf_path, read_alleles
from dnabird.variants.score import ScoringSetup, prepare_scoring
from dnabird.variants.scores import SCORE_KINDS, SKIPPED_COLUMNS, UNIT_COLUMNS, VariantScores
from dnabird.variants.writers import (
    COLUMN_DTYPES,
    scored_kinds,
    write_hdf5,
    write_parquet,
    write_skipped,
    write_tsv,
    write_vcf,
)

FORMATS = ("tsv", "parquet", "hdf5", "vcf")
CHUNK_RECORDS = 1000  # VCF records per chunk: the most work an interruption loses
STORED = ("ref", "alt", "logit_diff")  # the arrays a chunk file keeps (the other kinds derive from them)
BACKGROUND_CHUNK = "background.h5"  # the background's scores, kept in the partial folder


@dataclass(frozen=True)
class OutputPaths(PartialRun):
    """The files a run writes beside its output `out`, and the folder of its partial run (which keeps the
    background's scores)."""

    kept: tuple[str, ...] = (BACKGROUND_CHUNK,)

    @property
    def unscored(self) -> Path:
        return self.beside(".unscored.tsv")

    @property
    def background(self) -> Path:
        return self.beside(".background.tsv")


def output_format(path: str | os.PathLike, given: str | None = None) -> str:
    """`given`, else from the file name: .h5/.hdf5 → hdf5, .parquet → parquet, .vcf/.vcf.gz → vcf, anything
    else → tsv."""
    if given:
        reject(given not in FORMATS, "format", given, f"one of {FORMATS}")
        return given
    name = str(path).lower()
    if name.endswith((".h5", ".hdf5")):
        return "hdf5"
    if name.endswith(".parquet"):
        return "parquet"
    return "vcf" if name.endswith((".vcf", ".vcf.gz", ".vcf.bgz")) else "tsv"


def score_variants_to_files(model: str | os.PathLike, genome: str | os.PathLike | Genome, vcf: str | os.PathLike,
                            out: str | os.PathLike, *, format: str | None = None,
                            tss: str | os.PathLike | None = None, background: int = 0, background_seed: int = 0,
                            chunk_records: int = CHUNK_RECORDS, restart: bool = False, progress: bool = True,
                            batch_size: int = 16, device: str = "auto", **settings) -> dict:
    """Score every ALT allele of the VCF `vcf` with the checkpoint directory `model` on the FASTA `genome`
    (as `score_variants`, whose keyword arguments `settings` takes: method, rc, window_bp, eval_length,
    flank_bp, on_ref_mismatch) and write `out` in `format` ("tsv", "parquet", "hdf5" or "vcf"; default from the name,
    `output_format`), `out`.unscored.tsv and `out`.json, resuming a partial run of the same settings
    (module docstring). background: N > 0 scores N background SNVs drawn with `background_seed`, writes
    them to `out`.background.tsv and adds each score's quantile among theirs to every output
    (`VariantScores.calibrate`). restart: discard a partial run with other settings instead of refusing.
    Returns what `out`.json holds (on rank 0; None on other ranks)."""
    kind = output_format(out, format)
    check_int("chunk_records", chunk_records, 1)
    reject(not isinstance(background_seed, int), "background_seed", background_seed, "an integer")
    reject(not isinstance(model, (str, os.PathLike)) or not Path(model).is_dir(), "model", model,
           "a checkpoint directory")
    reject(not isinstance(vcf, (str, os.PathLike)), "vcf", vcf, "a VCF file (plain or bgzip)")
    check_vcf_path(Path(vcf))
    paths = OutputPaths(Path(out))
    scoring = prepare_scoring(model, genome, tss=tss, batch_size=batch_size, device=device, **settings)
    ctx = scoring.ctx
    check_background(scoring, background)
    identity = _fingerprint(scoring, model, vcf, tss, chunk_records, background, background_seed)
    done, kept = paths.resume_point(identity, restart, ctx)
    has_background = BACKGROUND_CHUNK in kept
    if background and not has_background:
        scores = score_background_with(scoring, background, background_seed, progress)
        if ctx.is_main:
            _write_chunk(scores, paths.partial / BACKGROUND_CHUNK)
    chunks, groups = done, scoring.pass_groups(read_alleles(vcf))
    with progress_bar(enabled=progress and ctx.is_main, desc="scoring variants", unit=" windows") as bar:
        for number, alleles in _record_chunks(read_alleles(vcf), chunk_records, done):
            scores = scoring.merged(scoring.score(scoring.mine(alleles), bar, groups))
            if ctx.is_main:
                _write_chunk(scores, paths.chunk(number))
            chunks = number + 1
    record = _write_outputs(paths, kind, vcf, chunks, background, background_seed) if ctx.is_main else None
    distributed.teardown(ctx)
    return record


def _record_chunks(alleles, chunk_records: int, start: int):
    """(chunk number, its alleles) of records [n · chunk_records, (n + 1) · chunk_records) for n >= `start`;
    a VCF without records gives one empty chunk 0, so every output has its header."""
    empty = True
    for number, group in groupby(alleles, key=lambda allele: allele.record // chunk_records):
        empty = False
        if number >= start:
            yield number, group
    if empty and start == 0:
        yield 0, iter(())


def _fingerprint(scoring: ScoringSetup, model, vcf, tss, chunk_records: int, background: int, seed: int) -> dict:
    """What a partial run must share with this one to be continued by it, as plain JSON values."""
    files = {"genome": scoring.genome.path, "vcf": Path(vcf), **({"tss": Path(tss)} if tss is not None else {})}
    identity = {"settings": {k: v for k, v in scoring.settings.items() if k != "model"},
                "inputs": input_fingerprints(files, model),
                "chunk_records": chunk_records, "background": {"count": background, "seed": seed},
                "batch_size": scoring.batch_size, "device": scoring.ctx.device.type,
                "processes": scoring.ctx.world_size}
    return json.loads(json.dumps(identity, default=str))


def _write_chunk(scores: VariantScores, path: Path) -> None:
    """A chunk's scores, exactly (float64), with its table columns and counts, written atomically."""
    with atomic_output(path) as tmp, h5py.File(tmp, "w") as out:
        out.attrs["outputs"], out.attrs["groups"] = json.dumps(scores.outputs), json.dumps(scores.groups)
        out.attrs["settings"] = json.dumps(scores.settings, default=str)
        out.attrs["kinds"] = json.dumps(scored_kinds(scores))
        out.attrs["summary"] = json.dumps(scores.summary())
        for kind in STORED:
            out.create_dataset(kind, data=scores.array(kind).astype(np.float64))
        for name, table in (("units", scores.units), ("skipped", scores.skipped)):
            group = out.create_group(name)
            for column in table.columns:
                values = table[column].to_numpy(COLUMN_DTYPES.get(column, object))
                group.create_dataset(column, data=values if column in COLUMN_DTYPES else values.astype(str)
                                     .astype(object), dtype=None if column in COLUMN_DTYPES else h5py.string_dtype())


def _read_chunk(path: Path) -> VariantScores:
    """The scores `_write_chunk` saved."""
    with h5py.File(path, "r") as stored:
        def table(name: str, columns: tuple[str, ...]) -> pd.DataFrame:
            group = stored[name]
            return pd.DataFrame({c: group[c][:] if c in COLUMN_DTYPES else group[c].asstr()[:].astype(object)
                                 for c in columns}, columns=list(columns))

        return VariantScores(table("units", UNIT_COLUMNS), tuple(json.loads(stored.attrs["outputs"])),
                             tuple(json.loads(stored.attrs["groups"])), *(stored[kind][:] for kind in STORED),
                             table("skipped", SKIPPED_COLUMNS), json.loads(stored.attrs["settings"]))


def _chunk_attribute(path: Path, name: str):
    with h5py.File(path, "r") as stored:
        return json.loads(stored.attrs[name])


def _write_outputs(paths: OutputPaths, kind: str, vcf, chunks: int, background: int, seed: int) -> dict:
    """The outputs from the chunk files, one chunk in memory at a time; OUT.json last, then the partial run
    removed. Returns what OUT.json holds."""
    files = [paths.chunk(n) for n in range(chunks)]
    reference = _read_chunk(paths.partial / BACKGROUND_CHUNK) if background else None

    def scores():
        for path in files:
            chunk = _read_chunk(path)
            yield chunk if reference is None else chunk.calibrate(reference)

    if kind == "vcf":
        found = {k for path in files for k in _chunk_attribute(path, "kinds")}
        write_vcf(scores(), paths.out, vcf, [k for k in SCORE_KINDS if k in found])
    else:
        {"tsv": write_tsv, "parquet": write_parquet, "hdf5": write_hdf5}[kind](scores(), paths.out)
    write_skipped((_read_chunk(path) for path in files), paths.unscored)
    summary = _summed([_chunk_attribute(path, "summary") for path in files])
    record = {"settings": _chunk_attribute(files[0], "settings"), "summary": summary}
    if reference is not None:
        write_tsv(reference, paths.background)
        record["background"] = {"count": background, "seed": seed, "file": paths.background.name,
                                "summary": reference.summary()}
    write_json_atomic(paths.record, record)
    paths.remove()
    return record


def _summed(summaries: list[dict]) -> dict:
    """`VariantScores.summary` of the chunks together (each holds whole records, so the counts add)."""
    total = {key: sum(s[key] for s in summaries) for key in summaries[0] if key != "skipped_by_reason"}
    reasons = sum((Counter(s["skipped_by_reason"]) for s in summaries), Counter())
    return {**total, "skipped_by_reason": dict(sorted(reasons.items()))}
