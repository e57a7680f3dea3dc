"""The `labelled` task (docs/own-data.md): fine-tune on one's own labelled sequences or regions, read without
code by `dnabird.data.labelled` — sequence tables, FASTA with `|label` headers, region tables with a genome,
per-class interval files.

- Splits: as the files or a `split` column give them; the splits not given are drawn from the rest: regions
  by chromosome (`validation_chromosomes`, `test_chromosomes`) or else at random by groups of overlapping
  regions, sequences at random with identical sequences (or reverse complements) kept together.
- Problem: inferred from the labels (`dnabird.data.labelled.infer_problem`) unless `problem` names it; losses
  BCE (`pos_weight`), cross-entropy (`class_weights`), MSE, Poisson NLL; regression targets may be log1p'd
  and standardised (fitted on train), the transform recorded in task.json.
- Leakage (`dnabird.data.leakage`) counted before training into report.json's `data.leakage`, with a warning
  above `leakage.warn_fraction` and, with `leakage.drop`, the flagged examples dropped and listed.
- Inputs longer than `eval_length` (the model's length): refused naming the row, or centre-cropped, by
  `long_inputs`; never silently truncated. Shorter ones are padded.
- Rows skipped (a region on an unknown chromosome or past a contig end) and dropped are listed beside the
  outputs: `skipped.tsv`, `leakage_dropped.tsv`; `examples.tsv` lists every example used, by split.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dnabird.data.labelled import (
    LabelledTable,
    Labels,
    concat,
    infer_problem,
    label_values,
    read_labelled,
    region_sequences,
    split_entries,
    where,
)
from dnabird.data.leakage import CHECKS, Leakage, canonical_digest, pretraining_chromosomes, summarise
from dnabird.errors import ConfigError, DnabirdError, InputFormatError, reject
from dnabird.finetune.baselines import Baseline, kmer_counts
from dnabird.finetune.config import FROM_SCRATCH, FinetuneConfig
from dnabird.finetune.data import LossSpec, TaskData, TokenExamples
from dnabird.finetune.task import Task
from dnabird.io import write_text_atomic
from dnabird.model.targets import TargetTransform
from dnabird.model.task_spec import REGRESSION, TaskSpec
from dnabird.tasks.splits import SPLITS, chromosome_split, overlap_groups, random_split

log = logging.getLogger(__name__)

LONG_INPUTS = ("refuse", "centre_crop")
LOSSES = {"binary": ("bce",), "multilabel": ("bce",), "multiclass": ("cross_entropy",),
          REGRESSION: ("mse", "poisson")}
BALANCED = "balanced"


@dataclass
class LabelledData:
    """Where the labelled examples are and how they become a task (the `data:` section; docs/own-data.md).

    path: one file (all examples; a `split` column assigns them) or a folder holding `train`, `dev`/`validation`
        and `test` files (`.csv`, `.tsv`, `.parquet`, `.bed`, `.fa`/`.fna`, gzipped or not) or per-class folders;
        or name the split files in train, validation, test instead.
    genome: the genome FASTA of region tables.
    sequence_column: the sequence column (null: `sequence` or `seq`); label_columns: the label columns (null:
        `label`, else every column not reserved for coordinates, ids or the split).
    problem: binary, multiclass, multilabel or regression (null: inferred from the labels, integers up to
        max_classes distinct values being classes); positive_class: a binary problem's positive class (null:
        the last in order, `1` of 0/1).
    window_length: regions: a window of this many bp centred on each region (null: the region itself).
    long_inputs: an input longer than eval_length tokens is an error naming it ("refuse") or cut to its centre
        ("centre_crop").
    eval_length: tokens per input, a block multiple (null: the smallest fitting every input, at most the model's).
    validation_chromosomes, test_chromosomes: regions of splits not given go to these chromosomes' splits (null:
        at random by groups of overlapping regions); split_fractions: train, validation, test shares of a random
        split (seeded by the run's seed).
    loss: bce, cross_entropy, mse or poisson (null: bce for binary and multilabel, cross_entropy for multiclass,
        mse for regression); pos_weight: bce's weight of positives, one per output or "balanced" (negatives /
        positives in train); class_weights: cross-entropy's weight per class, or "balanced".
    log1p, standardise: regression targets log1p'd, then standardised per target (mean and std of train);
        recorded in task.json and undone on prediction. Not standardised under a Poisson loss.
    kmer: k of the k-mer count baseline.
    """

    path: str | None = None
    train: str | None = None
    validation: str | None = None
    test: str | None = None
    genome: str | None = None
    sequence_column: str | None = None
    label_columns: list[str] | None = None
    problem: str | None = None
    positive_class: str | None = None
    max_classes: int = 50
    window_length: int | None = None
    long_inputs: str = "refuse"
    eval_length: int | None = None
    validation_chromosomes: list[str] | None = None
    test_chromosomes: list[str] | None = None
    split_fractions: list[float] = field(default_factory=lambda: [0.8, 0.1, 0.1])
    loss: str | None = None
    pos_weight: list[float] | str | None = None
    class_weights: list[float] | str | None = None
    log1p: bool = False
    standardise: bool = False
    kmer: int = 4

    def __post_init__(self):
        given = [name for name in SPLITS if getattr(self, name) is not None]
        reject(self.path is not None and bool(given), "data.path", self.path,
               f"null when the split files are named ({', '.join(given)})")
        reject(self.problem is not None and self.problem not in LOSSES, "data.problem", self.problem,
               f"one of {sorted(LOSSES)}, or null to infer it from the labels")
        reject(self.long_inputs not in LONG_INPUTS, "data.long_inputs", self.long_inputs, f"one of {LONG_INPUTS}")
        reject(self.window_length is not None and self.window_length < 1, "data.window_length", self.window_length,
               "a window in bp >= 1, or null for the regions themselves")
        known = sorted({loss for losses in LOSSES.values() for loss in losses})
        reject(self.loss is not None and self.loss not in known, "data.loss", self.loss, f"one of {known}, or null")
        for name in ("pos_weight", "class_weights"):
            value = getattr(self, name)
            reject(isinstance(value, str) and value != BALANCED or isinstance(value, list) and
                   any(w <= 0 for w in value), f"data.{name}", value, f"positive weights, {BALANCED!r} or null")
        reject(self.max_classes < 2, "data.max_classes", self.max_classes, "an integer >= 2")
        reject(not 1 <= self.kmer <= 8, "data.kmer", self.kmer, "an integer in [1, 8]")


@dataclass
class LeakageConfig:
    """The leakage check (`dnabird.data.leakage`). kmer: the shared k-mer length (0: no k-mer check);
    warn_fraction: warn when a check flags more than this share of the validation or test examples;
    drop: drop every flagged validation and test example (listed in leakage_dropped.tsv)."""

    kmer: int = 32
    warn_fraction: float = 0.01
    drop: bool = False

    def __post_init__(self):
        reject(not 0 <= self.kmer <= 32, "leakage.kmer", self.kmer, "an integer in [0, 32] (0: no k-mer check)")
        reject(not 0 <= self.warn_fraction <= 1, "leakage.warn_fraction", self.warn_fraction, "a fraction in [0, 1]")


@dataclass
class LabelledConfig(FinetuneConfig):
    """A fine-tuning run on one's own labelled data: the recipe's settings, the data and the leakage check."""

    data: LabelledData = field(default_factory=LabelledData)
    leakage: LeakageConfig = field(default_factory=LeakageConfig)


def read_examples(data: LabelledData) -> LabelledTable:
    """Every example of the configured files as one table, with a `split` column (None where not given)."""
    options = {"sequence_column": data.sequence_column, "label_columns": data.label_columns}
    named = {name: getattr(data, name) for name in SPLITS if getattr(data, name) is not None}
    if not named:
        reject(data.path is None, "data.path", None, "a labelled file or folder, or the files of data.train, "
               "data.validation and data.test")
        path = Path(data.path)
        entries = split_entries(path) if path.is_dir() else {}
        if not entries:
            table = read_labelled(path, **options)
            if "split" not in table.frame:
                table.frame["split"] = None
            return table
        named = entries
    reject("train" not in named, "data.train", None, "a training file (the train split)")
    tables = [read_labelled(path, **options) for path in named.values()]
    return concat(tables, list(named))


def _skip_rows(table: LabelledTable, rows: dict[int, str], out_dir: Path, name: str) -> LabelledTable:
    """`table` without `rows` (index -> reason), which are listed in `out_dir/name` (the file is always written)."""
    frame = table.frame
    listed = frame.iloc[sorted(rows)].drop(columns=["sequence"], errors="ignore").copy()
    listed.insert(0, "reason", [rows[i] for i in sorted(rows)])
    write_text_atomic(out_dir / name, listed.to_csv(sep="\t", index=False))
    kept = frame.drop(index=frame.index[sorted(rows)]).reset_index(drop=True)
    kept.attrs = frame.attrs
    return LabelledTable(kept, table.kind)


def assign_splits(table: LabelledTable, data: LabelledData, seed: int) -> np.ndarray:
    """Each row's split: as given; rows without one are train, and a validation or test split no row names is
    drawn from train (module docstring)."""
    frame = table.frame
    assigned = frame["split"].to_numpy(dtype=object).copy()
    unassigned = np.array([s is None or s == "" or s != s for s in assigned])
    missing = [name for name in ("validation", "test") if name not in set(assigned[~unassigned])]
    assigned[unassigned] = "train"
    named = {"validation": data.validation_chromosomes, "test": data.test_chromosomes}
    if table.kind == "regions" and any(named[name] for name in missing):
        drawn = chromosome_split(frame["chrom"], test=named["test"] or [], validation=named["validation"] or [])
        chosen = (assigned == "train") & np.isin(drawn, [name for name in missing if named[name]])
        assigned[chosen] = drawn[chosen]
        missing = [name for name in missing if not named[name]]
    if not missing:
        return assigned
    rows = np.flatnonzero(assigned == "train")
    if table.kind == "regions":
        groups = overlap_groups(frame["chrom"].to_numpy()[rows], frame["start"].to_numpy()[rows],
                                frame["end"].to_numpy()[rows])
    else:   # identical sequences and reverse complements stay in one split
        index: dict[bytes, int] = {}
        groups = np.array([index.setdefault(canonical_digest(frame["sequence"].iat[i]), len(index)) for i in rows])
    fractions = np.array([f if name in ("train", *missing) else 0.0
                          for name, f in zip(SPLITS, data.split_fractions, strict=True)])
    reject(fractions.sum() <= 0, "data.split_fractions", data.split_fractions, "some share for the splits drawn")
    assigned[rows] = random_split(groups, fractions=fractions / fractions.sum(), seed=seed)
    return assigned


def _check_classes(labels: Labels, problem: str, splits: np.ndarray, files: str) -> None:
    """Every split holds every class (binary, multiclass); an error naming the split and class otherwise."""
    if problem not in ("binary", "multiclass"):
        return
    classes = ["negative", labels.names[0]] if problem == "binary" else list(labels.names)
    for split in SPLITS:
        present = set(labels.values[splits == split].astype(np.int64).tolist())
        absent = [name for i, name in enumerate(classes) if i not in present]
        if absent:
            raise DnabirdError(f"{files}: the {split} split holds no example of class(es) {absent} "
                               f"({int((splits == split).sum())} examples); every split needs every class — "
                               "change the splits or data.split_fractions")


def _label_keys(labels: np.ndarray) -> list:
    return [tuple(np.atleast_1d(v).tolist()) for v in labels]


def check_leakage(table: LabelledTable, sequences: list[str], labels: np.ndarray, splits: np.ndarray,
                  settings: LeakageConfig) -> tuple[dict, dict[str, np.ndarray]]:
    """The leakage summary of the validation and test splits against train, and each split's flags (by check)."""
    keys = _label_keys(labels)
    regions = table.kind == "regions"
    frame = table.frame

    def part(split: str) -> dict:
        rows = np.flatnonzero(splits == split)
        out = {"sequences": [sequences[i] for i in rows], "labels": [keys[i] for i in rows]}
        if regions:
            out["regions"] = (frame["chrom"].to_numpy()[rows], frame["window_start"].to_numpy()[rows],
                              frame["window_end"].to_numpy()[rows])
            out["coordinates"] = (frame["chrom"].to_numpy()[rows], frame["start"].to_numpy()[rows],
                                  frame["end"].to_numpy()[rows])
        return out

    train = part("train")
    reference = Leakage(train["sequences"], train["labels"], k=settings.kmer, regions=train.get("regions"),
                        coordinates=train.get("coordinates"))
    summary = {"kmer": settings.kmer, "warn_fraction": settings.warn_fraction,
               "train_duplicates": reference.train_duplicates}
    flags = {}
    for split in ("validation", "test"):
        other = part(split)
        flags[split] = reference.check(other["sequences"], other["labels"], regions=other.get("regions"),
                                       coordinates=other.get("coordinates"))
        summary[split] = summarise(flags[split], len(other["sequences"]))
    warnings = [f"{split}: {summary[split][check]['count']} of {summary[split]['examples']} examples "
                f"({100 * summary[split][check]['fraction']:.1f} %) {check.replace('_', ' ')}"
                for split in ("validation", "test") for check in CHECKS
                if check in summary[split] and summary[split][check]["fraction"] > settings.warn_fraction]
    summary["warnings"] = warnings
    return summary, flags


