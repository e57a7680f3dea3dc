"""Zero-shot variant scores from a masked language model: the masked-marginal log-likelihood ratio.

REF and ALT windows are tokenized separately and aligned on bp: the masked span is the union, over both, of
the tokens overlapping the variant's bases ± `flank` bp, grown until it ends on token boundaries in both.
Each sequence is scored with its span masked (one forward pass serves both when the masked inputs coincide):
log P(allele) = Σ over the masked tokens of log p(true token | the window with the span masked), LLR =
log P(ALT) − log P(REF), and per bp log P(ALT)/bp(ALT) − log P(REF)/bp(REF). Over one token in identical
context LLR is the exact log ratio of the model's conditional probabilities; over several it is a product
of marginals (masked marginal, as ESM-1v). It measures how plausible each allele looks to the model, not a
molecular effect (docs/variant-scoring.md).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from dnabird.variants.windows import AlleleWindows


@dataclass(frozen=True)
class MaskedSpan:
    """Token index range [first, stop) to mask in one sequence and the bp those tokens spell."""

    first: int
    stop: int
    bp: int


def masked_spans(windows: AlleleWindows, ref_spans: list[tuple[int, int]], alt_spans: list[tuple[int, int]],
                 flank: int = 0) -> tuple[MaskedSpan, MaskedSpan]:
    """The REF and ALT token ranges to mask: every token overlapping the allele ± `flank` bp, in either
    sequence, mapped across through the shared flanks until both end on token boundaries.

    `ref_spans`/`alt_spans`: each token's bp span in `windows.ref`/`windows.alt` (the tokenizer's `offsets`).
    """
    alleles = ((windows.ref_at, windows.ref_at + windows.ref_length, ref_spans),
               (windows.alt_at, windows.alt_at + windows.alt_length, alt_spans))
    left = right = flank  # bp masked beyond the allele, the same in both sequences
    while True:  # a pass that grows neither side computed both spans with the final flanks
        grown, result = (left, right), []
        for first, stop, spans in alleles:
            i, j = _overlapping(spans, first - left, stop + right)
            left, right = max(left, first - spans[i][0]), max(right, spans[j - 1][1] - stop)
            result.append(MaskedSpan(i, j, spans[j - 1][1] - spans[i][0]))
        if (left, right) == grown:
            return result[0], result[1]


def _overlapping(spans: list[tuple[int, int]], low: int, high: int) -> tuple[int, int]:
    """Index range of the tokens whose bp span overlaps [low, high) (clipped to the sequence)."""
    low, high = max(low, 0), min(high, spans[-1][1])
    starts, ends = [s for s, _ in spans], [e for _, e in spans]
    return bisect_right(ends, low), bisect_left(starts, high)
