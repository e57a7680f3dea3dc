"""DeepSEA's data as files: the label table (feature name, group, column) and readers of the `.mat` bundle.

Label table (`feature_table.tsv`: column, name, group, original): from a feature-names file (one
`cell|target|treatment` per line in `.mat` column order; docs/chromatin.md). Groups: target "DNase",
a histone mark ("H" + digit, as Selene), else TF; DeepSEA's own 919 columns by its published ranges.

Bundle: `train.mat` is MATLAB v7.3 (HDF5, axes reversed: x (L, 4, N), y (F, N)), `valid.mat` and
`test.mat` MATLAB v5 (x (N, 4, L), y (N, F)); `BundleSplit` reads either by content. One-hot order
A, G, C, T, all-zero is N; rows i and i + N/2 are a sequence and its reverse complement.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dnabird.errors import InputFormatError, ParameterError, reject
from dnabird.io import write_text_atomic

GROUPS = ("DNase", "TF", "HM")
DEEPSEA_COLUMNS = {"DNase": (0, 125), "TF": (125, 815), "HM": (815, 919)}   # half-open column ranges
DEEPSEA_FEATURES = 919
TABLE_HEADER = ("column", "name", "group", "original")
AGCT = np.frombuffer(b"AGCT", dtype=np.uint8)
_HISTONE = re.compile(r"H\d")


def feature_group(name: str) -> str:
    """`DNase`, `HM` (target "H" + digit) or `TF`, from a `cell|target|treatment` name."""
    parts = name.strip().split("|")
    target = parts[1] if len(parts) > 1 else ""
    if target == "DNase":
        return "DNase"
    return "HM" if _HISTONE.match(target) else "TF"


def unique_names(names: list[str]) -> list[str]:
    """Each name stripped, a repeat suffixed `|1`, `|2`, … (the first keeps its name), never colliding."""
    taken, repeats, out = set(), Counter(), []
    for name in names:
        base = name.strip()
        candidate = base
        while candidate in taken:
            repeats[base] += 1
            candidate = f"{base}|{repeats[base]}"
        taken.add(candidate)
        out.append(candidate)
    return out


@dataclass(frozen=True)
class FeatureTable:
    """The label table: `names[c]` (unique), `groups[c]` and `originals[c]` of label column c."""

    names: tuple[str, ...]
    groups: tuple[str, ...]
    originals: tuple[str, ...]
    path: str | None = None

    def __len__(self) -> int:
        return len(self.names)

    def members(self, group: str) -> list[str]:
        return [n for n, g in zip(self.names, self.groups, strict=True) if g == group]

    def by_group(self) -> dict[str, list[str]]:
        return {g: self.members(g) for g in GROUPS if self.members(g)}

    def counts(self) -> dict[str, int]:
        return {g: len(self.members(g)) for g in GROUPS}

    def write(self, path: str | Path) -> Path:
        lines = ["\t".join(TABLE_HEADER)]
        lines += [f"{c}\t{n}\t{g}\t{o}" for c, (n, g, o) in enumerate(zip(self.names, self.groups, self.originals,
                                                                           strict=True))]
        return write_text_atomic(path, "\n".join(lines) + "\n")


def table_from_names(path: str | Path) -> FeatureTable:
    """The label table of a feature-names file (one name per line, `.mat` column order)."""
    path = Path(path)
    originals = path.read_text().splitlines()
    while originals and not originals[-1].strip():
        originals.pop()
    for number, name in enumerate(originals, 1):
        if not name.strip():
            raise InputFormatError("empty feature name", path=path, line=number)
        if name.count("|") < 2:
            raise InputFormatError(f"feature name {name!r} is not 'cell|target|treatment'", path=path, line=number)
    if len(originals) == DEEPSEA_FEATURES:   # DeepSEA's published column layout
        groups = [next(g for g, (a, b) in DEEPSEA_COLUMNS.items() if a <= c < b) for c in range(len(originals))]
    else:
        groups = [feature_group(name) for name in originals]
    return check_table(FeatureTable(tuple(unique_names(originals)), tuple(groups), tuple(originals), str(path)))


def check_table(table: FeatureTable) -> FeatureTable:
    """`table`, once its names are unique, its groups known, each group one contiguous block in the order
    DNase, TF, HM, and DeepSEA's 919 columns in their published ranges."""
    where = table.path
    if not len(table):
        raise InputFormatError("the label table has no feature", path=where)
    if len(set(table.names)) != len(table):
        repeated = [n for n, k in Counter(table.names).items() if k > 1]
        raise InputFormatError(f"feature names repeat: {repeated[:5]}", path=where)
    unknown = sorted(set(table.groups) - set(GROUPS))
    if unknown:
        raise InputFormatError(f"unknown feature group(s) {unknown}: expected {GROUPS}", path=where)
    blocks = [g for i, g in enumerate(table.groups) if i == 0 or table.groups[i - 1] != g]
    if len(blocks) != len(set(blocks)) or blocks != sorted(blocks, key=GROUPS.index):
        raise InputFormatError(f"feature groups are not contiguous blocks in the order {GROUPS}: "
                               f"{' -> '.join(blocks)}", path=where)
    if len(table) == DEEPSEA_FEATURES:
        for group, (a, b) in DEEPSEA_COLUMNS.items():
            if table.groups[a:b] != (group,) * (b - a):
                raise InputFormatError(f"DeepSEA's columns {a}-{b - 1} must be {group}", path=where)
    return table


