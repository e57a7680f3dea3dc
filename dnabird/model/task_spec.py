"""`TaskSpec`: the schema of the `task.json` a task module writes beside a fine-tuned checkpoint, and
`Anchor`, the grammar of its `anchor` field (where an input window sits relative to its feature)."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from dnabird.config import reject_unknown_keys
from dnabird.errors import CheckpointError, ConfigError, ParameterError
from dnabird.io import write_text_atomic
from dnabird.model.targets import TargetTransform

CLASSIFICATION_PROBLEMS = ("binary", "multiclass", "multilabel")
REGRESSION = "regression"  # one real-valued output per target; `target_transform` says its scale
PROBLEMS = (*CLASSIFICATION_PROBLEMS, REGRESSION, "span")  # span: extractive QA, labels ("start", "end")
STRAND_RULES = ("forward", "feature", "both")
_TSS_ANCHOR = re.compile(r"tss:-(\d+):\+(\d+)")


@dataclass(frozen=True)
class Anchor:
    """Where a window sits relative to its feature; `parse_anchor` reads the text form.

    - "tss:-U:+D" (kind "tss"): U bp upstream and D bp downstream of a stranded site, read 5'→3' on the
      site's strand; the site is at window index U, the window is U + D bp. On "+" the window is
      [p − U, p + D); on "−" it is the reverse complement of [p − D + 1, p + U + 1).
    - "centre": a window of the task's `window_length` L centred on a point p: [p − L // 2, p − L // 2 + L),
      so p is at index L // 2 (Selene's convention).
    """

    kind: str
    upstream: int = 0
    downstream: int = 0

    @property
    def length(self) -> int | None:
        """Window length fixed by the anchor itself ("tss"), None for "centre"."""
        return self.upstream + self.downstream if self.kind == "tss" else None

    def interval(self, position: int, strand: str = "+", length: int | None = None) -> tuple[int, int]:
        """0-based half-open genomic [start, end) of the window around `position` (0-based) on `strand`."""
        if self.kind == "centre":
            if length is None or length < 1:
                raise ConfigError(f"anchor 'centre' needs a window length in bp, got {length!r}")
            start = position - length // 2
            return start, start + length
        if strand == "+":
            return position - self.upstream, position + self.downstream
        if strand == "-":
            return position - self.downstream + 1, position + self.upstream + 1
        raise ParameterError("strand", strand, "'+' or '-'")

    def __str__(self) -> str:
        return f"tss:-{self.upstream}:+{self.downstream}" if self.kind == "tss" else self.kind


def parse_anchor(text: str) -> Anchor:
    """An `Anchor` from its text form, "tss:-U:+D" (e.g. "tss:-5000:+3000") or "centre"."""
    if text == "centre":
        return Anchor("centre")
    match = _TSS_ANCHOR.fullmatch(text) if isinstance(text, str) else None
    if match is None or int(match[1]) + int(match[2]) == 0:
        raise ConfigError(f"anchor {text!r} is invalid: expected 'centre' or 'tss:-U:+D' with U, D bp "
                          "(e.g. 'tss:-5000:+3000')")
    return Anchor("tss", int(match[1]), int(match[2]))


@dataclass(frozen=True)
class TaskSpec:
    """What a fine-tuned checkpoint predicts and how its inputs are built.

    task: task name (e.g. "promoter", "chromatin").
    problem: "binary" (one logit), "multiclass" (softmax over labels), "multilabel" (one sigmoid per label),
        "regression" (one real output per target) or "span" (a start and an end logit per token: extractive
        question answering, labels "start", "end").
    labels: output names, one per logit (binary: the positive class; regression: the targets).
    label_groups: optional named groups of labels (e.g. DeepSEA's "DNase", "TF", "HM"), by label name.
    eval_length: the fixed padded token length used for evaluation and scoring.
    window_length: input window in bp (None for text tasks).
    anchor: where the window sits relative to its feature, in `Anchor`'s grammar ("tss:-5000:+3000",
        "centre"); a "tss" anchor fixes window_length, "centre" needs one.
    strand_rule: "forward" (always + strand), "feature" (the feature's strand) or "both" (RC-averaged).
    tokenizer_hash: sha256 (hex) of the tokenizer model the inputs were encoded with.
    target_transform: a regression head's `TargetTransform` as a dict (None: the identity); `transform`
        reads it, and its `inverse` brings outputs back to the user's scale.
    """

    task: str
    problem: str
    labels: tuple[str, ...]
    eval_length: int
    label_groups: dict = field(default_factory=dict)
    window_length: int | None = None
    anchor: str | None = None
    strand_rule: str = "forward"
    tokenizer_hash: str | None = None
    target_transform: dict | None = None

    def __post_init__(self):
        def bad(name, expected):
            raise ConfigError(f"task.json: {name}={getattr(self, name)!r} is invalid: expected {expected}")

        if not isinstance(self.task, str) or not self.task:
            bad("task", "a non-empty string")
        if self.problem not in PROBLEMS:
            bad("problem", f"one of {PROBLEMS}")
        object.__setattr__(self, "labels", tuple(self.labels))
        if not self.labels or not all(isinstance(x, str) for x in self.labels):
            bad("labels", "a non-empty list of label names")
        if len(set(self.labels)) != len(self.labels):
            bad("labels", "unique label names")
        if self.problem == "binary" and len(self.labels) != 1:
            bad("labels", "exactly one (positive-class) label for a binary problem")
        if self.problem == "multiclass" and len(self.labels) < 2:
            bad("labels", "at least two classes for a multiclass problem")
        if self.problem == "span" and self.labels != ("start", "end"):
            bad("labels", "['start', 'end'] for a span problem")
        if not isinstance(self.eval_length, int) or self.eval_length < 1:
            bad("eval_length", "a positive integer number of tokens")
        window = self.window_length
        if window is not None and (not isinstance(window, int) or window < 1):
            bad("window_length", "a positive integer number of bp, or null")
        if self.anchor is not None:
            anchor = parse_anchor(self.anchor)
            if anchor.length is not None and window != anchor.length:
                bad("window_length", f"{anchor.length} bp, the length anchor {self.anchor!r} spans")
            if anchor.kind == "centre" and window is None:
                bad("window_length", "a length in bp for a 'centre' anchor")
        if self.strand_rule not in STRAND_RULES:
            bad("strand_rule", f"one of {STRAND_RULES}")
        if self.tokenizer_hash is not None and not re.fullmatch(r"[0-9a-f]{64}", str(self.tokenizer_hash)):
            bad("tokenizer_hash", "a 64-character lowercase hex sha256, or null")
        if not isinstance(self.label_groups, dict):
            bad("label_groups", "a mapping of group name to label names")
        if self.target_transform is not None:
            if self.problem != REGRESSION:
                bad("target_transform", f"null for a {self.problem!r} problem (only regression targets have one)")
            mean = TargetTransform.from_dict(self.target_transform).mean
            if mean is not None and len(mean) != len(self.labels):
                bad("target_transform", f"mean and std for each of the {len(self.labels)} target(s)")
        known = set(self.labels)
        for group, members in self.label_groups.items():
            missing = [m for m in members if m not in known]
            if missing:
                raise ConfigError(f"task.json: label group {group!r} names unknown labels {missing[:5]}")

    @property
    def num_outputs(self) -> int:
        return len(self.labels)

    @property
    def transform(self) -> TargetTransform:
        """A regression head's target transform (the identity for every other problem)."""
        return TargetTransform.from_dict(self.target_transform)

    def window(self, position: int, strand: str = "+") -> tuple[int, int]:
        """Genomic [start, end) of the input window around `position` (see `Anchor.interval`)."""
        if self.anchor is None:
            raise ConfigError(f"task {self.task!r} has no anchor: its inputs are not genomic windows")
        return parse_anchor(self.anchor).interval(position, strand, self.window_length)

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data["labels"] = list(self.labels)
        return data

    @classmethod
    def from_dict(cls, data: dict, *, source: str = "task.json") -> TaskSpec:
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: expected a JSON object")
        reject_unknown_keys(cls, data, source)
        missing = sorted(f.name for f in dataclasses.fields(cls)
                         if f.name not in data and f.default is dataclasses.MISSING
                         and f.default_factory is dataclasses.MISSING)
        if missing:
            raise ConfigError(f"{source}: missing required task key(s) {missing}")
        return cls(**data)

    def save(self, path: str | Path) -> None:
        write_text_atomic(path, json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> TaskSpec:
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise CheckpointError(f"{path}: task.json not found") from None
        except json.JSONDecodeError as err:
            raise CheckpointError(f"{path}: not valid JSON ({err})") from None
        return cls.from_dict(data, source=str(path))
