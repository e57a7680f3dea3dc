"""Per-sequence embeddings from a model's encoder: its final hidden states of `[CLS] sequence [SEP]`, padded
to one fixed token length (so a sequence's vector does not depend on what else is in the batch), pooled by
`Encoder.pool` (each pooling name means there what it means for a head); and `embedding_distances`, a variant's
effect as the distance between the embeddings of its REF and ALT windows (GPN's embedding distance)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence

import numpy as np

from dnabird.errors import InputFormatError, ParameterError, reject
from dnabird.genome.bed import read_bed
from dnabird.genome.reference import Genome
from dnabird.inference.predictor import Predictor
from dnabird.io import check_outputs
from dnabird.model.config import POOLINGS as HEAD_POOLINGS
from dnabird.model.config import STATE_POOLINGS
from dnabird.model.task_spec import Anchor
from dnabird.progress import progress_bar
from dnabird.variants.records import Variant, read_alleles
from dnabird.variants.score import Setup, allele_windows, encode, recorded_settings, resolve_setup, score_windows
from dnabird.variants.scores import VariantScores

POOLINGS = (*STATE_POOLINGS, *HEAD_POOLINGS)
DISTANCE_POOLING = "mean_sequence"  # REF and ALT windows may differ in token count: compare their means


def embed(model, source: str | os.PathLike | Genome | Sequence[str], regions=None, *, pooling: str = "cls_state",
          eval_length: int | None = None, batch_size: int = 16, device: str = "auto", out=None,
          progress: bool = True, tokenizer=None) -> np.ndarray:
    """Vectors [n, hidden] of sequences, or of genome regions.

    source: a list of DNA sequences (then `regions` is None), or a FASTA path / `Genome` with `regions`: a
        BED path (strand "-" reads the reverse complement) or (chrom, start, end[, strand]) tuples, 0-based.
    pooling: "cls_state" (the [CLS] token's final hidden state), "mean_sequence" (the mean over the DNA
        tokens, without [CLS] and [SEP]), or what a head reads: "cls" (the tanh pooler over [CLS]), "mean"
        (the mean over every real token, [CLS] and [SEP] included), "centre", "centre_max" (`Encoder.pool`).
    eval_length: padded token length (default: the task's, else the model's full length).
    out: write an HDF5 file: /embeddings [n, hidden] float32, /names, attributes pooling and settings.
    """
    reject(pooling not in POOLINGS, "pooling", pooling, f"one of {POOLINGS}")
    if out is not None:
        check_outputs([out], inputs=[x if isinstance(x, (str, os.PathLike)) else None for x in (source, regions)])
    predictor = Predictor.load(model, tokenizer=tokenizer, device=device)
    if eval_length is None:
        eval_length = predictor.task.eval_length if predictor.task else predictor.longest_length
    eval_length = predictor.check_length(eval_length)
    names, sequences = _inputs(source, regions)
    vectors = []
    for first in progress_bar(range(0, len(sequences), batch_size), enabled=progress, desc="embedding",
                              unit=" batches"):
        rows = []
        for name, sequence in zip(names[first:first + batch_size], sequences[first:first + batch_size], strict=True):
            ids = predictor.tokenizer.encode(sequence, record=name)
            if len(ids) + 2 > eval_length:
                raise ParameterError("eval_length", eval_length, f">= {len(ids) + 2} tokens for {name}")
            rows.append(ids)
        vectors.append(predictor.pooled(rows, eval_length, pooling, names[first:first + batch_size]).numpy())
    result = np.concatenate(vectors) if vectors else np.zeros((0, predictor.model.config.hidden_size), np.float32)
    if out is not None:
        from dnabird.inference.tables import hdf5_output, string_dataset

        settings = {"pooling": pooling, "eval_length": eval_length, "tokenizer_hash": predictor.tokenizer.hash}
        with hdf5_output(out, settings) as handle:
            handle.create_dataset("embeddings", data=result.astype(np.float32))
            string_dataset(handle, "names", names)
            handle.attrs["pooling"] = pooling
    return result


def _inputs(source, regions) -> tuple[list[str], list[str]]:
    """Names and upper-case sequences of the inputs."""
    if regions is None:
        reject(isinstance(source, (str, os.PathLike, Genome)), "regions", None,
               "regions (a BED or tuples) when the source is a genome")
        sequences = [str(s).upper() for s in source]
        return [f"sequence_{i}" for i in range(len(sequences))], sequences
    genome = source if isinstance(source, Genome) else Genome(source)
    if isinstance(regions, (str, os.PathLike)):
        path, regions = regions, [(r.chrom, r.start, r.end, r.strand or "+", r.name) for r in read_bed(regions)]
        if not regions:
            raise InputFormatError("the BED file holds no regions", path=path)
    names, sequences = [], []
    for region in regions:
        chrom, start, end, strand, *rest = (*region, "+") if len(region) == 3 else region
        strand = "+" if strand == "." else strand
        names.append(rest[0] if rest and rest[0] not in (None, ".") else f"{chrom}:{start}-{end}:{strand}")
        sequences.append(genome.fetch(chrom, start, end, strand).sequence.upper())
    return names, sequences


class EmbeddingDistanceScorer:
    """Euclidean distance between the mean-pooled final hidden states (over the DNA tokens) of the REF and ALT
    windows, averaged over the strands scored: a `score_windows` scorer whose `alt` is the distance (`ref` 0,
    so `diff` is the distance too)."""

    outputs = ("embed_dist",)
    groups = (".",)

    def __init__(self, predictor: Predictor, setup: Setup):
        self.predictor, self.setup = predictor, setup

    def rows(self, strands) -> tuple[list, list, None]:
        """The REF and ALT windows of each strand, one row each."""
        ids = [encode(self.predictor, sequence, self.setup.eval_length)
               for windows in strands for sequence in (windows.ref, windows.alt)]
        return ids, [[None]] * len(ids), None

    def padded_length(self, row: list[int]) -> int:
        """A head's encoder at its task's eval_length; a pretrained model's rows at their own block multiple,
        as `mlm_llr` pads them."""
        return self.setup.eval_length if self.predictor.has_head else self.predictor.padded_length(len(row))

    def run(self, ids: list, targets: list, names: list[str] | None = None) -> np.ndarray:
        length = self.setup.eval_length if self.predictor.has_head else None
        return self.predictor.pooled(ids, length, DISTANCE_POOLING, names).numpy()

    def combine(self, vectors: np.ndarray, extra: None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        vectors = vectors.astype(np.float64)  # [2 * strands, hidden]: ref, alt, ref, alt …
        distance = np.linalg.norm(vectors[1::2] - vectors[0::2], axis=1).mean()
        return np.zeros(1), np.array([distance]), np.full(1, np.nan)


def embedding_distances(model, genome: str | os.PathLike | Genome, variants: str | os.PathLike | Iterable[Variant],
                        *, rc: str = "average", window_bp: int | None = None, eval_length: int | None = None,
                        batch_size: int = 16, device: str = "auto", progress: bool = True) -> VariantScores:
    """Each ALT allele's embedding distance (`EmbeddingDistanceScorer`, output `embed_dist`) in windows centred
    on it, through `score_windows`: the windows, REF checks and skip reasons of `score_variants`. Window and
    eval length: a pretrained model's as `mlm_llr` sizes them (the same arguments); a fine-tuned head's
    encoder reads the window and length of its task. rc: "average" (both strands, as GPN) or "forward"."""
    predictor = Predictor.load(model, device=device)
    genome = genome if isinstance(genome, Genome) else Genome(genome)
    if predictor.has_head:
        task = predictor.task
        window_bp, eval_length = window_bp or task.window_length, eval_length or task.eval_length
        reject(window_bp is None, "window_bp", None, "a window in bp: the model's task.json gives none")
        reject(rc not in ("average", "forward"), "rc", rc, '"average" or "forward"')
        setup = Setup("embed_dist", window_bp, predictor.check_length(eval_length), Anchor("centre"),
                      rc == "average", 0, "skip")
    else:
        setup = dataclasses.replace(resolve_setup(predictor, method="mlm_llr", rc=rc, window_bp=window_bp,
                                                  eval_length=eval_length,
                                                  checkpoint=model if isinstance(model, (str, os.PathLike)) else None),
                                    method="embed_dist")
    scorer = EmbeddingDistanceScorer(predictor, setup)
    with progress_bar(enabled=progress, desc="embedding distances", unit=" windows") as bar:
        scores = score_windows(scorer, setup, read_alleles(variants),
                               lambda allele: allele_windows(allele, genome, setup, None), batch_size, bar)
    scores.settings = recorded_settings(setup, predictor, model, pooling=DISTANCE_POOLING)
    return scores