def read_table(path: str | Path) -> FeatureTable:
    """A `feature_table.tsv` written by `FeatureTable.write`, validated."""
    path = Path(path)
    lines = path.read_text().splitlines()
    if not lines or tuple(lines[0].split("\t")) != TABLE_HEADER:
        raise InputFormatError(f"expected the header {chr(9).join(TABLE_HEADER)!r}", path=path, line=1)
    rows = []
    for number, line in enumerate(lines[1:], 2):
        fields = line.split("\t")
        if len(fields) != 4:
            raise InputFormatError(f"expected 4 tab-separated fields, got {len(fields)}", path=path, line=number)
        if fields[0] != str(number - 2):
            raise InputFormatError(f"column {fields[0]!r} out of order: expected {number - 2}", path=path,
                                   line=number)
        rows.append(fields[1:])
    names, groups, originals = (tuple(row[i] for row in rows) for i in range(3))
    return check_table(FeatureTable(names, groups, originals, str(path)))


def load_table(path: str | Path) -> FeatureTable:
    """A label table from `feature_table.tsv` or from a raw feature-names file."""
    path = Path(path)
    with open(path) as handle:
        first = handle.readline().rstrip("\r\n")
    return read_table(path) if tuple(first.split("\t")) == TABLE_HEADER else table_from_names(path)


# --- one-hot ---------------------------------------------------------------------------------------------

def decode_onehot(x: np.ndarray, *, what: str = "one-hot rows") -> np.ndarray:
    """(n, 4, L) uint8 one-hot in DeepSEA's A, G, C, T order -> (n, L) ASCII bytes; all-zero -> N.
    A column with more than one 1, or a value other than 0/1, is an error."""
    x = np.asarray(x)
    reject(x.ndim != 3 or x.shape[1] != 4, what, x.shape, "an array (rows, 4, length)")
    hot = x.sum(axis=1)
    if x.size and (x.max() > 1 or hot.max() > 1):
        row = int(np.argwhere((hot > 1) | (x.max(axis=1) > 1))[0][0])
        raise InputFormatError(f"row {row}: a position is not one-hot (A, G, C, T; all zero for N)", record=what)
    out = AGCT[x.argmax(axis=1)]
    out[hot == 0] = ord("N")
    return out


# --- the .mat bundle ---------------------------------------------------------------------------------------

def is_hdf5(path: Path) -> bool:
    """HDF5 (MATLAB v7.3) by content: its signature at offset 0 or after a 512-byte user block."""
    with open(path, "rb") as handle:
        head = handle.read(520)
    signature = b"\x89HDF\r\n\x1a\n"
    return head[:8] == signature or head[512:520] == signature


