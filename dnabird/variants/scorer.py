"""The scorer protocol: `Scorer`, what one scoring method hands `dnabird.variants.score`, and `SCORERS`, every
method by name (what `score`, `benchmark-variants`, `ism` and the demo's `variants` stage read).

A scorer turns the REF and ALT windows of a variant (one `AlleleWindows` per strand scored) into model rows
(`rows` → `Rows`), runs many rows in one model call (`run`, rows of one `padded_length` per call), and reduces a
window's values to its REF score, ALT score and logit difference per output (`combine`). `share` may replace
the rows of nearby variants by shared ones (the LLR scorer's shared passes); by default every window keeps its
own. `effects` states how a variant's effect is read from those scores (which kind, reduced how over the
outputs, which sign), once, for every report that ranks variants.

Adding a method: subclass `Scorer` (`method`, `supports`, `output_names`, `effects`, `rows`, `run`, `combine`,
optionally `padded_length` and `share`) and add it to `SCORERS`; `dnabird score --method`, `benchmark-variants`
and the `variants` stage then offer it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd
import torch

from dnabird import __version__
from dnabird.errors import UnscorableVariantError, reject
from dnabird.model.task_spec import REGRESSION, Anchor, TaskSpec
from dnabird.variants import marginals
from dnabird.variants.mlm import MaskedSpan, masked_spans
from dnabird.variants.records import Allele
from dnabird.variants.windows import AlleleWindows

if TYPE_CHECKING:
    from dnabird.inference.predictor import Predictor
    from dnabird.variants.scores import VariantScores

TOO_LONG = "window exceeds eval_length"
LLR_OUTPUTS = ("llr", "llr_per_bp")
DISTANCE_POOLING = "mean_sequence"  # REF and ALT windows may differ in token count: compare their means
HEAD_EFFECTS = {"abs_logit_diff": "max |Δ log odds|", "abs_diff": "max |Δp|"}  # a classifier's effect kinds


@dataclasses.dataclass(frozen=True)
class Setup:
    """How windows are built and scored (resolved from the arguments and the model's task)."""

    method: str
    window_bp: int
    eval_length: int
    anchor: Anchor
    rc: bool  # score the reverse complement too and average
    flank_bp: int
    on_ref_mismatch: str
    bp_per_token: float | None = None  # mlm_llr: the figure default sizes came from …
    bp_per_token_source: str | None = None  # … and where it came from (`dnabird.model.bp_per_token`)
    variants_per_pass: int = 1  # mlm_llr: variants masked in one shared pass (1: exact, one per pass)
    pass_spacing_bp: int = 0  # mlm_llr: least bp between two masked spans of one pass

    def describe(self) -> dict:
        """The settings as plain values, for reports and output files."""
        return {**dataclasses.asdict(self), "anchor": str(self.anchor), "rc": "average" if self.rc else "forward",
                "dnabird": __version__}


@dataclasses.dataclass(frozen=True)
class ScoredWindow:
    """One window of one allele as scored: its REF and ALT `sequences` on the strand scored first, the TSS
    name as `feature`, and whether the genome matched the REF allele (`ref_match`)."""

    allele: Allele
    sequences: AlleleWindows
    feature: str
    ref_match: bool


class Rows(NamedTuple):
    """One window's model rows: `ids` (token ids per row, without [CLS]/[SEP]); `targets`, per row the sets of
    token positions it is read at (one value per set; None: one value per row); and `extra`, what `combine`
    needs beyond the values."""

    ids: list[list[int]]
    targets: list[list[dict[int, int]]] | None = None
    extra: Any = None

    def values_per_row(self) -> list[int]:
        """How many values each row gives."""
        return [1] * len(self.ids) if self.targets is None else [len(sets) for sets in self.targets]


@dataclasses.dataclass(frozen=True)
class Effect:
    """How a variant's effect is read from its scores: `sign` × the score `kind` (`VariantScores.per_variant`)
    of `outputs` (all when None) reduced by `reduce` over the outputs, a record's ALTs and windows; higher
    means more disruptive. `name`: the method name a benchmark ranks it under; `label`: what it is, for
    reports; `suffix`: its column beside a pipeline scorer's name ("" for a method's first effect)."""

    name: str
    label: str
    kind: str
    reduce: str
    outputs: tuple[str, ...] | None = None
    sign: int = 1
    suffix: str = ""

    def per_variant(self, scores: VariantScores) -> pd.DataFrame:
        """One row per scored record: record, id, chrom, pos, `all`, and a column per output group where the
        outputs read fall into several groups."""
        table = scores.per_variant(self.kind, self.reduce, outputs=list(self.outputs) if self.outputs else None)
        groups = [c for c in table.columns if c not in ("record", "id", "chrom", "pos", "all")]
        table = table.drop(columns=groups if len(groups) < 2 else [])
        values = [c for c in table.columns if c not in ("record", "id", "chrom", "pos")]
        table[values] = self.sign * table[values]
        return table


Pending = tuple["ScoredWindow", Rows]  # a window and its rows, as `score_windows` gathers them


class Scorer:
    """One scoring method. Subclasses set `method` and implement the class methods `supports`, `output_names`,
    `effects` and the instance methods `rows`, `run` and `combine` (module docstring).

    method: its name in `SCORERS` (`dnabird score --method`). needs_head: it reads a fine-tuned head's outputs
    (windows placed by the task's anchor); else windows are centred on the variants. shares_passes: `share`
    groups variants (and `variants_per_pass` may exceed 1).
    """

    method: ClassVar[str]
    needs_head: ClassVar[bool] = False
    shares_passes: ClassVar[bool] = False

    def __init__(self, predictor: Predictor, setup: Setup):
        self.predictor, self.setup = predictor, setup
        self.outputs = tuple(self.output_names(predictor.task))
        self.groups = tuple(self.output_groups(predictor.task))

    @classmethod
    def supports(cls, task: TaskSpec | None) -> bool:
        """Whether a model with this task (None: a pretrained masked LM) can be scored by the method."""
        raise NotImplementedError

    @classmethod
    def output_names(cls, task: TaskSpec | None) -> tuple[str, ...]:
        """The outputs it scores with a model of this task."""
        raise NotImplementedError

    @classmethod
    def output_groups(cls, task: TaskSpec | None) -> tuple[str, ...]:
        """Each output's group ("." for none)."""
        return (".",) * len(cls.output_names(task))

    @classmethod
    def effects(cls, task: TaskSpec | None, kind: str | None = None) -> tuple[Effect, ...]:
        """How a variant's effect is read (the first is the method's own); `kind` picks another score kind
        where the method offers one (a classifier head: "abs_diff" instead of "abs_logit_diff")."""
        raise NotImplementedError

    def rows(self, strands: list[AlleleWindows]) -> Rows:
        """The model rows of one window (its strands in order); `UnscorableVariantError` (`TOO_LONG`) when a
        row exceeds eval_length."""
        raise NotImplementedError

    def padded_length(self, row: list[int]) -> int:
        """The token length a row is padded to (rows of one length run together): by default its own block
        multiple, as a pretrained model is scored (eval_length only caps it)."""
        return self.predictor.padded_length(len(row))

    def run(self, ids: list[list[int]], targets: list | None, names: list[str] | None = None) -> np.ndarray:
        """The values of rows of one padded length, `Rows.values_per_row` per row, flat in row order
        (`names` name the inputs in errors)."""
        raise NotImplementedError

    def combine(self, values: np.ndarray, extra: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A window's values (in its rows' order) → REF scores, ALT scores and logit differences [outputs]."""
        raise NotImplementedError

    def share(self, pending: list[Pending], pass_groups: marginals.Groups | None) -> list[Pending]:
        """`pending` with the rows of variants that share a model pass replaced by shared ones: none here."""
        return pending

    def encode(self, sequence: str) -> list[int]:
        """Token ids of a window; `UnscorableVariantError` when `[CLS] ids [SEP]` exceed eval_length."""
        ids = self.predictor.tokenizer.encode(sequence)
        if len(ids) + 2 > self.setup.eval_length:
            raise UnscorableVariantError(TOO_LONG, f"{len(ids)} tokens + [CLS] + [SEP] > {self.setup.eval_length}")
        return ids

    def allele_rows(self, strands: list[AlleleWindows]) -> Rows:
        """The REF and ALT windows of each strand, one row each (ref, alt, ref, alt …)."""
        return Rows([self.encode(sequence) for windows in strands for sequence in (windows.ref, windows.alt)])


class HeadScorer(Scorer):
    """A fine-tuned head's outputs for the REF and ALT windows (and their reverse complements): probabilities
    of a classifier (averaged over strands; logit difference the mean of each strand's), or a regression
    head's predictions in the targets' own scale (`TaskSpec.transform` inverted, then averaged over strands;
    diff = ALT − REF; no logit difference)."""

    method = "head"
    needs_head = True

    def __init__(self, predictor: Predictor, setup: Setup):
        super().__init__(predictor, setup)
        self.problem, self.transform = predictor.task.problem, predictor.task.transform

    @classmethod
    def supports(cls, task: TaskSpec | None) -> bool:
        return task is not None

    @classmethod
    def output_names(cls, task: TaskSpec | None) -> tuple[str, ...]:
        return tuple(task.labels)

    @classmethod
    def output_groups(cls, task: TaskSpec | None) -> tuple[str, ...]:
        group_of = {label: group for group, labels in task.label_groups.items() for label in labels}
        return tuple(group_of.get(label, ".") for label in task.labels)

    @classmethod
    def effects(cls, task: TaskSpec | None, kind: str | None = None) -> tuple[Effect, ...]:
        """The largest |Δ log odds| over the outputs (or |Δp| with kind="abs_diff"); a regression head's
        largest |Δ| in the targets' scale."""
        if task is not None and task.problem == REGRESSION:
            return (Effect("head", "max |Δ|", "abs_diff", "max"),)
        kind = kind or "abs_logit_diff"
        reject(kind not in HEAD_EFFECTS, "effect", kind, f"one of {tuple(HEAD_EFFECTS)}")
        return (Effect("head", HEAD_EFFECTS[kind], kind, "max"),)

    def rows(self, strands: list[AlleleWindows]) -> Rows:
        return self.allele_rows(strands)

    def padded_length(self, row: list[int]) -> int:
        """Every row at the task's eval_length, as the head was fine-tuned."""
        return self.setup.eval_length

    def run(self, ids, targets, names=None) -> np.ndarray:
        return self.predictor.logits(ids, self.setup.eval_length, names).numpy()

    def combine(self, outputs: np.ndarray, extra: None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        outputs = outputs.astype(np.float64)  # [2 * strands, k]: ref, alt, ref, alt …
        if self.problem == REGRESSION:
            values = self.transform.inverse(outputs)
            return values[0::2].mean(0), values[1::2].mean(0), np.full(outputs.shape[1], np.nan)
        logits = torch.from_numpy(outputs)
        multiclass = self.problem == "multiclass"
        logs = torch.log_softmax(logits, dim=-1) if multiclass else logits
        probs = logs.exp() if multiclass else torch.sigmoid(logits)
        ref, alt = probs[0::2].mean(0), probs[1::2].mean(0)
        return ref.numpy(), alt.numpy(), (logs[1::2] - logs[0::2]).mean(0).numpy()


class LLRScorer(Scorer):
    """Masked-marginal log-likelihoods of the REF and ALT windows of a pretrained masked LM
    (`dnabird.variants.mlm`); nearby variants share passes (`dnabird.variants.marginals`)."""

    method = "mlm_llr"
    shares_passes = True

    @classmethod
    def supports(cls, task: TaskSpec | None) -> bool:
        return task is None

    @classmethod
    def output_names(cls, task: TaskSpec | None) -> tuple[str, ...]:
        return LLR_OUTPUTS

    @classmethod
    def output_groups(cls, task: TaskSpec | None) -> tuple[str, ...]:
        return ("mlm", "mlm")

    @classmethod
    def effects(cls, task: TaskSpec | None, kind: str | None = None) -> tuple[Effect, ...]:
        """−LLR (the log-likelihood the ALT allele loses), and −LLR per bp (to rank indels beside SNVs)."""
        return (Effect("mlm_llr", "−LLR", "diff", "mean", ("llr",), -1),
                Effect("llr_per_bp", "−LLR per bp", "diff", "mean", ("llr_per_bp",), -1, "_per_bp"))

    def rows(self, strands: list[AlleleWindows]) -> Rows:
        """Per strand the REF and ALT windows with their spans masked: one row scored for both token sets
        when the two masked inputs are the same (an SNV whose tokens around it coincide), else two."""
        ids, targets, bp = [], [], []
        tokenizer = self.predictor.tokenizer
        for windows in strands:
            ref, alt = (self.encode(sequence) for sequence in (windows.ref, windows.alt))
            spans = masked_spans(windows, tokenizer.offsets(windows.ref), tokenizer.offsets(windows.alt),
                                 self.setup.flank_bp)
            (ref_row, ref_wanted), (alt_row, alt_wanted) = (mask_span(tokens, span, tokenizer.mask_id)
                                                            for tokens, span in zip((ref, alt), spans, strict=True))
            if ref_row == alt_row:
                ids.append(ref_row)
                targets.append([ref_wanted, alt_wanted])
            else:
                ids += [ref_row, alt_row]
                targets += [[ref_wanted], [alt_wanted]]
            bp.append((spans[0].bp, spans[1].bp))
        return Rows(ids, targets, bp)

    def run(self, ids, targets, names=None) -> np.ndarray:
        return self.predictor.masked_log_likelihood(ids, targets, None, names).numpy()

    def share(self, pending: list[Pending], pass_groups: marginals.Groups | None) -> list[Pending]:
        """Windows and their rows, the variants of each shared-pass group scored from shared rows."""
        if pass_groups is None:
            return pending
        s = self.setup
        shared = marginals.share_passes(pending, pass_groups, self.predictor.tokenizer, s.eval_length, s.rc, s.flank_bp,
                                        s.pass_spacing_bp)
        return [(shared[n][0], Rows(*shared[n][1])) if n in shared else p for n, p in enumerate(pending)]

    def combine(self, log_likelihoods: np.ndarray, bp: list[tuple[int, int]]):
        """[log P, log P per bp] of REF and ALT averaged over strands; no logit difference."""
        per_strand = np.reshape(log_likelihoods, (-1, 2))  # [strands, (ref, alt)]
        ref, alt = np.stack([per_strand, per_strand / np.array(bp)], axis=-1).mean(0)
        return ref, alt, np.full(2, np.nan)


class EmbeddingDistanceScorer(Scorer):
    """Euclidean distance between the mean-pooled final hidden states (over the DNA tokens) of the REF and ALT
    windows, averaged over the strands scored (GPN's embedding distance): `alt` is the distance, `ref` 0, so
    `diff` is the distance too. A pretrained model's rows are padded to their own block multiple, a head's
    encoder's to its task's eval_length."""

    method = "embed_dist"

    @classmethod
    def supports(cls, task: TaskSpec | None) -> bool:
        return True

    @classmethod
    def output_names(cls, task: TaskSpec | None) -> tuple[str, ...]:
        return ("embed_dist",)

    @classmethod
    def effects(cls, task: TaskSpec | None, kind: str | None = None) -> tuple[Effect, ...]:
        return (Effect("embed_dist", "embedding distance", "diff", "mean"),)

    def rows(self, strands: list[AlleleWindows]) -> Rows:
        return self.allele_rows(strands)

    def _length(self) -> int | None:
        return self.setup.eval_length if self.predictor.has_head else None

    def padded_length(self, row: list[int]) -> int:
        return self._length() or self.predictor.padded_length(len(row))

    def run(self, ids, targets, names=None) -> np.ndarray:
        return self.predictor.pooled(ids, self._length(), DISTANCE_POOLING, names).numpy()

    def combine(self, vectors: np.ndarray, extra: None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        vectors = vectors.astype(np.float64)  # [2 * strands, hidden]: ref, alt, ref, alt …
        distance = np.linalg.norm(vectors[1::2] - vectors[0::2], axis=1).mean()
        return np.zeros(1), np.array([distance]), np.full(1, np.nan)


SCORERS: dict[str, type[Scorer]] = {s.method: s for s in (HeadScorer, LLRScorer, EmbeddingDistanceScorer)}


def mask_span(ids: list[int], span: MaskedSpan, mask_id: int) -> tuple[list[int], dict[int, int]]:
    """`ids` with [MASK] over the span, and the true id at each masked index."""
    masked = list(ids)
    masked[span.first:span.stop] = [mask_id] * (span.stop - span.first)
    return masked, {i: ids[i] for i in range(span.first, span.stop)}
