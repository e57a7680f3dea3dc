"""Writers of `VariantScores`, one per format, each atomic: TSV (the long table), HDF5 (arrays
[n_windows, n_outputs] per score kind) and an annotated copy of the input VCF; plus the side table of
unscored alleles.

VCF: every input record is copied unchanged, with INFO keys added where it was scored — DNABIRD_WINDOWS
(one entry per scored window: the ALT number, and ":feature" for TSS windows) and one key per score kind
(DNABIRD_REF, DNABIRD_ALT, DNABIRD_DIFF, DNABIRD_ABS_DIFF, DNABIRD_LOGIT_DIFF) holding, per window in that
order, one value per output in the order of the `##DNABIRD_OUTPUT` header lines (output names such as
DeepSEA's contain `|`, which INFO IDs cannot); the flags DNABIRD_REF_MISMATCH (an allele scored with the
genome's REF bases, on_ref_mismatch="genome"), DNABIRD_CLIPPED (a window clipped at an N run or a
contig end) and DNABIRD_UNK (a window that reads unk tokens) mark records whose scores need care. Records
are copied as text rather than through pysam's record writer, which requires every contig declared in the
header and adds END= to symbolic records; a `.gz` output is bgzip-compressed with pysam, so it can be
indexed with tabix.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np
import pysam

from dnabird.io import atomic_output
from dnabird.variants.records import check_vcf_path, vcf_lines
from dnabird.variants.scores import SCORE_KINDS, VariantScores

INTEGER_COLUMNS = ("record", "allele", "pos", "window_start", "window_end", "clip_left", "clip_right",
                   "unk_tokens")
FLAG_COLUMNS = ("ref_match", "pad_left", "pad_right")
COLUMN_DTYPES = {**dict.fromkeys(INTEGER_COLUMNS, np.int64), **dict.fromkeys(FLAG_COLUMNS, bool)}  # others: strings
INFO_KEYS = {kind: f"DNABIRD_{kind.upper()}" for kind in SCORE_KINDS}
FLAGS = {"DNABIRD_REF_MISMATCH": "REF differs from the genome; scored with the genome's bases",
         "DNABIRD_CLIPPED": "a scored window was clipped at an N run or a contig end",
         "DNABIRD_UNK": "a scored window reads unk tokens: bases the tokenizer has no piece for"}
_DESCRIPTIONS = {"ref": "REF score", "alt": "ALT score", "diff": "ALT - REF score", "abs_diff": "|ALT - REF|",
                 "logit_diff": "ALT - REF in logits"}


def write_tsv(scores: VariantScores, path: str | os.PathLike) -> None:
    """The long table, tab-separated, missing values as NA."""
    with atomic_output(path) as tmp:
        scores.table().to_csv(tmp, sep="\t", index=False, na_rep="NA")


def write_skipped(scores: VariantScores, path: str | os.PathLike) -> None:
    """The unscored alleles with their reasons, tab-separated."""
    with atomic_output(path) as tmp:
        scores.skipped.to_csv(tmp, sep="\t", index=False)


@contextmanager
def hdf5_output(path: str | os.PathLike, settings: dict) -> Iterator[h5py.File]:
    """An HDF5 file written atomically; `settings` is added last, as a JSON attribute."""
    with atomic_output(path) as tmp, h5py.File(tmp, "w") as out:
        yield out
        out.attrs["settings"] = json.dumps(settings, sort_keys=True)


def string_dataset(out: h5py.Group, name: str, values: Sequence[str]) -> None:
    """`values` as a variable-length string dataset `name` of `out`."""
    out.create_dataset(name, data=np.array(values, dtype=object), dtype=h5py.string_dtype())


def write_hdf5(scores: VariantScores, path: str | os.PathLike) -> None:
    """/ref, /alt, /diff, /abs_diff, /logit_diff [n_windows, n_outputs] float32; /windows/<column> and
    /skipped/<column>, one dataset per table column; /outputs, /groups; settings as a JSON attribute."""
    with hdf5_output(path, scores.settings) as out:
        for kind in SCORE_KINDS:
            out.create_dataset(kind, data=scores.array(kind).astype(np.float32))
        string_dataset(out, "outputs", scores.outputs)
        string_dataset(out, "groups", scores.groups)
        for name, table in (("windows", scores.units), ("skipped", scores.skipped)):
            group = out.create_group(name)
            for column in table.columns:
                if column in COLUMN_DTYPES:
                    group.create_dataset(column, data=table[column].to_numpy(COLUMN_DTYPES[column]))
                else:
                    string_dataset(group, column, table[column].astype(str))


def write_vcf(scores: VariantScores, path: str | os.PathLike, vcf: str | os.PathLike) -> None:
    """A copy of `vcf` (plain or bgzip, read line by line with `records.vcf_lines`, whose record numbers
    are the scores' `record`) with the scores as INFO fields; `.gz` output is bgzipped."""
    by_record = {}
    for row, (record, allele, feature) in enumerate(zip(scores.units["record"], scores.units["allele"],
                                                        scores.units["feature"], strict=True)):
        by_record.setdefault(int(record), []).append((row, f"{allele}" if feature == "." else f"{allele}:{feature}"))
    kinds = [k for k in SCORE_KINDS if not np.isnan(scores.array(k)).all()]
    header = [f'##INFO=<ID=DNABIRD_WINDOWS,Number=.,Type=String,Description="dnabird {scores.settings.get("method")}: '
              'scored windows, ALT number[:feature]; each DNABIRD score key holds one value per output per window">']
    header += [f'##INFO=<ID={INFO_KEYS[k]},Number=.,Type=Float,Description="dnabird {_DESCRIPTIONS[k]} per '
               f'output (##DNABIRD_OUTPUT order) per window (DNABIRD_WINDOWS order)">' for k in kinds]
    header += [f'##INFO=<ID={key},Number=0,Type=Flag,Description="dnabird: {text}">' for key, text in FLAGS.items()]
    header += [f'##DNABIRD_OUTPUT=<Index={i},Group={group},Name="{name}">'
               for i, (name, group) in enumerate(zip(scores.outputs, scores.groups, strict=True))]
    check_vcf_path(Path(vcf))
    path = Path(path)
    with atomic_output(path) as tmp, (pysam.BGZFile(str(tmp), "wb") if path.suffix in (".gz", ".bgz")
                                      else open(tmp, "wb")) as handle:
        for record, _, line in vcf_lines(vcf):
            if line.startswith("#CHROM") and record is None:
                line = "".join(h + "\n" for h in header) + line
            elif record in by_record:
                line = _annotated(line, by_record[record], scores, kinds)
            handle.write(f"{line}\n".encode("utf-8", "surrogateescape"))  # non-UTF-8 bytes kept


def _annotated(line: str, windows: list[tuple[int, str]], scores: VariantScores, kinds: list[str]) -> str:
    fields = line.split("\t")
    rows = [row for row, _ in windows]
    added = [f"DNABIRD_WINDOWS={','.join(label for _, label in windows)}"]
    added += [f"{INFO_KEYS[k]}={','.join(_number(v) for v in scores.array(k)[rows].reshape(-1))}" for k in kinds]
    units = scores.units.iloc[rows]
    flagged = {"DNABIRD_REF_MISMATCH": not units["ref_match"].astype(bool).all(),
               "DNABIRD_CLIPPED": bool((units[["clip_left", "clip_right"]].to_numpy() > 0).any()),
               "DNABIRD_UNK": bool((units["unk_tokens"] > 0).any())}
    added += [key for key, on in flagged.items() if on]
    fields[7] = ";".join(([] if fields[7] in ("", ".") else [fields[7]]) + added)
    return "\t".join(fields)


def _number(value: float) -> str:
    return "." if np.isnan(value) else f"{value:.6g}"

