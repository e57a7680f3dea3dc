"""A variant score that needs no model: the change in log-likelihood of the variant's masked span under an
order-k Markov chain over bases (`dnabird.pretraining.markov`) — the cheap baseline a zero-shot score must
beat, printed beside every method by `benchmark-variants` and by `benchmarks/variant_auroc.py`.

The span is `mlm_llr`'s (the tokens touching the allele, grown to token boundaries in REF and ALT,
`dnabird.variants.mlm.masked_spans`); each of its bases is scored given the k bases before it, so the chain
knows the span's tokens as the model does. `genome_chain` fits the chain on evenly spaced stretches of the
genome the variants are scored on; the benchmark script fits it on a run's training shards instead.
"""

from __future__ import annotations

import numpy as np

from dnabird.genome.reference import Genome
from dnabird.pretraining.markov import MarkovBaseline
from dnabird.variants.mlm import masked_spans
from dnabird.variants.windows import AlleleWindows

MARKOV_ORDER = 6
STRETCHES, STRETCH_BP = 2000, 10_000  # the genome stretches a chain is fitted on, at most


class _Stretch:
    """A genome stretch as `MarkovBaseline.fit` reads documents: its token ids as one sentence."""

    def __init__(self, ids: list[int]):
        self.sentences = [np.asarray(ids, dtype=np.int64)]


def genome_chain(genome: Genome, tokenizer, order: int = MARKOV_ORDER) -> MarkovBaseline:
    """Order 0…`order` chains fitted on up to `STRETCHES` evenly spaced `STRETCH_BP`-bp stretches of `genome`
    (read through `tokenizer`, whose pieces the chain scores)."""
    names, sizes = zip(*genome.lengths.items(), strict=True)
    ends = np.cumsum(sizes)
    count = max(1, min(STRETCHES, int(ends[-1]) // STRETCH_BP))
    stretches = []
    for at in np.linspace(0, ends[-1] - 1, count).astype(np.int64):
        index = int(np.searchsorted(ends, at, side="right"))
        start = int(at - (ends[index] - sizes[index]))
        sequence = genome.fetch(names[index], start, min(start + STRETCH_BP, sizes[index])).sequence.upper()
        stretches.append(_Stretch(tokenizer.encode(sequence)))
    return MarkovBaseline.fit(stretches, tokenizer, max_order=order, max_documents=count)


def markov_llr(markov: MarkovBaseline, tokenizer, windows: AlleleWindows, rc: bool, flank_bp: int = 0,
               order: int = MARKOV_ORDER) -> tuple[float, float]:
    """log P(ALT span) − log P(REF span) under the order-`order` chain, raw and per bp, averaged over the
    strands (both with `rc`) as `mlm_llr` averages them."""
    llr, per_bp = [], []
    for w in [windows, windows.reverse_complement()] if rc else [windows]:
        ids = [np.asarray(tokenizer.encode(sequence)) for sequence in (w.ref, w.alt)]
        spans = masked_spans(w, *(tokenizer.token_spans(i) for i in ids), flank_bp)
        log_p = []
        for tokens, span in zip(ids, spans, strict=True):
            selected = np.zeros(len(tokens), bool)
            selected[span.first:span.stop] = True
            log_p.append(markov.log2_probs(tokens, selected)[order].sum() * np.log(2))
        llr.append(log_p[1] - log_p[0])
        per_bp.append(log_p[1] / spans[1].bp - log_p[0] / spans[0].bp)
    return float(np.mean(llr)), float(np.mean(per_bp))
