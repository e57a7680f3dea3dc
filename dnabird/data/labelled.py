"""Labelled DNA examples from the files users already have, read without code:

- sequence tables: CSV, TSV or parquet with a `sequence` column and label column(s) (DNABERT-2's GUE:
  `train.csv`, `dev.csv`, `test.csv` with `sequence,label`);
- FASTA whose header ends in `|label` (the Nucleotide Transformer's `train.fna` / `test.fna`);
- region tables: BED, CSV, TSV or parquet with `chrom, start, end[, strand]` (0-based, half-open) and label
  column(s), read from a genome FASTA by `region_sequences`;
- folders of per-class files: every table in the folder is one class, named by the file (Genomic Benchmarks'
  `<split>/<class>.csv.gz`, columns `id, region, start, end, strand`, `region` being the chromosome).

A table is a `LabelledTable`: its rows in a pandas frame with the standard columns (`sequence`, or `chrom`,
`start`, `end`, `strand`), `split` when the file has one, the label columns as text, and `file` and `line` (the
line of a text file, the row of a parquet file, the header line of a FASTA record), so any error or skip names
where the row came from. `label_values` parses the labels for a problem (`infer_problem`).
"""

from __future__ import annotations

import gzip
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dnabird.errors import InputFormatError, ParameterError

SEQUENCE_COLUMNS = ("sequence", "seq")
CHROM_COLUMNS = ("chrom", "chromosome", "chr", "region")   # "region": Genomic Benchmarks' name for it
RESERVED = {"sequence", "seq", "chrom", "chromosome", "chr", "region", "start", "end", "strand", "split", "id",
            "name", "score", "file", "line"}
TABLE_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".bed")
FASTA_SUFFIXES = (".fa", ".fasta", ".fna")
SPLIT_NAMES = {"train": "train", "validation": "validation", "valid": "validation", "val": "validation",
               "dev": "validation", "test": "test"}
PROBLEMS = ("binary", "multiclass", "multilabel", "regression")
_IUPAC = str.maketrans("RYSWKMBDHVryswkmbdhvacgtn", "NNNNNNNNNNNNNNNNNNNNACGTN")
_BASES = set("ACGTN")


@dataclass
class LabelledTable:
    """Rows of one or more files: `frame` (module docstring) and `kind`, "sequences" or "regions"."""

    frame: pd.DataFrame
    kind: str

    def __len__(self) -> int:
        return len(self.frame)


def where(table_row) -> dict:
    """`InputFormatError` keywords naming a row: its file and line (a parquet file's row as a record)."""
    path = str(table_row["file"])
    if path.endswith(".parquet"):
        return {"path": path, "record": f"row {int(table_row['line'])}"}
    return {"path": path, "line": int(table_row["line"])}


def _suffix(path: Path) -> str:
    """The format suffix, under any `.gz`."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bgz"):
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def _stem(path: Path) -> str:
    """A file's name without its format suffix and any `.gz` (the class of a per-class file)."""
    name = path.name
    for suffix in (".gz", ".bgz", *TABLE_SUFFIXES, *FASTA_SUFFIXES):
        name = name.removesuffix(suffix)
    return name