def pretraining_overlap(config: LabelledConfig, table: LabelledTable, splits: np.ndarray) -> dict:
    """Whether the test regions' chromosomes were in the pretraining corpus, where the checkpoint records it."""
    if table.kind != "regions":
        return {"checked": False, "reason": "sequence inputs carry no chromosomes"}
    if config.pretrained in (None, FROM_SCRATCH):
        return {"checked": False, "reason": "no pretrained checkpoint"}
    chromosomes, source = pretraining_chromosomes(config.pretrained)
    if chromosomes is None:
        return {"checked": False, "reason": source}
    test = sorted(set(table.frame["chrom"][splits == "test"]))
    seen = sorted(c for c in test if c in set(chromosomes))
    out = {"checked": True, "source": source, "pretraining_chromosomes": chromosomes,
           "test_chromosomes": test, "test_chromosomes_pretrained_on": seen}
    if seen:
        out["warning"] = (f"test chromosomes {seen} were in the pretraining corpus of {config.pretrained}: the "
                          "encoder has seen the test sequences (unlabelled)")
    return out


def _crop_to_fit(sequence: str, tokenizer, max_tokens: int) -> str:
    """The longest centred part of `sequence` whose `[CLS] … [SEP]` fits `max_tokens` tokens."""
    low, high = 0, len(sequence)          # low fits (empty), high does not
    while high - low > 1:
        length = (low + high) // 2
        first = (len(sequence) - length) // 2
        if len(tokenizer.encode([sequence[first:first + length]])[0]) + 2 <= max_tokens:
            low = length
        else:
            high = length
    first = (len(sequence) - low) // 2
    return sequence[first:first + low]


