"""`predict`: a fine-tuned head's outputs over sequences, regions of a genome or tiles of its contigs, in the
user's scale: a classifier's probabilities as `score` gives them (a sigmoid per output; a softmax over a
multiclass head's classes), a regression head's outputs with its task.json target transform inverted.

Inputs (`dnabird.prediction.inputs`): a sequence is read as given, 5'→3'. A region is read in the window the
head was trained on, placed by its task.json anchor: "centre", `window_length` bp centred on the region's
midpoint (start + (end − start) // 2); "tss:-U:+D", anchored at the region's 5' end on its strand (start on
"+", end − 1 on "−", whose window is the reverse complement); a head without a window reads the region
itself. Tiles are windows of `window_length` bp every `step` bp (`inputs.tiles`). Strands follow task.json's
strand_rule: "both" averages the window and its reverse complement (outputs averaged in the user's scale),
"feature" reads the region's strand (a tile's: `strand`; a centred head reads an unstranded region on +, as
the labelled task trains on it), "forward" the + strand. Windows that leave a contig
are N-padded and flagged (pad_left, pad_right; n_bases counts their N), never shortened; every window is
padded to the head's eval_length tokens, as it was fine-tuned, and one that tokenizes longer is not predicted.
Inputs that cannot be predicted are listed with a reason (`Predictions.unpredicted`). Under torchrun each
rank predicts the inputs whose row is its rank modulo the world size; every rank gets them merged in order.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np
import torch

from dnabird import __version__
from dnabird.errors import InputFormatError, UnpredictableError, reject
from dnabird.genome.reference import Genome, reverse_complement
from dnabird.inference.predictor import Predictor
from dnabird.inference.windows import read_window
from dnabird.model.task_spec import CLASSIFICATION_PROBLEMS, REGRESSION, Anchor, parse_anchor
from dnabird.prediction import inputs
from dnabird.prediction.predictions import ROW_COLUMNS, UNPREDICTED_COLUMNS, Predictions, typed_frame
from dnabird.progress import progress_bar
from dnabird.train import distributed

KINDS = tuple(ROW_COLUMNS)  # sequences, regions, tiles
UNKNOWN_CHROMOSOME = "unknown chromosome"
OFF_CONTIG = "outside the chromosome"
EMPTY = "empty input"
NO_STRAND = "no strand"
TOO_LONG = "window exceeds eval_length"
INVALID_BASE = "invalid base in window"


@dataclasses.dataclass(frozen=True)
class Setup:
    """How inputs become windows (resolved from the head's task.json and the arguments). strands: "both"
    (averaged), "feature" (a region's own strand) or a fixed "+" / "-"."""

    kind: str
    anchor: Anchor | None
    window_bp: int | None
    eval_length: int
    strands: str
    step: int | None
    scale: str

    def describe(self) -> dict:
        return {**dataclasses.asdict(self), "anchor": None if self.anchor is None else str(self.anchor),
                "dnabird": __version__}


def resolve_setup(predictor: Predictor, kind: str, step: int | None = None, strand: str | None = None) -> Setup:
    """Check the arguments against the head and fill the rest from its task.json."""
    task = predictor.task
    reject(kind not in KINDS, "kind", kind, f"one of {KINDS}")
    reject(task is None, "model", predictor.source, "a fine-tuned head (a checkpoint with task.json)")
    reject(task.problem not in (*CLASSIFICATION_PROBLEMS, REGRESSION), "model", predictor.source,
           f"a head of one of the problems {(*CLASSIFICATION_PROBLEMS, REGRESSION)}, not {task.problem!r}")
    anchor = parse_anchor(task.anchor) if task.anchor is not None else None
    if kind == "tiles":
        reject(task.window_length is None, "model", predictor.source,
               "a head with a genomic window (task.json window_length) to tile a genome")
        step = task.window_length if step is None else step
        reject(not isinstance(step, int) or step < 1, "step", step, "a positive number of bp")
    else:
        reject(step is not None, "step", step, "None unless tiling")
    rule = "feature" if anchor is not None and anchor.kind == "tss" else task.strand_rule
    strands = {"both": "both", "forward": "+", "feature": "feature"}[rule]
    if strands == "feature" and kind == "tiles":  # a strand-specific head tiles the strand asked for
        strands = strand or "+"
        reject(strands not in ("+", "-"), "strand", strand, "'+' or '-'")
    else:
        reads = {"both": "both strands", "forward": "the + strand", "feature": "each region on its strand"}[rule]
        reject(strand is not None, "strand", strand, "None: sequences are read as given" if kind == "sequences"
               else f"None: this head reads {reads} (task.json)")
        strands = "+" if kind == "sequences" and strands == "feature" else strands  # as given
    names = set(ROW_COLUMNS[kind])
    clash = [label for label in task.labels if label in names]
    reject(bool(clash), "model", predictor.source, f"output names other than the row columns {clash}")
    return Setup(kind, anchor, task.window_length, predictor.check_length(task.eval_length), strands, step,
                 "target" if task.problem == REGRESSION else "probability")


def in_user_scale(task, logits: np.ndarray) -> np.ndarray:
    """Head outputs [N, K] in the user's scale (float64): sigmoid probabilities, softmax over a multiclass
    head's classes, or a regression head's target transform inverted."""
    logits = torch.from_numpy(np.asarray(logits, dtype=np.float64))
    if task.problem == REGRESSION:
        return task.transform.inverse(logits.numpy())
    return (torch.softmax(logits, -1) if task.problem == "multiclass" else torch.sigmoid(logits)).numpy()


@dataclasses.dataclass(frozen=True)
class PredictionRun:
    """A loaded head, its genome and resolved settings, ready to predict inputs: what `predict` runs, and
    what a chunked run (`dnabird.prediction.files`) predicts each chunk with."""

    predictor: Predictor
    setup: Setup
    genome: Genome | None
    read_inputs: Callable[[], Iterator]
    batch_size: int
    ctx: distributed.Context
    settings: dict

    @property
    def outputs(self) -> tuple[str, ...]:
        return tuple(self.predictor.task.labels)

    def inputs(self) -> Iterator:
        """The inputs (`SequenceRecord` or `Region`), in order."""
        return self.read_inputs()

    def mine(self, items: Iterable) -> Iterator:
        """The inputs this rank predicts under torchrun: those whose row is its rank modulo the world size."""
        return (item for item in items if item.row % self.ctx.world_size == self.ctx.rank)

    def predict(self, items: Iterable, bar=None) -> Predictions:
        """Predictions of `items`; `bar` advances as inputs are predicted."""
        kind, rows, sequences, skipped = self.setup.kind, [], [], []
        for item in items:
            try:
                row, strands = self.windows(item)
                ids = [self.encode(sequence) for sequence in strands]
            except InputFormatError as err:
                skipped.append((item.row, _label(item), INVALID_BASE, str(err)))
                continue
            except UnpredictableError as err:
                skipped.append((item.row, _label(item), err.reason, err.detail))
                continue
            rows.append((*row, self.predictor.tokenizer.unk_tokens(strands[0])))
            sequences.append(ids)
        values = self.run(sequences, [_label_of_row(kind, row) for row in rows], bar)
        return Predictions(kind, typed_frame(rows, ROW_COLUMNS[kind]), self.outputs, values,
                           typed_frame(skipped, UNPREDICTED_COLUMNS), self.setup.scale, self.settings)

    def run(self, sequences: list[list[list[int]]], names: list[str], bar=None) -> np.ndarray:
        """Values [inputs, outputs] in the user's scale, each input's strands averaged."""
        strands = 2 if self.setup.strands == "both" else 1
        flat = [ids for strand_ids in sequences for ids in strand_ids]
        logits, length = [], self.setup.eval_length
        for first in range(0, len(flat), self.batch_size):
            batch = flat[first:first + self.batch_size]
            owners = [names[(first + n) // strands] for n in range(len(batch))]
            logits.append(self.predictor.logits(batch, length, owners).numpy())
            if bar is not None:
                bar.update((first + len(batch)) // strands - first // strands)
        k = len(self.outputs)
        values = in_user_scale(self.predictor.task, np.concatenate(logits) if logits else np.zeros((0, k)))
        return values.reshape(len(sequences), strands, k).mean(1)

    def encode(self, sequence: str) -> list[int]:
        """A window's token ids; `UnpredictableError` when `[CLS] ids [SEP]` exceed eval_length."""
        ids = self.predictor.tokenizer.encode(sequence)
        if len(ids) + 2 > self.setup.eval_length:
            raise UnpredictableError(TOO_LONG, f"{len(ids)} tokens + [CLS] + [SEP] > {self.setup.eval_length} "
                                               f"({sequence.upper().count('N')} of its bases are N, a token each)")
        return ids

    def windows(self, item) -> tuple[tuple, list[str]]:
        """The row columns of an input (but unk_tokens) and the sequences the head reads (two: both strands)."""
        both = self.setup.strands == "both"
        if self.setup.kind == "sequences":
            sequence = item.sequence.upper()
            if not sequence:
                raise UnpredictableError(EMPTY, "a sequence of 0 bp")
            strands = [sequence, reverse_complement(sequence)] if both else [sequence]
            return (item.row, item.id, len(sequence), sequence.count("N")), strands
        chrom = self.check_region(item)
        if self.setup.kind == "tiles":
            start, end, strand = item.start, item.end, self.setup.strands
        else:
            strand = self.setup.strands if self.setup.strands != "feature" else item.strand
            if strand == "." and self.setup.anchor is not None and self.setup.anchor.kind == "centre":
                strand = "+"  # as the labelled task trains on an unstranded region
            if strand not in ("+", "-", "both"):
                raise UnpredictableError(NO_STRAND, "the head reads each region on its own strand (task.json "
                                                    f"anchor {self.setup.anchor}); give the region's strand")
            start, end = self.place(item, strand)
        window = read_window(self.genome, chrom, start, end)  # + strand: pad_left/pad_right are genomic
        sequence = reverse_complement(window.sequence) if strand == "-" else window.sequence
        strands = [sequence, reverse_complement(sequence)] if both else [sequence]
        flags = (window.pad_left, window.pad_right, window.sequence.count("N"))
        if self.setup.kind == "tiles":
            return (item.row, chrom, start, end, strand, *flags), strands
        return (item.row, item.label, chrom, item.start, item.end, item.strand, start, end, strand, *flags), strands

    def check_region(self, region: inputs.Region) -> str:
        """The genome's name of the region's contig; `UnpredictableError` for an unknown contig or a region
        that is empty or leaves its contig (tiles may leave it: they are placed to fill short contigs)."""
        if region.chrom not in self.genome:
            raise UnpredictableError(UNKNOWN_CHROMOSOME, f"{region.chrom} is not in {self.genome.path.name}")
        chrom, length = self.genome.resolve(region.chrom), self.genome.length(region.chrom)
        if self.setup.kind == "regions":
            if region.end <= region.start:
                raise UnpredictableError(EMPTY, f"start {region.start} >= end {region.end}")
            if region.start < 0 or region.end > length:
                raise UnpredictableError(OFF_CONTIG, f"{region.start}-{region.end} on {chrom} of {length} bp")
        return chrom

    def place(self, region: inputs.Region, strand: str) -> tuple[int, int]:
        """The genomic window [start, end) the head reads for `region` (module docstring)."""
        anchor = self.setup.anchor
        if anchor is None:
            return region.start, region.end
        if anchor.kind == "tss":
            return anchor.interval(region.start if strand == "+" else region.end - 1, strand)
        return anchor.interval(region.start + (region.end - region.start) // 2, length=self.setup.window_bp)

    def merged(self, part: Predictions) -> Predictions:
        """Every rank's `part` merged in input order, on every rank (`part` itself in a single process)."""
        if not self.ctx.distributed:
            return part
        parts = [None] * self.ctx.world_size
        torch.distributed.all_gather_object(parts, part)
        return Predictions.concat(parts)


def _label(item) -> str:
    return item.id if isinstance(item, inputs.SequenceRecord) else item.label


def _label_of_row(kind: str, row: tuple) -> str:
    """How errors name a predicted input: its id, or its region."""
    return str(row[1]) if kind != "tiles" else f"{row[1]}:{row[2] + 1}-{row[3]}"


def prepare(model, *, sequences=None, regions=None, tiles: bool | Sequence[str] = False, genome=None,
            step: int | None = None, strand: str | None = None, sequence_column: str = "sequence",
            id_column: str = "id", batch_size: int = 16, device: str = "auto", precision: str = "fp32",
            tokenizer=None, task=None) -> PredictionRun:
    """Load `model` (joining torchrun's process group), open the inputs and resolve the settings as
    `predict` does."""
    given = [name for name, value in (("sequences", sequences), ("regions", regions), ("tiles", tiles))
             if value is not None and value is not False]
    reject(len(given) != 1, "inputs", given or None, "exactly one of sequences, regions or tiles")
    kind = given[0]
    reject(kind != "sequences" and genome is None, "genome", genome, f"a FASTA to read the {kind} from")
    reject(kind == "sequences" and genome is not None, "genome", genome, "None: sequences are given")
    reject(not isinstance(batch_size, int) or batch_size < 1, "batch_size", batch_size, "a positive integer")
    ctx = distributed.setup(device)
    predictor = Predictor.load(model, tokenizer=tokenizer, task=task, device=ctx.device, precision=precision)
    setup = resolve_setup(predictor, kind, step, strand)
    genome = genome if genome is None or isinstance(genome, Genome) else Genome(genome)
    if kind == "sequences":
        def read():
            return inputs.read_sequences(sequences, sequence_column, id_column)
    elif kind == "regions":
        reject(not isinstance(regions, (str, os.PathLike)), "regions", regions, "a BED, TSV, CSV or parquet file")

        def read():
            return inputs.read_regions(regions)
    else:
        spans = inputs.tile_spans(genome, None if tiles is True else list(tiles))

        def read():
            return inputs.tiles(genome, spans, setup.window_bp, setup.step)
    settings = {**setup.describe(), "precision": precision, "tokenizer_hash": predictor.tokenizer.hash,
                "model": str(model) if isinstance(model, (str, os.PathLike)) else type(model).__name__,
                "outputs": list(predictor.task.labels), "problem": predictor.task.problem,
                **({"target_transform": predictor.task.transform.to_dict()} if setup.scale == "target" else {})}
    return PredictionRun(predictor, setup, genome, read, batch_size, ctx, settings)


def predict(model, *, sequences: str | os.PathLike | Sequence[str] | None = None,
            regions: str | os.PathLike | None = None, tiles: bool | Sequence[str] = False,
            genome: str | os.PathLike | Genome | None = None, step: int | None = None, strand: str | None = None,
            sequence_column: str = "sequence", id_column: str = "id", batch_size: int = 16, device: str = "auto",
            precision: str = "fp32", progress: bool = True, tokenizer=None, task=None) -> Predictions:
    """A fine-tuned head's outputs over one kind of input (module docstring).

    model: a checkpoint directory with task.json, or a loaded `SequenceClassifier` with its `tokenizer` and
        `task`. Inputs, exactly one of: sequences (a FASTA, a CSV/TSV/parquet table with a `sequence_column`,
        ids from `id_column` when present, or a list of strings); regions (a BED, or a CSV/TSV/parquet table
        with columns chrom, start, end and optionally strand, name) with `genome`; tiles (True: every contig
        of `genome`; or a list of "chrom" / "chrom:start-end" regions, 1-based inclusive) every `step` bp
        (default: the head's window, no overlap). strand: a strand-specific head's strand for tiles ("+" or
        "-"). batch_size: windows per model call. device: "auto", "cpu", "cuda" …; precision: "fp32" or
        "bf16" (bfloat16 autocast).
    """
    run = prepare(model, sequences=sequences, regions=regions, tiles=tiles, genome=genome, step=step, strand=strand,
                  sequence_column=sequence_column, id_column=id_column, batch_size=batch_size, device=device,
                  precision=precision, tokenizer=tokenizer, task=task)
    with progress_bar(enabled=progress and run.ctx.is_main, desc=f"predicting {run.setup.kind}",
                      unit=" inputs") as bar:
        part = run.predict(run.mine(run.inputs()), bar)
    merged = run.merged(part)
    distributed.teardown(run.ctx)
    return merged