class BundleSplit:
    """One `.mat` file of the bundle (`features` and `length`, when given, are checked): v7.3 read lazily,
    slab by slab, v5 loaded once (scipy). `half` is N / 2: row i + half is row i's reverse complement.
    """

    def __init__(self, path: str | Path, *, features: int | None = None, length: int | None = None):
        self.path = Path(path)
        if not self.path.is_file():
            raise InputFormatError("no such file", path=self.path)
        self._handle = None
        if is_hdf5(self.path):
            import h5py

            self.version = "7.3"
            try:
                self._handle = h5py.File(self.path, "r")
            except OSError as err:
                problem = "truncated (shorter than its header says: an interrupted download or copy?)" \
                    if "truncated" in str(err) else "not a readable MATLAB v7.3 (HDF5) file"
                raise InputFormatError(f"{problem}: {err}", path=self.path) from None
            self.x_key, self.y_key = self._keys([k for k in self._handle.keys() if not k.startswith("#")])
            x, y = self._handle[self.x_key], self._handle[self.y_key]
            axes, expected = (2, 0, 0), "(length, 4, N) and (features, N)"   # x: rows, length; y: features
        else:
            import scipy.io
            from scipy.io.matlab import MatReadError

            self.version = "5"
            try:
                mat = scipy.io.loadmat(self.path)
            except (ValueError, NotImplementedError, OSError, MatReadError) as err:
                raise InputFormatError(f"not a MATLAB v5 or v7.3 file ({err})", path=self.path) from None
            self.x_key, self.y_key = self._keys([k for k in mat if not k.startswith("__")])
            x, y = mat[self.x_key], mat[self.y_key]
            axes, expected = (0, 2, 1), "(N, 4, length) and (N, features)"
        row_axis, length_axis, feature_axis = axes
        if x.ndim != 3 or x.shape[1] != 4 or y.ndim != 2 or y.shape[1 - feature_axis] != x.shape[row_axis]:
            raise InputFormatError(f"v{self.version} shapes {self.x_key} {x.shape}, {self.y_key} {y.shape}: "
                                   f"expected {expected}", path=self.path)
        self.rows, self.length, self.features = x.shape[row_axis], x.shape[length_axis], y.shape[feature_axis]
        self._x, self._y = x, y
        if features is not None and self.features != features:
            raise InputFormatError(f"{self.y_key} has {self.features} label columns but the label table has "
                                   f"{features} features", path=self.path)
        if length is not None and self.length != length:
            raise InputFormatError(f"{self.x_key} holds {self.length}-bp sequences, expected {length}", path=self.path)
        if self.rows % 2:
            raise InputFormatError(f"{self.rows} rows: expected an even count (forward rows, then their reverse "
                                   "complements)", path=self.path)
        self.half = self.rows // 2

    def _keys(self, keys: list[str]) -> tuple[str, str]:
        xs = [k for k in keys if k.endswith("xdata")]
        if len(xs) != 1 or xs[0][:-5] + "data" not in keys or len(keys) != 2:
            raise InputFormatError(f"keys {sorted(keys)}: expected exactly '<split>xdata' and '<split>data' "
                                   "(e.g. trainxdata, traindata)", path=self.path)
        return xs[0], xs[0][:-5] + "data"

    def read(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows [start, stop): one-hot (n, 4, L) and labels (n, F), uint8."""
        if not 0 <= start <= stop <= self.rows:
            raise ParameterError("(start, stop)", (start, stop), f"0 <= start <= stop <= {self.rows}")
        if self.version == "7.3":
            x = self._x[:, :, start:stop].transpose(2, 1, 0)
            y = self._y[:, start:stop].T
        else:
            x, y = self._x[start:stop], self._y[start:stop]
        return np.ascontiguousarray(x, dtype=np.uint8), np.ascontiguousarray(y, dtype=np.uint8)

    def read_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Any rows, read as the contiguous span that covers them (sorted order kept)."""
        rows = np.asarray(rows, dtype=np.int64)
        if not len(rows):
            return np.zeros((0, 4, self.length), np.uint8), np.zeros((0, self.features), np.uint8)
        low, high = int(rows.min()), int(rows.max()) + 1
        x, y = self.read(low, high)
        return x[rows - low], y[rows - low]

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> BundleSplit:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __getstate__(self) -> dict:    # DataLoader workers reopen the file
        state = dict(self.__dict__)
        if self.version == "7.3":
            state.update(_handle=None, _x=None, _y=None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if self.version == "7.3":
            import h5py

            self._handle = h5py.File(self.path, "r")
            self._x, self._y = self._handle[self.x_key], self._handle[self.y_key]


def open_bundle(paths: dict[str, str | Path], *, features: int | None = None) -> dict[str, BundleSplit]:
    """Each split's `.mat` (split name -> path, training first), every one holding rows as long as the
    first's: a split of another window length is refused, naming its file."""
    opened: dict[str, BundleSplit] = {}
    for split, path in paths.items():
        first = next(iter(opened.values()), None)
        opened[split] = BundleSplit(path, features=features, length=None if first is None else first.length)
    return opened


def slab_order(rows: int, *, slab: int, buffer_slabs: int, seed: int, epoch: int) -> np.ndarray:
    """A permutation of range(rows) read slab-wise: slabs (`slab` contiguous rows) in a random order,
    `buffer_slabs` of them at a time shuffled together. Each buffer spans at most `buffer_slabs` slabs,
    so a reader holding one buffer reads contiguous slabs only; every row appears exactly once."""
    reject(slab < 1 or buffer_slabs < 1, "(slab, buffer_slabs)", (slab, buffer_slabs), "integers >= 1")
    rng = np.random.default_rng((seed, epoch, 0x51AB))
    starts = np.arange(0, rows - rows % slab, slab)
    rng.shuffle(starts)
    if rows % slab:        # a short last slab goes last, so buffers stay aligned with whole slabs
        starts = np.append(starts, rows - rows % slab)
    parts = []
    for first in range(0, len(starts), buffer_slabs):
        members = np.concatenate([np.arange(s, min(rows, s + slab)) for s in starts[first:first + buffer_slabs]])
        parts.append(rng.permutation(members))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