def fit_inputs(table: LabelledTable, sequences: list[str], tokenizer, max_tokens: int,
               policy: str) -> tuple[list[str], list[list[int]], int]:
    """Token ids of every input within `max_tokens` (with [CLS] and [SEP]) under the long-input `policy`;
    returns (sequences as used, their token ids, how many were cropped)."""
    ids = tokenizer.encode(sequences)
    cropped = 0
    for i, row in enumerate(ids):
        if len(row) + 2 <= max_tokens:
            continue
        if policy == "refuse":
            raise InputFormatError(f"input of {len(sequences[i])} bp is {len(row) + 2} tokens with [CLS] and [SEP], "
                                   f"longer than the model's {max_tokens}; set data.long_inputs=centre_crop to "
                                   "keep its centre, or shorten it", **where(table.frame.iloc[i]))
        sequences[i] = _crop_to_fit(sequences[i], tokenizer, max_tokens)
        ids[i] = tokenizer.encode([sequences[i]])[0]
        cropped += 1
    return sequences, ids, cropped


def target_transform(data: LabelledData, targets: np.ndarray, loss: str) -> TargetTransform:
    """The regression targets' transform, fitted on the training `targets` [N, K] (user's scale)."""
    link = "exp" if loss == "poisson" else "identity"
    if loss == "poisson":
        reject(data.standardise, "data.standardise", True, "false under a Poisson loss (its targets are counts)")
    if (data.log1p or loss == "poisson") and (targets < 0).any():
        raise DnabirdError(f"{'log1p' if data.log1p else 'a Poisson loss'} needs targets >= 0; the training "
                           f"targets reach {targets.min():g}")
    if not data.standardise:
        return TargetTransform(log1p=data.log1p, link=link)
    scaled = np.log1p(targets) if data.log1p else targets
    std = scaled.std(axis=0)
    reject(bool((std == 0).any()), "data.standardise", True, "targets that vary in train (a target is constant)")
    return TargetTransform(log1p=data.log1p, mean=tuple(scaled.mean(axis=0)), std=tuple(std), link=link)


