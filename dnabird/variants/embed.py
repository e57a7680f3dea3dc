"""Per-sequence embeddings from a model's encoder: its final hidden states of `[CLS] sequence [SEP]`, padded
to one fixed token length (so a sequence's vector does not depend on what else is in the batch), pooled by
`Encoder.pool` (each pooling name means there what it means for a head). A variant's embedding distance is a
scoring method (`dnabird.variants.scorer.EmbeddingDistanceScorer`, `score_variants(..., method="embed_dist")`)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from dnabird.errors import InputFormatError, ParameterError, reject
from dnabird.genome.bed import read_bed
from dnabird.genome.reference import Genome
from dnabird.inference.predictor import Predictor
from dnabird.io import check_outputs
from dnabird.model.config import POOLINGS as HEAD_POOLINGS
from dnabird.model.config import STATE_POOLINGS
from dnabird.progress import progress_bar

POOLINGS = (*STATE_POOLINGS, *HEAD_POOLINGS)


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

