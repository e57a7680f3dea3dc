"""ListOps classification (Long-Range Arena): a tokenizer that keeps the brackets, and a [CLS] classifier over
10 classes trained by the one loop on ListOps TSVs, reported on validation and test beside the majority class.

LRA's first tokenizer kept alphanumerics only, so every `]` vanished and `[MAX` became `MAX` (fixed upstream in
2021, after most published figures). Here each operator (`[MAX`, `[MIN`, `[MED`, `[SM`), digit and `]` is one
token; parentheses (LRA's printing of nested pairs) are dropped. An input is `[CLS] tokens [SEP]`, padded to
`max_length`; a longer tree fails by name (never silently cut: a cut tree has another value).
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dnabird.config import RecipeConfig
from dnabird.data.tokenizer_base import SPECIAL_TOKENS, TokenizerBase
from dnabird.datasets import listops
from dnabird.errors import InputFormatError, ParameterError, reject
from dnabird.finetune.task import Task
from dnabird.io import write_json_atomic
from dnabird.model.config import recipe_encoder_config
from dnabird.model.task_spec import TaskSpec
from dnabird.train import TrainConfig
from dnabird.train.recipe import recipe_run

log = logging.getLogger(__name__)

VOCAB = SPECIAL_TOKENS + tuple(str(d) for d in range(10)) + listops.OPERATORS + (listops.END,)
DROPPED = ("(", ")")
LABELS = tuple(str(d) for d in range(10))
SPLITS = ("train", "validation", "test")


class ListOpsTokenizer(TokenizerBase):
    """Fixed vocabulary: specials, the digits 0–9, the four operators and `]` (20 tokens)."""

    vocab = VOCAB
    pad_id, unk_id, cls_id, sep_id, mask_id = range(len(SPECIAL_TOKENS))
    special_ids = frozenset(range(len(SPECIAL_TOKENS)))

    def __init__(self):
        self.index = {token: i for i, token in enumerate(self.vocab)}

    def definition(self) -> bytes:
        return " ".join(self.vocab).encode()

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def id_to_piece(self, token_id: int) -> str:
        return self.vocab[token_id]

    def tokens(self, source: str) -> list[str]:
        return [t for t in source.split() if t not in DROPPED]

    def encode(self, source: str, where: str = "expression") -> list[int]:
        ids = []
        for token in self.tokens(source):
            if token not in self.index or token in SPECIAL_TOKENS:
                raise InputFormatError(f"unknown ListOps token {token!r} (expected digits, "
                                       f"{', '.join(listops.OPERATORS)}, ] and parentheses)", record=where)
            ids.append(self.index[token])
        return ids

    def decode(self, ids) -> list[str]:
        return [self.id_to_piece(i) for i in ids]

    def encode_batch(self, sources: list[str], max_length: int, where: str = "ListOps") -> np.ndarray:
        """int64 [N, max_length]: `[CLS] tokens [SEP]`, padded; a tree longer than max_length − 2 fails."""
        rows = []
        for row, source in enumerate(sources, 1):
            rows.append(self.encode(source, f"{where} row {row}"))
            if len(rows[-1]) + 2 > max_length:
                raise ParameterError("max_length", max_length, f"at least {len(rows[-1]) + 2} ({where} row {row} "
                                     f"has {len(rows[-1])} tokens; a cut tree would have another value)")
        return self.pad_batch(rows, block_size=max_length, length=max_length)[0]


@dataclass
class ListOpsData:
    """The splits: `directory` with LRA's `basic_{train,val,test}.tsv`, or explicit paths per split."""

    directory: str | None = None
    train: str | None = None
    validation: str | None = None
    test: str | None = None

    def path(self, split: str) -> Path:
        explicit = getattr(self, split)
        if explicit is not None:
            return Path(explicit)
        reject(self.directory is None, f"data.{split}", None, "a path, or data.directory holding LRA's TSV names")
        return Path(self.directory) / f"basic_{listops.FILE_SPLITS[split]}.tsv"


@dataclass
class ListOpsConfig(RecipeConfig):
    """One ListOps run: model (a preset) and model_overrides (`EncoderConfig` fields: positional scheme,
    attention kernel …), max_length (tokens with [CLS] and [SEP]), eval_batch_size, seed, train."""

    data: ListOpsData = field(default_factory=ListOpsData)
    model: str = "tiny"
    model_overrides: dict = field(default_factory=dict)
    max_length: int = 512
    eval_batch_size: int = 32
    seed: int = 0
    train: TrainConfig = field(default_factory=lambda: TrainConfig(out_dir="runs/listops", warmup_steps=10))

    def __post_init__(self):
        self.encoder()  # model settings fail here, when the config loads

    def encoder(self):
        return recipe_encoder_config(self, ListOpsTokenizer().vocab_size)