def loss_spec(data: LabelledData, problem: str, labels: np.ndarray, outputs: int,
              positive_weight: float = 1.0) -> LossSpec:
    """The loss and its weights for `problem`, "balanced" weights counted on the training `labels`; without
    `data.pos_weight` a bce loss weighs every output's positives by the run's `positive_weight`."""
    kind = data.loss or LOSSES[problem][0]
    reject(kind not in LOSSES[problem], "data.loss", kind, f"one of {LOSSES[problem]} for a {problem} problem")
    pos_weight = (positive_weight,) * outputs if kind == "bce" and positive_weight != 1 else None
    class_weights = None
    if data.pos_weight is not None:
        reject(kind != "bce", "data.pos_weight", data.pos_weight, "null: only a bce loss weighs positives")
        if data.pos_weight == BALANCED:
            positives = np.atleast_2d(labels.T).T.sum(axis=0) if labels.ndim > 1 else np.array([labels.sum()])
            negatives = len(labels) - positives
            pos_weight = tuple(float(n / p) if p else 1.0 for n, p in zip(negatives, positives, strict=True))
        else:
            reject(len(data.pos_weight) != outputs, "data.pos_weight", data.pos_weight, f"{outputs} weight(s)")
            pos_weight = tuple(float(w) for w in data.pos_weight)
    if data.class_weights is not None:
        reject(kind != "cross_entropy", "data.class_weights", data.class_weights,
               "null: only a cross_entropy loss weighs classes")
        if data.class_weights == BALANCED:
            counts = np.bincount(labels, minlength=outputs)
            class_weights = tuple(float(len(labels) / (outputs * c)) for c in counts)
        else:
            reject(len(data.class_weights) != outputs, "data.class_weights", data.class_weights,
                   f"{outputs} weight(s), one per class")
            class_weights = tuple(float(w) for w in data.class_weights)
    return LossSpec(kind, pos_weight, class_weights)


