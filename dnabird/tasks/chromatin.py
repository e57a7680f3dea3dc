"""The chromatin-profile task (DeepSEA; BigBird App. F.3, Table 7; docs/chromatin.md): one sigmoid per
feature of the label table, multi-label BCE with positives weighted, median AUROC per group on test.

- `source: bundle`: the `.mat` rows (1000 bp); `train.mat` is read in slabs shuffled inside a buffer
  (`dnabird.tasks.deepsea.slab_order`), tokenized a buffer at a time; `rc_augment` adds its
  reverse-complement half.
- `source: windows`: `window` bp of the genome centred on each bin of the positions BED, labels from the
  bundle's forward rows. Splits: the file's split column, else DeepSEA's (chr8 + chr9 test; of the rest,
  the first bins train, the next valid, as many as the .mat files hold, inside chr7:30,508,750-35,296,850;
  the remainder unused). A bin in two splits is an error; windows off a chromosome are dropped and counted.
  Tokenized windows are cached in `windows_cache.h5`, keyed by the inputs.

Test examples are scored on both strands, probabilities averaged (forward-only and a k-mer logistic
regression beside); features with no test positive are skipped and counted. Features named in
`long_range_truth` are reported apart, scored on the test bins over their candidate regions.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dnabird.errors import ConfigError, DnabirdError, InputFormatError, reject, require_paths
from dnabird.finetune.baselines import Baseline, kmer_counts
from dnabird.finetune.config import FinetuneConfig
from dnabird.finetune.data import EpochExamples, TaskData, TokenExamples
from dnabird.finetune.report import FORWARD_ROW, MODEL_ROW, multilabel_rows, plot_group_aurocs
from dnabird.finetune.task import Scoring, Task
from dnabird.io import atomic_output, sha256_hex, write_json_atomic
from dnabird.model.task_spec import TaskSpec
from dnabird.tasks.deepsea import GROUPS, BundleSplit, FeatureTable, decode_onehot, load_table, open_bundle, slab_order
from dnabird.tasks.splits import overlap_groups, window_bases

log = logging.getLogger(__name__)

SOURCES = ("bundle", "windows")
MAT_SPLITS = {"train": "train_mat", "validation": "valid_mat", "test": "test_mat"}
SPLIT_NAMES = {"train": "train", "valid": "validation", "validation": "validation", "test": "test"}
DEEPSEA_VALIDATION = ("chr7", 30_508_750, 35_296_850)   # 0-based half-open
LONG_RANGE_GROUP = "long-range"
CACHE_VERSION = 1
_COMPLEMENT = np.zeros(256, dtype=np.uint8)
_COMPLEMENT[list(b"ACGTN")] = list(b"TGCAN")


@dataclass
class ChromatinData:
    """How the chromatin data set is built (the `data:` section of a chromatin config).

    source: "bundle" (the .mat rows, 1000 bp) or "windows" (`window` bp of the genome around each bin).
    features: the feature-names file (or a `feature_table.tsv`); train_mat, valid_mat, test_mat: the
        bundle; bins: the positions BED (windows route; also groups adjacent test bins for the bootstrap);
        genome: the FASTA (windows route); long_range_truth: a truth table whose header names features
        to report apart (the toy's). Inside `dnabird run`, null paths are the `fetch` stage's files.
    window: bp per input on the windows route (8000 in the paper; the bundle's is its own 1000).
    rc_augment: train on both strands (the bundle's reverse-complement half; windows: both strands).
    rc_average: score test examples on both strands and average the probabilities.
    max_train_rows: use only this many training bins (a quick run), null: all.
    slab_rows, buffer_slabs: the bundle's training read: contiguous slabs of `slab_rows` rows, a buffer
        of `buffer_slabs` slabs shuffled together (memory: one buffer of tokenized rows).
    eval_length: tokens per input; null: the longest validation / test input (bundle: among rows with at
        most `max_n_fraction` N) plus one block, rounded up; longer rows are cut and counted.
    cache: keep tokenized windows in `windows_cache.h5` in the run folder (windows route).
    kmer: k of the k-mer logistic-regression baseline; baseline_rows: train rows it is fit on (at most).
    max_n_fraction: windows with a larger share of N are dropped (windows route); bundle rows with more
        do not set the automatic eval_length (N tokenizes one base per token).
    """

    source: str = "bundle"
    features: str | None = None
    train_mat: str | None = None
    valid_mat: str | None = None
    test_mat: str | None = None
    bins: str | None = None
    genome: str | None = None
    long_range_truth: str | None = None
    window: int = 8000
    rc_augment: bool = True
    rc_average: bool = True
    max_train_rows: int | None = None
    slab_rows: int = 2048
    buffer_slabs: int = 8
    eval_length: int | None = None
    cache: bool = True
    kmer: int = 4
    baseline_rows: int = 20000
    max_n_fraction: float = 0.05

    def __post_init__(self):
        reject(self.source not in SOURCES, "data.source", self.source, f"one of {SOURCES}")
        reject(self.window < 200 or self.window % 2, "data.window", self.window, "an even number of bp >= 200")
        reject(self.slab_rows < 1 or self.buffer_slabs < 1, "(data.slab_rows, data.buffer_slabs)",
               (self.slab_rows, self.buffer_slabs), "integers >= 1")
        reject(self.max_train_rows is not None and self.max_train_rows < 1, "data.max_train_rows",
               self.max_train_rows, "a positive integer or null")
        reject(not 1 <= self.kmer <= 8, "data.kmer", self.kmer, "an integer in [1, 8]")


@dataclass
class ChromatinConfig(FinetuneConfig):
    """A chromatin fine-tuning run: the recipe's settings (positives weighted ×8, the model picked by
    validation median AUROC) and how its data is built."""

    positive_weight: float = 8.0
    selection_metric: str = "median_auroc"
    data: ChromatinData = field(default_factory=ChromatinData)


# --- tokenizing ------------------------------------------------------------------------------------------

def encode_rows(sequences: np.ndarray, tokenizer, block_size: int, length: int | None) -> tuple[np.ndarray, int]:
    """`[CLS] seq [SEP]` ids of each row of ASCII bases ([n, L] uint8), padded to `length` (None: the
    longest, rounded up to a block); rows longer than `length` are cut (their [SEP] kept). Returns
    (ids int32 [n, length], rows cut)."""
    texts = [row.tobytes().decode("ascii") for row in sequences]
    rows = tokenizer.encode(texts) if texts else []
    cut = 0 if length is None else sum(len(r) > length - 2 for r in rows)
    ids, _ = tokenizer.pad_batch(rows, block_size=block_size, length=length, truncate=True)
    return ids.astype(np.int32), cut


def reverse_complement_rows(sequences: np.ndarray) -> np.ndarray:
    """Reverse complement of each row of upper-case ASCII bases."""
    return _COMPLEMENT[sequences[:, ::-1]]


class BundleExamples(EpochExamples):
    """Rows 0 … `rows` − 1 of a `.mat` split (the forward half, or both halves), read buffer by buffer in
    `slab_order` and tokenized on load: consecutive indices read one buffer of `buffer_slabs` slabs."""

    def __init__(self, split: BundleSplit, rows: int, tokenizer, *, block_size: int, length: int, slab: int,
                 buffer_slabs: int, seed: int, shuffle: bool = True):
        super().__init__(np.zeros(0), seed=seed, shuffle=shuffle)
        self.split, self.rows, self.tokenizer = split, rows, tokenizer
        self.block_size, self.length, self.slab, self.buffer_slabs = block_size, length, slab, buffer_slabs
        self.buffer_rows = slab * buffer_slabs
        self.truncated = 0
        self._buffer: tuple[int, int, np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return self.rows

    def permutation(self, epoch: int) -> np.ndarray:
        return slab_order(self.rows, slab=self.slab, buffer_slabs=self.buffer_slabs, seed=self.seed, epoch=epoch)

    def load_buffer(self, epoch: int, buffer: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids, labels) of buffer `buffer` of epoch `epoch`, rows in visiting order."""
        if self._buffer is not None and self._buffer[:2] == (epoch, buffer):
            return self._buffer[2], self._buffer[3]
        rows = self.order(epoch)[buffer * self.buffer_rows:(buffer + 1) * self.buffer_rows]
        x = np.empty((len(rows), 4, self.split.length), np.uint8)
        y = np.empty((len(rows), self.split.features), np.uint8)
        slabs = rows // self.slab
        for slab in np.unique(slabs):               # one contiguous read per slab
            first = int(slab) * self.slab
            sx, sy = self.split.read(first, min(self.rows, first + self.slab))
            members = np.flatnonzero(slabs == slab)
            x[members], y[members] = sx[rows[members] - first], sy[rows[members] - first]
        ids, cut = encode_rows(decode_onehot(x, what=str(self.split.path)), self.tokenizer, self.block_size,
                               self.length)
        self.truncated += cut
        self._buffer = (epoch, buffer, ids, y)
        return ids, y

    def __getitem__(self, global_index: int) -> dict[str, np.ndarray]:
        epoch, position = divmod(int(global_index), self.rows)
        buffer, offset = divmod(position, self.buffer_rows)
        ids, y = self.load_buffer(epoch, buffer)
        return {"input_ids": ids[offset].astype(np.int64), "labels": y[offset].astype(np.float32)}

    def example(self, index: int, epoch: int) -> dict[str, np.ndarray]:
        x, y = self.split.read(index, index + 1)
        ids, _ = encode_rows(decode_onehot(x), self.tokenizer, self.block_size, self.length)
        return {"input_ids": ids[0].astype(np.int64), "labels": y[0].astype(np.float32)}


# --- the label table and the features reported apart ---------------------------------------------------------

def long_range_features(path: str | None, table: FeatureTable) -> tuple[list[str], dict[str, list[tuple[int, int]]]]:
    """The features a truth table reports apart (header columns after `region_end`, each checked against
    the label table) and its candidate regions by chromosome: the bins over them are the examples those
    features are scored on (among them, only the partner decides the label)."""
    if path is None:
        return [], {}
    lines = Path(path).read_text().splitlines()
    header = lines[0].split("\t") if lines else []
    if not {"chrom", "region_start", "region_end"} <= set(header):
        raise InputFormatError("expected a header with chrom, region_start, region_end, then the long-range "
                               "features", path=path, line=1)
    names = header[header.index("region_end") + 1:]
    for name in names:
        if name not in table.names:
            raise InputFormatError(f"feature {name!r} is not in the label table {table.path}", path=path, line=1)
    regions: dict[str, list[tuple[int, int]]] = {}
    c, a, b = header.index("chrom"), header.index("region_start"), header.index("region_end")
    for number, line in enumerate(lines[1:], 2):
        fields = line.split("\t")
        try:
            regions.setdefault(fields[c], []).append((int(fields[a]), int(fields[b])))
        except (IndexError, ValueError):
            raise InputFormatError(f"expected {len(header)} fields with integer regions", path=path,
                                   line=number) from None
    return names, regions


def candidate_mask(chroms, starts, ends, regions: dict[str, list[tuple[int, int]]]) -> np.ndarray:
    """Bins with more than 100 bp inside a candidate region (DeepSEA's overlap rule)."""
    return np.array([any(min(end, r1) - max(start, r0) > 100 for r0, r1 in regions.get(str(chrom), ()))
                     for chrom, start, end in zip(chroms, starts, ends, strict=True)], dtype=bool)


def report_groups(table: FeatureTable, apart: list[str]) -> dict[str, list[str]]:
    """Local features by group (DNase, TF, HM), then the ones reported apart."""
    groups = {g: [m for m in table.members(g) if m not in apart] for g in GROUPS}
    groups = {g: members for g, members in groups.items() if members}
    if apart:
        groups[LONG_RANGE_GROUP] = list(apart)
    return groups


# --- the windows route ---------------------------------------------------------------------------------------

@dataclass
class Bin:
    chrom: str
    start: int
    end: int
    split: str
    row: int          # the forward row of this bin in its split's .mat file


def read_bins(path: str | Path, halves: dict[str, int], counts: Counter) -> list[Bin]:
    """The bins of a positions BED, each with its split and .mat row (module docstring's rules)."""
    path = Path(path)
    bins, rows = [], Counter()
    deepsea_order = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith(("#", "track", "browser")):
            continue
        fields = line.split("\t")
        try:
            chrom, start, end = fields[0], int(fields[1]), int(fields[2])
        except (IndexError, ValueError):
            raise InputFormatError(f"expected chrom, start, end, got {line[:80]!r}", path=path, line=number) from None
        if not 0 <= start < end:
            raise InputFormatError(f"bin [{start}, {end}) is empty or negative", path=path, line=number)
        if len(fields) > 3 and fields[3] in SPLIT_NAMES:
            split = SPLIT_NAMES[fields[3]]
            bins.append(Bin(chrom, start, end, split, rows[split]))
            rows[split] += 1
        else:
            deepsea_order.append((chrom, start, end, number))
    if bins and deepsea_order:
        raise InputFormatError("some bins carry a split column and some do not", path=path,
                               line=deepsea_order[0][3])
    for chrom, start, end, number in deepsea_order:   # DeepSEA's allTFs.pos.bed: splits by position in the file
        if chrom in ("chr8", "chr9"):
            split = "test"
        elif rows["train"] < halves["train"]:
            split = "train"
        elif rows["validation"] < halves["validation"]:
            split = "validation"
            v_chrom, v_start, v_end = DEEPSEA_VALIDATION
            if chrom != v_chrom or not v_start <= start < v_end:
                raise InputFormatError(f"validation bin {chrom}:{start}-{end} lies outside {v_chrom}:{v_start}-"
                                       f"{v_end}: the file does not line up with the .mat files", path=path,
                                       line=number)
        else:
            counts["bins_unused"] += 1
            continue
        bins.append(Bin(chrom, start, end, split, rows[split]))
        rows[split] += 1
    for split, half in halves.items():
        if rows[split] != half:
            raise InputFormatError(f"lists {rows[split]} {split} bins but the {split} .mat file holds {half} "
                                   "forward rows: labels and bins would not line up", path=path)
    seen: dict[tuple[str, int, int], str] = {}
    for b in bins:
        key = (b.chrom, b.start, b.end)
        if seen.setdefault(key, b.split) != b.split:
            raise InputFormatError(f"bin {b.chrom}:{b.start}-{b.end} is in both the {seen[key]} and {b.split} "
                                   "splits", path=path)
    return bins


def _cache_key(data: ChromatinData, tokenizer, block_size: int, paths: list[str]) -> str:
    stats = [(Path(p).resolve(), Path(p).stat()) for p in paths]
    files = "".join(f"{path}:{stat.st_size}:{stat.st_mtime_ns};" for path, stat in stats)
    return sha256_hex(files + json.dumps([CACHE_VERSION, data.window, data.max_n_fraction, tokenizer.hash,
                                          block_size, data.max_train_rows]))


def window_sequences(genome, bins: list[Bin], window: int, max_n_fraction: float,
                     counts: Counter) -> tuple[list[Bin], list[np.ndarray]]:
    """`window` bp centred on each bin (upper case); windows off a chromosome end or with too many N are
    dropped and counted; a chromosome absent from the genome is an error."""
    kept, sequences = [], []
    for b in bins:
        if b.chrom not in genome:
            raise InputFormatError(f"bin {b.chrom}:{b.start}-{b.end}: chromosome not in the genome", path=genome.path)
        start = (b.start + b.end) // 2 - window // 2
        sequence = window_bases(genome, b.chrom, start, start + window, "+", max_n_fraction, counts)
        if sequence is not None:
            kept.append(b)
            sequences.append(sequence)
    return kept, sequences


def build_windows(config: ChromatinConfig, table: FeatureTable, tokenizer, block_size: int, out_dir: Path,
                  counts: Counter) -> dict[str, dict[str, np.ndarray]]:
    """Per split: ids (forward), ids_rc, labels, chrom, start, end; from the HDF5 cache when it matches."""
    import h5py

    from dnabird.genome.reference import Genome

    data = config.data
    require_paths(config, ("data.genome", "data.bins"), where="the windows route needs it")
    mats = {split: getattr(data, key) for split, key in MAT_SPLITS.items()}
    cache_path = out_dir / "windows_cache.h5"
    key = _cache_key(data, tokenizer, block_size, [data.genome, data.bins, *mats.values()])
    if data.cache and cache_path.is_file():
        with h5py.File(cache_path, "r") as handle:
            if handle.attrs.get("key") == key:
                counts.update(json.loads(handle.attrs["counts"]))
                log.info("tokenized windows read from %s", cache_path)
                return {split: {k: v[()] for k, v in handle[split].items()} for split in MAT_SPLITS}
    opened = {split: BundleSplit(path, features=len(table)) for split, path in mats.items()}
    bins = read_bins(data.bins, {split: s.half for split, s in opened.items()}, counts)
    genome = Genome(data.genome, soft_mask="upper")
    out = {}
    local: Counter = Counter()
    for split in MAT_SPLITS:
        chosen = [b for b in bins if b.split == split]
        if split == "train" and data.max_train_rows is not None:
            chosen = chosen[:data.max_train_rows]
        chosen, sequences = window_sequences(genome, chosen, data.window, data.max_n_fraction, local)
        if not chosen:
            raise DnabirdError(f"{data.bins}: no {split} window is left (dropped: {dict(local)})")
        rows = np.array([b.row for b in chosen])
        labels = np.concatenate([opened[split].read_rows(rows[i:i + 4096])[1] for i in range(0, len(rows), 4096)])
        forward = np.stack(sequences)
        ids, _ = encode_rows(forward, tokenizer, block_size, None)
        ids_rc, _ = encode_rows(reverse_complement_rows(forward), tokenizer, block_size, None)
        width = max(ids.shape[1], ids_rc.shape[1])
        out[split] = {"ids": _pad_to(ids, width, tokenizer.pad_id), "ids_rc": _pad_to(ids_rc, width, tokenizer.pad_id),
                      "labels": labels, "chrom": np.array([b.chrom for b in chosen], dtype="S"),
                      "start": np.array([b.start for b in chosen]), "end": np.array([b.end for b in chosen])}
    for s in opened.values():
        s.close()
    counts.update(local)
    if data.cache:
        with atomic_output(cache_path) as tmp, h5py.File(tmp, "w") as handle:
            handle.attrs["key"] = key
            handle.attrs["counts"] = json.dumps(dict(counts))
            for split, arrays in out.items():
                group = handle.create_group(split)
                for name, array in arrays.items():
                    group.create_dataset(name, data=array, compression="gzip" if name.startswith("ids") else None)
    return out


# --- building the task ------------------------------------------------------------------------------------------

def _pad_to(ids: np.ndarray, length: int, pad_id: int) -> np.ndarray:
    if ids.shape[1] > length:
        raise DnabirdError(f"inputs of {ids.shape[1]} tokens do not fit data.eval_length={length}")
    return np.pad(ids, ((0, 0), (0, length - ids.shape[1])), constant_values=pad_id)


def _eval_length(data: ChromatinData, longest: int, block_size: int) -> int:
    if data.eval_length is not None:
        reject(data.eval_length % block_size, "data.eval_length", data.eval_length,
               f"a multiple of the block size {block_size}")
        return data.eval_length
    return -(-(longest + 1) // block_size) * block_size + (block_size if data.source == "bundle" else 0)


@dataclass
class ChromatinTaskData(TaskData):
    """`TaskData` with what the chromatin report adds.

    test_reverse: the test examples reverse-complemented, slot for slot: the report averages both strands'
        probabilities, forward-only beside (None: forward only).
    report_groups: label groups given a median AUROC (None: spec.label_groups).
    baseline_labels: the labels of the baseline's train rows (None: `train.labels`).
    report_masks: group -> boolean mask of the test examples that group is scored on (others: every one).
    """

    test_reverse: EpochExamples | None = None
    report_groups: dict[str, list[str]] | None = None
    baseline_labels: np.ndarray | None = None
    report_masks: dict[str, np.ndarray] | None = None


def build(config: ChromatinConfig, tokenizer, *, block_size: int, out_dir: str | Path) -> ChromatinTaskData:
    """The chromatin `TaskData` (module docstring); writes `feature_table.tsv` and `data_summary.json`."""
    data, out_dir = config.data, Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    require_paths(config, [f"data.{name}" for name in ("features", *MAT_SPLITS.values())])
    table = load_table(data.features)
    table.write(out_dir / "feature_table.tsv")
    apart, regions = long_range_features(data.long_range_truth, table)
    test_bins = None      # (chroms, starts, ends) of the test examples, when known
    counts: Counter = Counter()
    pad = tokenizer.pad_id
    if data.source == "windows":
        arrays = build_windows(config, table, tokenizer, block_size, out_dir, counts)
        longest = max(a[k].shape[1] for a in arrays.values() for k in ("ids", "ids_rc"))
        eval_length = _eval_length(data, longest, block_size)
        train = arrays["train"]
        train_ids = np.concatenate([train["ids"], train["ids_rc"]]) if data.rc_augment else train["ids"]
        train_labels = np.concatenate([train["labels"]] * (2 if data.rc_augment else 1))
        train_set = TokenExamples(_pad_to(train_ids, eval_length, pad), train_labels.astype(np.float32),
                                  seed=config.seed, shuffle=True)
        fixed = {split: (_pad_to(arrays[split]["ids"], eval_length, pad),
                         _pad_to(arrays[split]["ids_rc"], eval_length, pad), arrays[split]["labels"])
                 for split in ("validation", "test")}
        test = arrays["test"]
        test_bins = (test["chrom"].astype(str), test["start"], test["end"])
        window = data.window
        baseline_text = [_decode_ids(tokenizer, ids) for ids in (train["ids"][:data.baseline_rows], test["ids"])]
        baseline_labels = train["labels"][:data.baseline_rows]
        sizes = {split: len(a["labels"]) for split, a in arrays.items()}
    else:
        opened = open_bundle({split: getattr(data, key) for split, key in MAT_SPLITS.items()}, features=len(table))
        window = opened["test"].length
        fixed_x = {}
        for split in ("validation", "test"):
            x, y = opened[split].read(0, opened[split].rows)
            half = opened[split].half
            text = decode_onehot(x, what=str(opened[split].path))
            fixed_x[split] = (text[:half], text[half:], y[:half])
            if not np.array_equal(y[:half], y[half:]):
                raise InputFormatError("labels of row i and row i + N/2 differ: not forward rows followed by their "
                                       "reverse complements", path=opened[split].path)
        # the longest input among rows with few N sets the length; N-rich rows (one token per N) are cut
        longest = 0
        for f, _, _ in fixed_x.values():
            ids, _ = encode_rows(f, tokenizer, block_size, None)
            clean = (f == ord("N")).mean(axis=1) <= data.max_n_fraction
            lengths = (ids != pad).sum(axis=1)
            longest = max(longest, int(lengths[clean].max()) if clean.any() else int(lengths.max()))
        eval_length = _eval_length(data, longest, block_size)
        fixed = {}
        for split, (f, r, y) in fixed_x.items():
            (ids_f, cut_f), (ids_r, cut_r) = (encode_rows(rows, tokenizer, block_size, eval_length) for rows in (f, r))
            counts[f"{split}_rows_cut"] += cut_f + cut_r
            fixed[split] = (ids_f, ids_r, y)
        source = opened["train"]
        rows = source.half if data.max_train_rows is None else min(source.half, data.max_train_rows)
        if data.rc_augment and data.max_train_rows is None:
            rows = source.rows      # forward half, then the reverse-complement half
        train_set = BundleExamples(source, rows, tokenizer, block_size=block_size, length=eval_length,
                                   slab=data.slab_rows, buffer_slabs=data.buffer_slabs, seed=config.seed)
        bx, baseline_labels = source.read(0, min(source.half, data.baseline_rows))
        baseline_text = [decode_onehot(bx), fixed_x["test"][0]]
        if data.bins is not None:
            try:
                listed = [b for b in read_bins(data.bins, {s: o.half for s, o in opened.items()}, Counter())
                          if b.split == "test"]
            except InputFormatError as err:
                log.warning("bins file not used for bootstrap clusters: %s", err)
            else:
                test_bins = tuple(np.array([getattr(b, key) for b in listed]) for key in ("chrom", "start", "end"))
        sizes = {**{split: o.half for split, o in opened.items()}, "train_rows_read": rows}
        for split in ("validation", "test"):
            opened[split].close()
    # adjacent or overlapping bins share a cluster (bootstrap resamples whole clusters)
    clusters = None if test_bins is None else overlap_groups(*test_bins[:2], test_bins[2] + 1)
    validation = TokenExamples(fixed["validation"][0], fixed["validation"][2].astype(np.float32))
    test_set = TokenExamples(fixed["test"][0], fixed["test"][2].astype(np.float32))
    test_reverse = TokenExamples(fixed["test"][1], fixed["test"][2].astype(np.float32)) if data.rc_average else None
    spec = TaskSpec(task="chromatin", problem="multilabel", labels=list(table.names), label_groups=table.by_group(),
                    eval_length=int(eval_length), window_length=int(window), anchor="centre",
                    strand_rule="both" if data.rc_average else "forward", tokenizer_hash=tokenizer.hash)
    test_labels = fixed["test"][2]
    summary = {"source": data.source, "features": table.counts(), "long_range_features": apart,
               "examples": sizes, "dropped": dict(counts), "eval_length": int(eval_length), "window": int(window),
               "rc_augment": data.rc_augment, "rc_average": data.rc_average,
               "test_positives": {name: int(test_labels[:, k].sum()) for k, name in enumerate(table.names)},
               "baseline": f"{data.kmer}-mer counts, one logistic regression per feature, "
                           f"{len(baseline_labels)} train rows"}
    masks = None
    if apart:
        reject(test_bins is None, "data.bins", None,
               "the positions BED: long-range features are scored on the bins of their candidate regions")
        masks = {LONG_RANGE_GROUP: candidate_mask(*test_bins, regions)}
        summary["long_range_candidates"] = int(masks[LONG_RANGE_GROUP].sum())
    write_json_atomic(out_dir / "data_summary.json", summary)
    if spec.num_outputs != len(table):
        raise ConfigError("the model's outputs must come from the label table")
    baseline = Baseline(*(kmer_counts(text, data.kmer) for text in baseline_text))
    return ChromatinTaskData(spec, train_set, validation, test_set, test_groups=clusters,
                             baseline_features={f"{data.kmer}-mer": baseline}, summary=summary,
                             test_reverse=test_reverse, report_groups=report_groups(table, apart),
                             baseline_labels=np.asarray(baseline_labels), report_masks=masks)


def _decode_ids(tokenizer, ids: np.ndarray) -> np.ndarray:
    """Token rows back to ASCII bases (equal lengths: the windows' own bp), for the k-mer baseline."""
    texts = [tokenizer.decode(row[row != tokenizer.pad_id]) for row in ids]
    width = max(len(t) for t in texts)
    return np.stack([np.frombuffer(t.ljust(width, "N").encode("ascii"), np.uint8) for t in texts])


def report(data: ChromatinTaskData, config: ChromatinConfig, scoring: Scoring) -> dict:
    """The median AUROC and AUPRC per feature group on test (both strands averaged, forward-only beside), each
    k-mer baseline's, with cluster bootstrap intervals; auroc_by_group.png."""
    labels, scores, loss = scoring.predict(data.test)
    groups = data.report_groups or data.spec.label_groups
    row_scores = {MODEL_ROW: scores}
    if data.test_reverse is not None:
        _, reverse, _ = scoring.predict(data.test_reverse)
        row_scores = {MODEL_ROW: (scores + reverse) / 2, FORWARD_ROW: scores}
    train_labels = data.train.labels if data.baseline_labels is None else data.baseline_labels
    for name, baseline in data.baseline_features.items():
        row_scores[f"{name} baseline"] = baseline.scores(train_labels, seed=config.seed)
    rows = multilabel_rows(labels, row_scores, data.spec.labels, groups, clusters=data.test_groups,
                           resamples=config.bootstrap_resamples, seed=config.seed, masks=data.report_masks)
    plot_group_aurocs(rows[MODEL_ROW], groups, Path(config.train.out_dir) / "auroc_by_group.png")
    return {"test": {"loss": loss, "rows": rows}, "token_lengths": {}}


class Chromatin(Task):
    """The chromatin task (module docstring); its stage's null paths come from the `fetch` stage's files."""

    name, config = "chromatin", ChromatinConfig
    stage_inputs = {"data.features": ("fetch", "feature_names"), "data.train_mat": ("fetch", "train_mat"),
                    "data.valid_mat": ("fetch", "valid_mat"), "data.test_mat": ("fetch", "test_mat"),
                    "pretrained": ("pretrain", "model"), "tokenizer": ("tokenizer", "model")}
    # filled from the fetch stage when it has them (the toy does), else left null
    optional_inputs = {"data.bins": ("fetch", "deepsea_bins"), "data.genome": ("fetch", "fasta"),
                       "data.long_range_truth": ("fetch", "long_range_truth")}
    outputs = {"boxplot": "auroc_by_group.png"}
    build, report = staticmethod(build), staticmethod(report)


TASK = Chromatin()
