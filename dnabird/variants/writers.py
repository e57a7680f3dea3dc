"""Writers of `VariantScores`, one per format, each atomic (`dnabird.inference.tables`): TSV and parquet
(the long table), HDF5 (arrays [n_windows, n_outputs] per score kind) and an annotated copy of the input
VCF; plus the side table of unscored alleles. Each writes a sequence of chunks (parts holding whole
records, in input order) one at a time, so memory stays flat in the number of records
(`dnabird.variants.resume`); one `VariantScores` is a sequence of one.

VCF: every input record is copied unchanged, with INFO keys added where it was scored — DNABIRD_WINDOWS
(one entry per scored window: the ALT number, and ":feature" for TSS windows) and one key per score kind
(DNABIRD_REF, DNABIRD_ALT, DNABIRD_DIFF, DNABIRD_ABS_DIFF, DNABIRD_LOGIT_DIFF, and for calibrated scores
DNABIRD_Q_DIFF … per quantile kind) holding, per window in that order, one value per output in the order of
the `##DNABIRD_OUTPUT` header lines (output names such as
DeepSEA's contain `|`, which INFO IDs cannot); the flags DNABIRD_REF_MISMATCH (an allele scored with the
genome's REF bases, on_ref_mismatch="genome"), DNABIRD_CLIPPED (a window clipped at an N run or a
contig end) and DNABIRD_UNK (a window that reads unk tokens) mark records whose scores need care. Records
are copied as text rather than through pysam's record writer, which requires every contig declared in the
header and adds END= to symbolic records; a `.gz` output is bgzip-compressed with pysam, so it can be
indexed with tabix.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pysam

from dnabird.inference.tables import append_rows, hdf5_output, string_dataset, write_parquet_tables, write_tsv_tables
from dnabird.io import atomic_output
from dnabird.variants.records import check_vcf_path, vcf_lines
from dnabird.variants.scores import CALIBRATED_KINDS, SCORE_KINDS, VariantScores

INTEGER_COLUMNS = ("record", "allele", "pos", "window_start", "window_end", "clip_left", "clip_right",
                   "unk_tokens")
FLAG_COLUMNS = ("ref_match", "pad_left", "pad_right")
COLUMN_DTYPES = {**dict.fromkeys(INTEGER_COLUMNS, np.int64), **dict.fromkeys(FLAG_COLUMNS, bool)}  # others: strings
INFO_KEYS = {kind: f"DNABIRD_{kind.upper()}" for kind in SCORE_KINDS}
QUANTILE_KEYS = {kind: f"DNABIRD_Q_{kind.upper()}" for kind in CALIBRATED_KINDS}
FLAGS = {"DNABIRD_REF_MISMATCH": "REF differs from the genome; scored with the genome's bases",
         "DNABIRD_CLIPPED": "a scored window was clipped at an N run or a contig end",
         "DNABIRD_UNK": "a scored window reads unk tokens: bases the tokenizer has no piece for"}
_DESCRIPTIONS = {"ref": "REF score", "alt": "ALT score", "diff": "ALT - REF score", "abs_diff": "|ALT - REF|",
                 "logit_diff": "ALT - REF in logits", "abs_logit_diff": "|ALT - REF in logits|"}


def write_tsv(scores: VariantScores | Iterable[VariantScores], path: str | os.PathLike) -> None:
    """The long table, tab-separated, missing values as NA (the header from the first chunk)."""
    write_tsv_tables((chunk.table() for chunk in _chunks(scores)), path, na_rep="NA")


def write_parquet(scores: VariantScores | Iterable[VariantScores], path: str | os.PathLike) -> None:
    """The long table as parquet, missing values null (its types from the first chunk)."""
    write_parquet_tables((chunk.table() for chunk in _chunks(scores)), path)


def write_skipped(scores: VariantScores | Iterable[VariantScores], path: str | os.PathLike) -> None:
    """The unscored alleles with their reasons, tab-separated."""
    write_tsv_tables((chunk.skipped for chunk in _chunks(scores)), path)


def write_hdf5(scores: VariantScores | Iterable[VariantScores], path: str | os.PathLike) -> None:
    """/ref, /alt, /diff, /abs_diff, /logit_diff [n_windows, n_outputs] float32 (and /quantiles/<kind> of
    calibrated scores); /windows/<column> and /skipped/<column>, one dataset per table column; /outputs,
    /groups; settings as a JSON attribute. Datasets grow chunk by chunk."""
    chunks = _chunks(scores)
    first = next(chunks)
    with hdf5_output(path, first.settings) as out:
        string_dataset(out, "outputs", first.outputs)
        string_dataset(out, "groups", first.groups)
        for chunk in itertools.chain([first], chunks):
            for kind in SCORE_KINDS:
                append_rows(out, kind, chunk.array(kind).astype(np.float32))
            for kind, values in chunk.quantiles.items():
                append_rows(out, f"quantiles/{kind}", values.astype(np.float32))
            for name, table in (("windows", chunk.units), ("skipped", chunk.skipped)):
                for column in table.columns:
                    values = table[column].to_numpy(COLUMN_DTYPES.get(column, object))
                    append_rows(out, f"{name}/{column}", values if column in COLUMN_DTYPES else values.astype(str)
                            .astype(object))


def scored_kinds(scores: VariantScores) -> list[str]:
    """The score kinds that hold a value (`logit_diff` is NaN throughout for mlm_llr; none without rows)."""
    return [k for k in SCORE_KINDS if not np.isnan(scores.array(k)).all()]


def write_vcf(scores: VariantScores | Iterable[VariantScores], path: str | os.PathLike, vcf: str | os.PathLike,
              kinds: Sequence[str] | None = None) -> None:
    """A copy of `vcf` (plain or bgzip, read line by line with `records.vcf_lines`, whose record numbers
    are the scores' `record`) with the scores as INFO fields; `.gz` output is bgzipped. `kinds`: the score
    kinds to write (default `scored_kinds` of `scores`; give them for a sequence of chunks, whose union is
    known before the header is written); the quantile keys are those of the first chunk."""
    chunks = _chunks(scores)
    first = next(chunks)
    kinds = scored_kinds(first) if kinds is None else list(kinds)
    quantiles = list(first.quantiles)
    header = [f'##INFO=<ID=DNABIRD_WINDOWS,Number=.,Type=String,Description="dnabird {first.settings.get("method")}: '
              'scored windows, ALT number[:feature]; each DNABIRD score key holds one value per output per window">']
    header += [f'##INFO=<ID={INFO_KEYS[k]},Number=.,Type=Float,Description="dnabird {_DESCRIPTIONS[k]} per '
               f'output (##DNABIRD_OUTPUT order) per window (DNABIRD_WINDOWS order)">' for k in kinds]
    header += [f'##INFO=<ID={QUANTILE_KEYS[k]},Number=.,Type=Float,Description="dnabird quantile of {_DESCRIPTIONS[k]} '
               'among the background SNVs, per output per window">' for k in quantiles]
    header += [f'##INFO=<ID={key},Number=0,Type=Flag,Description="dnabird: {text}">' for key, text in FLAGS.items()]
    header += [f'##DNABIRD_OUTPUT=<Index={i},Group={group},Name="{name}">'
               for i, (name, group) in enumerate(zip(first.outputs, first.groups, strict=True))]
    check_vcf_path(Path(vcf))
    annotations = _annotations(itertools.chain([first], chunks), kinds, quantiles)
    pending = next(annotations, None)
    path = Path(path)
    with atomic_output(path) as tmp, (pysam.BGZFile(str(tmp), "wb") if path.suffix in (".gz", ".bgz")
                                      else open(tmp, "wb")) as handle:
        for record, _, line in vcf_lines(vcf):
            if line.startswith("#CHROM") and record is None:
                line = "".join(h + "\n" for h in header) + line
            elif pending is not None and record == pending[0]:
                fields = line.split("\t")
                fields[7] = ";".join(([] if fields[7] in ("", ".") else [fields[7]]) + pending[1])
                line = "\t".join(fields)
                pending = next(annotations, None)
            handle.write(f"{line}\n".encode("utf-8", "surrogateescape"))  # non-UTF-8 bytes kept


def _annotations(chunks: Iterable[VariantScores], kinds: list[str], quantiles: list[str]
                 ) -> Iterator[tuple[int, list[str]]]:
    """(record, INFO entries to add) for each scored record, in input order, one chunk in memory at a time."""
    for scores in chunks:
        by_record = {}
        for row, (record, allele, feature) in enumerate(zip(scores.units["record"], scores.units["allele"],
                                                            scores.units["feature"], strict=True)):
            label = f"{allele}" if feature == "." else f"{allele}:{feature}"
            by_record.setdefault(int(record), []).append((row, label))
        for record in sorted(by_record):
            yield record, _info(by_record[record], scores, kinds, quantiles)


def _info(windows: list[tuple[int, str]], scores: VariantScores, kinds: list[str], quantiles: list[str]) -> list[str]:
    rows = [row for row, _ in windows]
    added = [f"DNABIRD_WINDOWS={','.join(label for _, label in windows)}"]
    added += [f"{INFO_KEYS[k]}={_numbers(scores.array(k)[rows])}" for k in kinds]
    added += [f"{QUANTILE_KEYS[k]}={_numbers(scores.quantiles[k][rows])}" for k in quantiles]
    units = scores.units.iloc[rows]
    flagged = {"DNABIRD_REF_MISMATCH": not units["ref_match"].astype(bool).all(),
               "DNABIRD_CLIPPED": bool((units[["clip_left", "clip_right"]].to_numpy() > 0).any()),
               "DNABIRD_UNK": bool((units["unk_tokens"] > 0).any())}
    return added + [key for key, on in flagged.items() if on]


def _numbers(values: np.ndarray) -> str:
    return ",".join("." if np.isnan(value) else f"{value:.6g}" for value in values.reshape(-1))


def _chunks(scores: VariantScores | Iterable[VariantScores]) -> Iterator[VariantScores]:
    """`scores` as an iterator of chunks (one `VariantScores` is one chunk)."""
    return iter([scores] if isinstance(scores, VariantScores) else scores)