def _padded_bases(sequences: list[str]) -> np.ndarray:
    """[N, longest] uint8 ASCII, shorter sequences padded with N (not counted as k-mers)."""
    out = np.full((len(sequences), max(len(s) for s in sequences)), ord("N"), dtype=np.uint8)
    for i, sequence in enumerate(sequences):
        out[i, :len(sequence)] = np.frombuffer(sequence.encode("ascii"), dtype=np.uint8)
    return out


def _model_length(config: LabelledConfig, tokenizer, block_size: int) -> int:
    """Tokens per input the model takes: data.eval_length, else the encoder's positions (a block multiple)."""
    from dnabird.finetune.recipe import encoder_config

    if config.data.eval_length is not None:
        reject(config.data.eval_length % block_size != 0, "data.eval_length", config.data.eval_length,
               f"a multiple of the block size {block_size}, or null")
        return config.data.eval_length
    return encoder_config(config, tokenizer, TASK.encoder_overrides).max_positions // block_size * block_size


def build(config: LabelledConfig, tokenizer, *, block_size: int, out_dir: str | Path) -> TaskData:
    """The labelled `TaskData` (module docstring); writes skipped.tsv, examples.tsv and, when rows are dropped
    for leakage, leakage_dropped.tsv into `out_dir`."""
    data, out_dir = config.data, Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    table = read_examples(data)
    files = ", ".join(sorted(set(table.frame["file"])))
    read = len(table)
    skipped: dict[int, str] = {}
    if table.kind == "regions":
        if data.genome is None:
            raise ConfigError(f"{files} holds regions (chrom, start, end), whose bases are read from a genome: set "
                              "data.genome to the FASTA they lie on")
        from dnabird.genome.reference import Genome

        with Genome(data.genome, soft_mask="upper") as genome:
            regions = region_sequences(table, genome, window_length=data.window_length)
        table.frame["window_start"], table.frame["window_end"] = regions.starts, regions.ends
        table.frame["sequence"] = regions.sequences
        skipped = regions.skipped
    table = _skip_rows(table, skipped, out_dir, "skipped.tsv")
    if not len(table):
        raise DnabirdError(f"{files}: no example is left of {read} rows (skipped: {dict(Counter(skipped.values()))})")
    problem = data.problem or infer_problem(table, max_classes=data.max_classes)
    labels = label_values(table, problem, positive_class=data.positive_class)
    _check_output_names(labels.names, files)
    splits = assign_splits(table, data, config.seed)
    sequences = list(table.frame["sequence"])
    leakage, flags = check_leakage(table, sequences, labels.values, splits, config.leakage)
    if config.leakage.drop:
        dropped = {}
        for split, checks in flags.items():
            rows = np.flatnonzero(splits == split)
            for j in np.flatnonzero(np.any(np.stack(list(checks.values())), axis=0)):
                dropped[int(rows[j])] = ",".join(name for name, values in checks.items() if values[j])
        keep = np.setdiff1d(np.arange(len(table)), list(dropped))
        table = _skip_rows(table, dropped, out_dir, "leakage_dropped.tsv")
        labels = Labels(labels.values[keep], labels.names)
        splits, sequences = splits[keep], [sequences[i] for i in keep]
        leakage["dropped"] = len(dropped)
    leakage["pretraining"] = pretraining_overlap(config, table, splits)
    for message in leakage["warnings"] + [leakage["pretraining"].get("warning")]:
        if message:
            log.warning("leakage: %s", message)
    empty = [split for split in SPLITS if not (splits == split).any()]
    if empty:
        raise DnabirdError(f"{files}: the {', '.join(empty)} split(s) hold no example (splits "
                           f"{_split_rule(table, data)}); give them in the files, or set "
                           "data.split_fractions or the validation/test chromosomes")
    _check_classes(labels, problem, splits, files)
    max_tokens = _model_length(config, tokenizer, block_size)
    sequences, ids, cropped = fit_inputs(table, sequences, tokenizer, max_tokens, data.long_inputs)
    longest = max(len(row) for row in ids) + 2
    eval_length = data.eval_length or -(-longest // block_size) * block_size
    encoded, _ = tokenizer.pad_batch(ids, block_size=block_size, length=eval_length)
    train_rows = splits == "train"
    loss = loss_spec(data, problem, labels.values[train_rows], len(labels.names), config.positive_weight)
    targets, transform = labels.values, None
    if problem == REGRESSION:
        transform = target_transform(data, labels.values[train_rows], loss.kind)
        targets = transform.forward(labels.values)
    elif data.log1p or data.standardise:
        reject(True, "data.log1p / data.standardise", True, f"false for a {problem} problem (regression only)")
    targets = targets.astype(np.int64 if problem == "multiclass" else np.float32)
    examples = {split: TokenExamples(encoded[splits == split].astype(np.int32), targets[splits == split],
                                     seed=config.seed, shuffle=split == "train") for split in SPLITS}
    regions = table.kind == "regions"
    spec = TaskSpec(task="labelled", problem=problem, labels=list(labels.names), eval_length=int(eval_length),
                    window_length=max(len(s) for s in sequences), anchor="centre",
                    strand_rule="feature" if regions and (table.frame["strand"] == "-").any() else "forward",
                    tokenizer_hash=tokenizer.hash,
                    target_transform=None if transform is None else transform.to_dict())
    bases = _padded_bases(sequences)
    kmers = kmer_counts(bases, data.kmer)
    baseline = Baseline(kmers[train_rows], kmers[splits == "test"], "ridge" if problem == REGRESSION else "logistic")
    _write_examples(table, splits, labels, out_dir / "examples.tsv")
    summary = {
        "files": sorted(set(table.frame["file"])), "inputs": table.kind, "problem": problem,
        "labels": list(labels.names), "rows_read": read, "skipped": dict(Counter(skipped.values())),
        "examples": {split: _split_counts(labels, problem, splits == split) for split in SPLITS},
        "split": _split_rule(table, data), "leakage": leakage,
        "long_inputs": {"policy": data.long_inputs, "cropped": cropped, "max_tokens": max_tokens},
        "eval_length": int(eval_length), "window_length": data.window_length,
        "loss": {"kind": loss.kind, "pos_weight": loss.pos_weight, "class_weights": loss.class_weights},
        "target_transform": None if transform is None else transform.to_dict(),
    }
    return TaskData(spec, examples["train"], examples["validation"], examples["test"],
                    baseline_features={f"{data.kmer}-mer": baseline}, summary=summary, loss=loss)


def _check_output_names(names: tuple[str, ...], files: str) -> None:
    """Refuse outputs (label columns or classes) named as a column of `dnabird predict`'s tables, which could not
    hold them, before any training."""
    from dnabird.prediction.predictions import ROW_COLUMNS

    taken = {column for columns in ROW_COLUMNS.values() for column in columns}
    clash = [name for name in names if name in taken]
    if clash:
        raise DnabirdError(f"{files}: the head's outputs {clash} (label columns or classes) are named as columns of "
                           f"the tables `dnabird predict` writes ({', '.join(sorted(taken))}); rename them in the file")


def _split_counts(labels: Labels, problem: str, rows: np.ndarray) -> dict:
    """Examples of a split, with their classes (classification) or their targets' means (regression)."""
    values = labels.values[rows]
    out = {"examples": int(rows.sum())}
    if problem == "binary":
        out["positives"] = int(values.sum())
    elif problem == "multiclass":
        out["classes"] = {name: int((values == i).sum()) for i, name in enumerate(labels.names)}
    elif problem == "multilabel":
        out["positives"] = {name: int(values[:, k].sum()) for k, name in enumerate(labels.names)}
    else:
        out["mean"] = {name: round(float(values[:, k].mean()), 4) if len(values) else None
                       for k, name in enumerate(labels.names)}
    return out


def _split_rule(table: LabelledTable, data: LabelledData) -> str:
    """How each split was made, in words."""
    given = set(table.frame["split"].dropna()) - {""}
    named = {"validation": data.validation_chromosomes, "test": data.test_chromosomes}
    together = "overlapping regions" if table.kind == "regions" else "identical sequences and reverse complements"
    rules = []
    for split in SPLITS:
        if split in given:
            rules.append(f"{split} as given")
        elif split != "train" and table.kind == "regions" and named[split]:
            rules.append(f"{split} on {', '.join(named[split])}")
        elif split != "train":
            rules.append(f"{split} drawn at random from train ({together} kept together)")
    return "; ".join(rules + (["rows naming no split are train"] if "train" not in given else []))


def _write_examples(table: LabelledTable, splits: np.ndarray, labels: Labels, path: Path) -> None:
    """examples.tsv: every example used, with its split, source and label(s) as read."""
    frame = table.frame.drop(columns=["sequence", "split"], errors="ignore").copy()
    frame.insert(0, "split", splits)
    write_text_atomic(path, frame.to_csv(sep="\t", index=False))


class Labelled(Task):
    """Fine-tuning on one's own labelled sequences or regions (module docstring). Its pipeline stage takes
    the tokenizer and pretrained model from earlier stages when null and exposes the examples used."""

    name, config = "labelled", LabelledConfig
    stage_inputs = {"pretrained": ("pretrain", "model"), "tokenizer": ("tokenizer", "model")}
    outputs = {"examples": "examples.tsv", "skipped": "skipped.tsv"}
    build = staticmethod(build)

    def sources(self, config) -> dict[str, tuple[str, str]]:
        """The stage inputs, and the data files given (so one written `<stage>:<output>`, e.g.
        `labelled_data:binary`, names that earlier stage's output; a given path is never replaced)."""
        given = {f"data.{name}": ("", "") for name in ("path", *SPLITS, "genome")
                 if getattr(config.data, name) is not None}
        return {**self.stage_inputs, **given}

    def input_files(self, config) -> list[Path]:
        """The data files (every file of a folder), the genome, the tokenizer and the checkpoint."""
        data = config.data
        named = [getattr(data, name) for name in ("path", *SPLITS, "genome")]
        paths = [Path(p) for p in named if p is not None]
        files = [f for p in paths for f in (sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else [p])]
        return files + [Path(v) for v in (config.tokenizer, config.pretrained) if v not in (None, FROM_SCRATCH)]


TASK = Labelled()
