"""Order-k Markov chains over bases: the standard DNA language-model baseline of the held-out report.

Fitted on the training shards (tokens decoded to bases); at a masked token, its bases are scored one by
one given the k true bases before each (the earlier bases of the same token included), so the chain is
told where the token starts and how long it is — information the MLM model has to infer. It is a
baseline the model must beat, never one it beats for free. Context restarts at every special token
([CLS], [SEP], [PAD]); where fewer than k bases precede, the chain of the available order is used.
Counts are add-one smoothed over the five symbols A, C, G, T, N.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

ALPHABET = "ACGTN"
SYMBOLS = len(ALPHABET)


def piece_table(tokenizer) -> tuple[np.ndarray, np.ndarray]:
    """Per token id, its bases as codes 0–4 (padded with -1) [V, longest] and its length [V] (0 for the
    tokenizer's special ids). Other IUPAC letters count as N."""
    pieces = ["" if i in tokenizer.special_ids else tokenizer.id_to_piece(i).upper()
              for i in range(tokenizer.vocab_size)]
    lengths = np.array([len(p) for p in pieces])
    table = np.full((len(pieces), max(lengths.max(), 1)), -1, dtype=np.int64)
    lookup = {base: code for code, base in enumerate(ALPHABET)}
    for i, piece in enumerate(pieces):
        table[i, : len(piece)] = [lookup.get(b, ALPHABET.index("N")) for b in piece]
    return table, lengths


def sampled_sentences(documents: Sequence, max_documents: int = 2000) -> Iterator[np.ndarray]:
    """The sentences of up to `max_documents` evenly spaced documents (what the baselines count)."""
    picks = np.unique(np.linspace(0, len(documents) - 1, min(len(documents), max_documents)).astype(int))
    for index in picks:
        yield from documents[int(index)].sentences


def _bases(ids: np.ndarray, table: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The base codes spelled by token `ids` in order, and for each base the index of its token."""
    keep = np.arange(table.shape[1])[None, :] < lengths[ids][:, None]  # [T, longest]
    token = np.broadcast_to(np.arange(len(ids))[:, None], keep.shape)
    return table[ids][keep], token[keep]


def _contexts(codes: np.ndarray, available: np.ndarray, order: int) -> np.ndarray:
    """Index of the `order` bases before each position (most recent last), -1 where fewer are available."""
    index = np.zeros(len(codes), dtype=np.int64)
    for lag in range(1, order + 1):
        shifted = np.zeros(len(codes), dtype=np.int64)
        shifted[lag:] = codes[:-lag]
        index += shifted * SYMBOLS ** (lag - 1)
    return np.where(available >= order, index, -1)


class MarkovBaseline:
    """Order 0…`max_order` chains; `log2_probs` scores tokens with each order 1…`max_order`."""

    def __init__(self, counts: list[np.ndarray], table: np.ndarray, lengths: np.ndarray):
        self.max_order = len(counts) - 1
        self.table, self.lengths = table, lengths
        self.log2 = [np.log2((c + 1.0) / (c + 1.0).sum(axis=1, keepdims=True)) for c in counts]

    @classmethod
    def fit(cls, documents: Sequence, tokenizer, *, max_order: int = 6, max_documents: int = 2000) -> MarkovBaseline:
        """Count (context, base) pairs of every order over up to `max_documents` evenly spaced documents,
        each sentence a stretch of its own."""
        table, lengths = piece_table(tokenizer)
        counts = [np.zeros((SYMBOLS ** k, SYMBOLS)) for k in range(max_order + 1)]
        for sentence in sampled_sentences(documents, max_documents):
            codes, _ = _bases(np.asarray(sentence, dtype=np.int64), table, lengths)
            available = np.arange(len(codes))
            for k in range(max_order + 1):
                context = _contexts(codes, available, k)
                ok = context >= 0
                np.add.at(counts[k], (context[ok], codes[ok]), 1.0)
        return cls(counts, table, lengths)

    def log2_probs(self, ids: np.ndarray, selected: np.ndarray) -> dict[int, np.ndarray]:
        """For one example's true token `ids` [L] and the positions `selected` [L] (bool): order k ->
        log₂ p(bases of each selected token | the k bases before each), in position order."""
        ids = np.asarray(ids, dtype=np.int64)
        codes, token = _bases(ids, self.table, self.lengths)
        # a stretch restarts after every special token: bases available before each base within its stretch
        position = np.arange(len(codes))
        restart = np.r_[True, np.diff(token) > 1] if len(codes) else np.zeros(0, dtype=bool)
        available = position - np.maximum.accumulate(np.where(restart, position, 0))
        per_order = [self.log2[k][np.maximum(_contexts(codes, available, k), 0), codes]
                     for k in range(self.max_order + 1)]
        positions = np.flatnonzero(selected)
        rank = np.full(len(ids), -1)
        rank[positions] = np.arange(len(positions))
        out = {}
        for k in range(1, self.max_order + 1):
            used = np.minimum(available, k)  # the highest order the stretch allows at each base
            base_log2 = np.choose(used, per_order[: k + 1]) if len(codes) else np.zeros(0)
            wanted = rank[token] >= 0
            scores = np.zeros(len(positions))
            np.add.at(scores, rank[token][wanted], base_log2[wanted])
            out[k] = scores
        return out