def _open_text(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix in (".gz", ".bgz") else \
        path.open(encoding="utf-8")


def read_labelled(path: str | os.PathLike, *, sequence_column: str | None = None,
                  label_columns: list[str] | None = None) -> LabelledTable:
    """One file (by suffix: FASTA, BED, parquet, TSV/TXT, else CSV; any of them gzipped) or a folder of
    per-class files. `sequence_column`: the sequence column's name (default `sequence` or `seq`);
    `label_columns`: the label columns (default `label` when present, else every column not reserved for
    coordinates, ids or the split)."""
    path = Path(path)
    if path.is_dir():
        return read_class_folder(path, sequence_column=sequence_column)
    if not path.is_file():
        raise InputFormatError("labelled data file not found", path=path)
    suffix = _suffix(path)
    if suffix in FASTA_SUFFIXES:
        return read_labelled_fasta(path)
    if suffix == ".bed":
        frame = _read_bed(path)
    elif suffix == ".parquet":
        frame = pd.read_parquet(path)
        frame = frame.astype(object).where(frame.notna(), "").astype(str)
        frame["line"] = np.arange(1, len(frame) + 1)
    else:
        frame = _read_delimited(path, "\t" if suffix in (".tsv", ".txt") else ",")
    frame["file"] = str(path)
    return _standardise(frame, path, sequence_column, label_columns)


def _read_delimited(path: Path, separator: str) -> pd.DataFrame:
    """A CSV or TSV with a header row, every cell as text; blank lines are not rows."""
    try:
        frame = pd.read_csv(path, sep=separator, dtype=str, keep_default_na=False, skip_blank_lines=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise InputFormatError(f"not a readable {'TSV' if separator == chr(9) else 'CSV'} table ({err})",
                               path=path) from None
    except pd.errors.EmptyDataError:
        raise InputFormatError("empty file (expected a header row naming the columns)", path=path) from None
    frame = frame.fillna("")
    frame.columns = [str(c).strip() for c in frame.columns]
    frame["line"] = np.arange(2, len(frame) + 2)
    with _open_text(path) as handle:      # empty lines are no rows (a line of separators is a row of empty cells)
        blank = {number for number, text in enumerate(handle, start=1) if not text.strip()}
    return frame[~frame["line"].isin(blank)].reset_index(drop=True)


def _read_bed(path: Path) -> pd.DataFrame:
    """A BED of regions and labels. A first line starting with `#` (or `chrom`) names the columns; without it
    they are chrom, start, end, then (with six or more columns) BED6's name, score, strand, and the rest labels:
    `label` when there is one, else `label_<column number>`."""
    rows, lines, header = [], [], None
    with _open_text(path) as handle:
        for number, text in enumerate(handle, start=1):
            text = text.rstrip("\r\n")
            if not text.strip() or text.startswith(("track", "browser")):
                continue
            fields = text.split("\t") if "\t" in text else text.split()
            if header is None and not rows and (text.startswith("#") or fields[0].lower() == "chrom"):
                header = [f.lstrip("#").strip() for f in fields]
                continue
            if text.startswith("#"):
                continue
            if rows and len(fields) != len(rows[0]):
                raise InputFormatError(f"expected {len(rows[0])} columns like the first record, got {len(fields)}",
                                       path=path, line=number)
            rows.append(fields)
            lines.append(number)
    if not rows:
        raise InputFormatError("no BED records", path=path)
    width = len(rows[0])
    if header is None:
        header = ["chrom", "start", "end"] + (["name", "score", "strand"] if width >= 6 else [])
        extra = width - len(header)
        header += ["label"] if extra == 1 else [f"label_{len(header) + i + 1}" for i in range(extra)]
    if len(header) != width:
        raise InputFormatError(f"the header names {len(header)} columns, the records have {width}", path=path,
                               line=lines[0])
    frame = pd.DataFrame(rows, columns=header)
    frame["line"] = lines
    return frame


def read_labelled_fasta(path: str | os.PathLike) -> LabelledTable:
    """A FASTA whose headers end in the label: `>name|...|label` (column `label`); `line` is the header's line."""
    path = Path(path)
    names, sequences, labels, lines = [], [], [], []
    parts: list[str] = []
    with _open_text(path) as handle:
        for number, text in enumerate(handle, start=1):
            text = text.strip()
            if text.startswith(">"):
                if names:
                    sequences.append("".join(parts))
                header = text[1:].strip()
                if "|" not in header:
                    raise InputFormatError(f"header {header!r} has no '|label' at its end", path=path, line=number)
                names.append(header.rsplit("|", 1)[0])
                labels.append(header.rsplit("|", 1)[1].strip())
                lines.append(number)
                parts = []
            elif text:
                if not names:
                    raise InputFormatError("sequence before the first '>' header", path=path, line=number)
                parts.append(text)
    if not names:
        raise InputFormatError("no FASTA records", path=path)
    sequences.append("".join(parts))
    frame = pd.DataFrame({"id": names, "sequence": sequences, "label": labels, "line": lines, "file": str(path)})
    return _standardise(frame, path, None, ["label"])


def read_class_folder(folder: str | os.PathLike, *, sequence_column: str | None = None) -> LabelledTable:
    """Every table (or FASTA) in `folder` is one class named by its file: column `label` holds the name."""
    folder = Path(folder)
    files = sorted(p for p in folder.iterdir() if p.is_file() and _suffix(p) in TABLE_SUFFIXES + FASTA_SUFFIXES)
    if not files:
        raise InputFormatError(f"folder holds no labelled file ({', '.join(TABLE_SUFFIXES + FASTA_SUFFIXES)}, "
                               "optionally gzipped)", path=folder)
    tables = []
    for path in files:
        if _suffix(path) in FASTA_SUFFIXES:
            raise InputFormatError("a per-class folder holds tables, not FASTA (a labelled FASTA carries its "
                                   "labels in the headers)", path=path)
        frame = read_labelled(path, sequence_column=sequence_column, label_columns=[]).frame
        frame["label"] = _stem(path)
        tables.append(frame)
    kinds = {"sequences" if "sequence" in t else "regions" for t in tables}
    if len(kinds) > 1:
        raise InputFormatError("mixes sequence tables and region tables", path=folder)
    frame = pd.concat(tables, ignore_index=True)
    frame.attrs["labels"] = ["label"]
    return LabelledTable(frame, kinds.pop())


def split_entries(folder: str | os.PathLike) -> dict[str, Path]:
    """The splits a folder holds, split -> its file (`train.csv`, `dev.tsv`, `test.fna.gz` ...) or per-class
    folder (`train/`): names as in `SPLIT_NAMES` (`dev`, `valid`, `val` are validation). Empty when none."""
    found: dict[str, Path] = {}
    for entry in sorted(Path(folder).iterdir()):
        split = SPLIT_NAMES.get(_stem(entry).lower())
        if split is None or (entry.is_file() and _suffix(entry) not in TABLE_SUFFIXES + FASTA_SUFFIXES):
            continue
        if split in found:
            raise InputFormatError(f"two entries name the {split} split: {found[split].name} and {entry.name}",
                                   path=folder)
        found[split] = entry
    return found


def _standardise(frame: pd.DataFrame, path: Path, sequence_column: str | None,
                 label_columns: list[str] | None) -> LabelledTable:
    """The standard columns (module docstring) of a frame read from `path`, checked row by row."""
    columns = [c for c in frame.columns if c not in ("file", "line")]
    first_line = 1 if _suffix(path) != ".parquet" else None

    def missing(name: str, what: str):
        return InputFormatError(f"the header names no {what} column {name!r} (columns: {columns})", path=path,
                                line=first_line)

    if sequence_column is not None and sequence_column not in columns:
        raise missing(sequence_column, "sequence")
    sequence = sequence_column or next((c for c in SEQUENCE_COLUMNS if c in columns), None)
    chrom = next((c for c in CHROM_COLUMNS if c in columns), None)
    out = pd.DataFrame({"file": frame["file"].astype(str), "line": frame["line"].astype(np.int64)})
    if sequence is not None:
        kind = "sequences"
        out["sequence"] = [_checked_sequence(s, path, line) for s, line in zip(frame[sequence], frame["line"],
                                                                               strict=True)]
        used = {sequence}
    elif chrom is not None and {"start", "end"} <= set(columns):
        kind = "regions"
        out["chrom"] = frame[chrom].astype(str).str.strip()
        out["start"] = _integers(frame, "start", path)
        out["end"] = _integers(frame, "end", path)
        bad = ~((out["start"] >= 0) & (out["start"] < out["end"]))
        if bad.any():
            row = out[bad].iloc[0]
            raise InputFormatError(f"expected 0 <= start < end, got start={row['start']}, end={row['end']}",
                                   **where(row))
        out["strand"] = frame["strand"].astype(str).str.strip() if "strand" in columns else "+"
        odd = ~out["strand"].isin(["+", "-", ".", ""])
        if odd.any():
            row = out[odd].iloc[0]
            raise InputFormatError(f"strand {row['strand']!r} is not '+', '-' or '.'", **where(row))
        out["strand"] = out["strand"].where(out["strand"] == "-", "+")
        used = {chrom, "start", "end", "strand"}
    else:
        raise InputFormatError(f"the header names neither a sequence column ({' or '.join(SEQUENCE_COLUMNS)}) nor "
                               f"region columns (chrom, start, end) (columns: {columns}); name the sequence column "
                               "with data.sequence_column", path=path, line=first_line)
    if "split" in columns:
        out["split"] = [_split_name(value, path, line) for value, line in zip(frame["split"], frame["line"],
                                                                             strict=True)]
    if label_columns is None:
        label_columns = ["label"] if "label" in columns else [c for c in columns if c not in RESERVED | used]
    for name in label_columns:
        if name not in columns:
            raise missing(name, "label")
        values = frame[name].astype(str).str.strip()
        empty = values == ""
        if empty.any():
            raise InputFormatError(f"missing or empty label in column {name!r}",
                                   **where({"file": str(path), "line": frame["line"][empty].iloc[0]}))
        out[name] = values.to_numpy()
    out.attrs["labels"] = list(label_columns)
    return LabelledTable(out, kind)


def label_columns(table: LabelledTable) -> list[str]:
    """The label columns of a table (those read, in order)."""
    return list(table.frame.attrs.get("labels", []))


def _checked_sequence(value: str, path: Path, line: int) -> str:
    """The sequence upper-cased with IUPAC ambiguity codes as N; an error naming the row for anything else."""
    sequence = str(value).strip().translate(_IUPAC).upper()
    if not sequence:
        raise InputFormatError("empty sequence", **where({"file": str(path), "line": line}))
    bad = set(sequence) - _BASES
    if bad:
        raise InputFormatError(f"sequence holds {''.join(sorted(bad))[:10]!r}, not DNA bases (A, C, G, T, N, "
                               "IUPAC codes)", **where({"file": str(path), "line": line}))
    return sequence


def _integers(frame: pd.DataFrame, column: str, path: Path) -> np.ndarray:
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna() | (values != values.round())
    if bad.any():
        first = bad.to_numpy().nonzero()[0][0]
        raise InputFormatError(f"{column} {frame[column].iloc[first]!r} is not an integer",
                               **where({"file": str(path), "line": frame["line"].iloc[first]}))
    return values.astype(np.int64).to_numpy()


def _split_name(value: str, path: Path, line: int) -> str:
    name = SPLIT_NAMES.get(str(value).strip().lower())
    if name is None:
        raise InputFormatError(f"split {value!r} is not one of {sorted(SPLIT_NAMES)}",
                               **where({"file": str(path), "line": line}))
    return name


def concat(tables: list[LabelledTable], splits: list[str | None]) -> LabelledTable:
    """Tables read apart as one, each row's `split` set to its table's split (None: keep the table's own)."""
    kinds = {t.kind for t in tables}
    if len(kinds) > 1:
        files = ", ".join(sorted({str(t.frame["file"].iloc[0]) for t in tables}))
        raise InputFormatError(f"the splits mix sequence tables and region tables ({files})")
    labels = [label_columns(t) for t in tables]
    if any(names != labels[0] for names in labels):
        raise InputFormatError(f"the split files name different label columns: {labels}")
    frames = []
    for table, split in zip(tables, splits, strict=True):
        frame = table.frame.copy()
        if split is not None:
            frame["split"] = split
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out.attrs["labels"] = labels[0]
    return LabelledTable(out, kinds.pop())


def infer_problem(table: LabelledTable, *, max_classes: int = 50) -> str:
    """The problem the labels describe: several 0/1 columns "multilabel", other numbers "regression"; one
    column of two values "binary", of up to `max_classes` integers or any text "multiclass", of other numbers
    "regression"."""
    columns = label_columns(table)
    numbers = [pd.to_numeric(table.frame[c], errors="coerce") for c in columns]
    numeric = all(not n.isna().any() for n in numbers)
    if len(columns) > 1:
        if numeric and all(n.isin([0, 1]).all() for n in numbers):
            return "multilabel"
        return "regression"
    values = table.frame[columns[0]]
    if values.nunique() == 2:
        return "binary"
    known = numbers[0].dropna()
    integral = (known == known.round()).all()
    looks_numeric = len(known) > len(values) / 2 and not (integral and known.nunique() <= max_classes)
    if not numeric and looks_numeric:
        first = numbers[0].isna().to_numpy().nonzero()[0][0]
        raise InputFormatError(f"label {values.iloc[first]!r} in column {columns[0]!r} is not a number, though "
                               f"{len(known)} of its {len(values)} labels are: fix it for a regression, or set "
                               "data.problem=multiclass if the column names classes", **where(table.frame.iloc[first]))
    if not numeric:
        return "multiclass"
    return "multiclass" if integral and values.nunique() <= max_classes else "regression"


def class_names(values: pd.Series) -> list[str]:
    """Distinct labels in order: numerically when all are numbers, else as text."""
    unique = list(pd.unique(values))
    numbers = pd.to_numeric(pd.Series(unique), errors="coerce")
    if not numbers.isna().any():
        return [unique[i] for i in np.argsort(numbers.to_numpy(), kind="stable")]
    return sorted(unique)


@dataclass(frozen=True)
class Labels:
    """Labels parsed for a problem: `values` (binary float [N], multiclass int [N], multilabel float [N, K],
    regression float [N, K] in the user's scale) and `names` (the head's outputs: the positive class, the
    classes, the label columns or the targets)."""

    values: np.ndarray
    names: tuple[str, ...]


def label_values(table: LabelledTable, problem: str, *, positive_class: str | None = None) -> Labels:
    """The labels of every row for `problem`; a value that does not fit it is an error naming the row."""
    if problem not in PROBLEMS:
        raise ParameterError("problem", problem, f"one of {PROBLEMS}")
    frame, columns = table.frame, label_columns(table)
    if problem in ("binary", "multiclass") and len(columns) != 1:
        raise InputFormatError(f"a {problem} problem reads one label column, got {columns}")
    if problem in ("binary", "multiclass"):
        values = frame[columns[0]]
        classes = class_names(values)
        if problem == "binary":
            if len(classes) > 2:
                raise InputFormatError(f"a binary problem has two classes; column {columns[0]!r} holds "
                                       f"{len(classes)}: {classes[:10]}")
            positive = positive_class if positive_class is not None else classes[-1]
            if positive not in classes:
                raise ParameterError("data.positive_class", positive_class, f"one of the classes {classes}")
            name = columns[0] if set(classes) <= {"0", "1"} and positive == "1" else positive
            return Labels((values == positive).to_numpy(np.float32), (name,))
        index = {name: i for i, name in enumerate(classes)}
        return Labels(values.map(index).to_numpy(np.int64), tuple(classes))
    out = np.empty((len(frame), len(columns)), dtype=np.float64)
    for k, name in enumerate(columns):
        numbers = pd.to_numeric(frame[name], errors="coerce")
        bad = numbers.isna() | ~np.isfinite(numbers.fillna(0))
        if problem == "multilabel":
            bad |= ~numbers.isin([0, 1])
        if bad.any():
            first = bad.to_numpy().nonzero()[0][0]
            expected = "0 or 1 (multilabel)" if problem == "multilabel" else "a finite number (regression target)"
            raise InputFormatError(f"label {frame[name].iloc[first]!r} in column {name!r} is not {expected}",
                                   **where(frame.iloc[first]))
        out[:, k] = numbers.to_numpy()
    return Labels(out.astype(np.float32) if problem == "multilabel" else out, tuple(columns))


@dataclass
class RegionSequences:
    """Bases read for each row of a region table: `sequences` (None where skipped), the `start` and `end`
    actually read, and the rows skipped (`skipped`: row index -> reason)."""

    sequences: list[str | None]
    starts: np.ndarray
    ends: np.ndarray
    skipped: dict[int, str]

    @property
    def counts(self) -> dict[str, int]:
        return dict(Counter(self.skipped.values()))


def region_sequences(table: LabelledTable, genome, *, window_length: int | None) -> RegionSequences:
    """Each region's bases from `genome` (a `dnabird.genome.Genome`), on its strand: a window of
    `window_length` bp centred on the region's midpoint, or the region itself (None). A region on a chromosome
    the genome lacks ("unknown_chromosome"), whose window runs past the contig ("past_contig_end") or holds only N,
    an assembly gap ("all_n_bases"), is skipped."""
    frame = table.frame
    middle = (frame["start"].to_numpy() + frame["end"].to_numpy()) // 2
    if window_length is None:
        starts, ends = frame["start"].to_numpy().copy(), frame["end"].to_numpy().copy()
    else:
        starts = middle - window_length // 2
        ends = starts + window_length
    sequences: list[str | None] = []
    skipped: dict[int, str] = {}
    for i, (chrom, start, end, strand) in enumerate(zip(frame["chrom"], starts, ends, frame["strand"], strict=True)):
        if chrom not in genome:
            skipped[i] = "unknown_chromosome"
        elif start < 0 or end > genome.length(chrom):
            skipped[i] = "past_contig_end"
        else:
            sequence = genome.fetch(chrom, int(start), int(end), strand).sequence.upper()
            if not sequence.strip("N"):
                skipped[i] = "all_n_bases"
        sequences.append(None if i in skipped else sequence)
    return RegionSequences(sequences, starts, ends, skipped)