def train_listops(config: ListOpsConfig, *, resume: bool = False) -> dict:
    """Train a ListOps classifier; returns the report (also `<out_dir>/report.json`)."""
    from functools import partial

    from dnabird.finetune.chance import chance_warning
    from dnabird.finetune.data import TokenExamples, collate
    from dnabird.finetune.evaluate import predict
    from dnabird.finetune.metrics import multiclass_metrics
    from dnabird.finetune.recipe import classification_loss
    from dnabird.model.heads import model_for_task

    tokenizer = ListOpsTokenizer()
    spec = TaskSpec(task="listops", problem="multiclass", labels=LABELS, eval_length=config.max_length,
                    tokenizer_hash=tokenizer.hash)

    def read_split(path: Path) -> tuple[np.ndarray, np.ndarray]:
        rows = listops.read(path)
        ids = tokenizer.encode_batch([s for s, _ in rows], config.max_length, str(path))
        return ids, np.array([v for _, v in rows], dtype=np.int64)

    ids, targets = read_split(config.data.path("train"))
    examples = TokenExamples(ids, targets, seed=config.seed, shuffle=True)
    majority = np.bincount(targets, minlength=10).argmax()  # the baseline always predicts it
    report = {"task": spec.to_dict(), "max_length": config.max_length, "train_examples": len(targets)}
    with recipe_run(config.train.device, seed=config.seed) as run:
        model = model_for_task(config.encoder(), spec, seed=config.seed)
        run.fit(model, classification_loss(spec.problem), examples, config.train,
                collate_fn=partial(collate, pad_id=tokenizer.pad_id, class_labels=True), resume=resume,
                run_info={"listops": dataclasses.asdict(config)}, task=spec)
        if run.is_main:
            for split in ("validation", "test"):
                path = config.data.path(split)
                if not path.is_file() and getattr(config.data, split) is None:
                    continue
                split_ids, split_targets = read_split(path)
                labels, scores, _ = predict(model, TokenExamples(split_ids, split_targets), spec,
                                            batch_size=config.eval_batch_size, pad_id=tokenizer.pad_id,
                                            device=run.device)
                report[split] = {"model": multiclass_metrics(labels, scores, spec.labels),
                                 "majority_class": {"accuracy": float((split_targets == majority).mean()),
                                                    "examples": len(split_targets)}}
                if split == "validation":   # validated once, at the end: a run that stayed at chance says so
                    warning = chance_warning([(config.train.max_steps, report[split]["model"])], split_targets,
                                             spec.problem, warmup_steps=0)
                    report["warnings"] = [] if warning is None else [warning]
                    if warning is not None:
                        log.warning("%s: %s", config.train.out_dir, warning["message"])
            write_json_atomic(Path(config.train.out_dir) / "report.json", report)
    return report


def describe(config: ListOpsConfig) -> tuple[str, str]:
    """(positional scheme, kernel) of a run, e.g. ("sine SPE, gated", "performer")."""
    model = config.encoder()
    positional = model.positional
    if positional == "spe":
        spe = model.spe_spec()
        positional = f"{spe.kind}SPE R={spe.realizations}" + (", gated" if spe.gated else "")
    attention = model.attention["type"]
    if attention == "bigbird_itc":
        attention += f" b={model.attention.get('block_size')}"
    return positional, attention


def results_table(reports: dict, seconds: dict, settings: dict) -> str:
    lines = ["| model | positions | attention | validation accuracy | test accuracy | train time (s) |",
             "|---|---|---|---|---|---|"]
    for name, report in reports.items():
        positional, attention = describe(settings[name])
        lines.append(f"| {name} | {positional} | {attention} | {report['validation']['model']['accuracy']:.3f} | "
                     f"{report['test']['model']['accuracy']:.3f} | {seconds[name]:.0f} |")
    first = next(iter(reports.values()))
    lines.append(f"| majority class (of train) | — | — | {first['validation']['majority_class']['accuracy']:.3f} | "
                 f"{first['test']['majority_class']['accuracy']:.3f} | — |")
    return "\n".join(lines)


class ListOps(Task):
    """ListOps (module docstring): its own training steps (`train_listops`); inside `dnabird run`, null splits
    are the `listops_data` stage's, unless `data.directory` holds them."""

    name, config = "listops", ListOpsConfig
    stage_inputs = {f"data.{split}": ("listops_data", split) for split in SPLITS}

    def sources(self, config: ListOpsConfig) -> dict:
        return {} if config.data.directory is not None else self.stage_inputs

    def input_files(self, config: ListOpsConfig) -> list[Path]:
        return [config.data.path(split) for split in SPLITS]

    def finetune(self, config: ListOpsConfig, *, resume: bool = False) -> dict:
        return train_listops(config, resume=resume)

    def table(self, reports: dict, seconds: dict, configs: dict) -> str:
        return results_table(reports, seconds, configs)


TASK = ListOps()
