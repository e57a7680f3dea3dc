"""MLM + NSP pretraining examples `[CLS] A [SEP] B [SEP]` from tokenized documents (BigBird App. F.1).

`PretrainingExamples(documents, ...)[g]` is example `g` of an endless stream: epoch `g // N` and
index `g % N` (N = number of documents) fix everything about it — which document A comes from (a
seeded permutation per epoch), A's start sentence, B, the NSP label and the MLM masking — through
one `numpy.random.default_rng((seed, epoch, index))`. So the order is independent of DataLoader
workers and ranks, and resuming at any example is O(1).

`documents` is any sequence of objects with `.chrom`, `.start`, `.end`, `.sentences` (arrays of
token ids) and `.coords` ([sentences, 2] bp start/end), e.g. `dnabird.data.shards.ShardReader`.
Special ids ([CLS], [SEP], [PAD], [MASK] and those never masked) come from the tokenizer given.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from dnabird.data.epochs import EpochOrder
from dnabird.errors import InputFormatError, ParameterError, reject
from dnabird.labels import IGNORE_INDEX

NSP_IS_NEXT, NSP_IS_RANDOM = 0, 1
_MAX_PARTNER_DRAWS = 100


class PretrainingExamples(EpochOrder):
    """Endless, index-addressed stream of masked sentence-pair examples.

    tokenizer: the tokenizer of the documents' ids (its vocabulary size and special ids; any object with
        `vocab_size`, `pad_id`, `cls_id`, `sep_id`, `mask_id` and `special_ids`).
    max_length: tokens per example including [CLS] and two [SEP] (4096 in the paper).
    block_size: examples are padded with [PAD] to a multiple of it (the attention block size).
    mask_rate: share of non-special tokens selected for MLM (15 %; BigBird states 15 % and 10 %);
        of those 80 % become [MASK], 10 % a random non-special token, 10 % stay unchanged.
    random_next_rate: share of examples whose B comes from another, non-overlapping document.
    """

    def __init__(self, documents: Sequence, *, tokenizer, max_length: int = 4096, block_size: int = 64,
                 mask_rate: float = 0.15, random_next_rate: float = 0.5, seed: int = 0):
        if max_length % block_size or max_length < 8:
            raise ParameterError("max_length", max_length, f"a multiple of block_size={block_size}, >= 8")
        reject(not 0.0 < mask_rate < 1.0, "mask_rate", mask_rate, "a fraction in (0, 1)")
        reject(not 0.0 <= random_next_rate <= 1.0, "random_next_rate", random_next_rate, "a fraction in [0, 1]")
        self.vocab_size = tokenizer.vocab_size
        self.special_ids = np.array(sorted(tokenizer.special_ids), dtype=np.int64)
        reject(self.vocab_size <= len(self.special_ids), "tokenizer.vocab_size", self.vocab_size,
               f"an integer > {len(self.special_ids)} (the special ids)")
        self.pad_id, self.cls_id, self.sep_id, self.mask_id = (tokenizer.pad_id, tokenizer.cls_id, tokenizer.sep_id,
                                                               tokenizer.mask_id)
        reject(len(documents) < 2, "documents", f"{len(documents)} document(s)", "at least 2 (for random B)")
        self.documents = documents
        self.max_length, self.block_size = max_length, block_size
        self.mask_rate, self.random_next_rate, self.seed = mask_rate, random_next_rate, seed

    def __len__(self) -> int:
        """Examples per epoch (one per document as the source of A)."""
        return len(self.documents)

    def __getitem__(self, global_index: int) -> dict[str, np.ndarray]:
        epoch, index = divmod(int(global_index), len(self))
        rng = np.random.default_rng((self.seed, epoch, index, 1))
        pair = self.sentence_pair(int(self.order(epoch)[index]), rng)
        return self.assemble(*pair, rng)

    def sentence_pair(self, doc_index: int, rng: np.random.Generator):
        """(A sentences, B sentences, NSP label) for a pair whose A starts in document `doc_index`."""
        doc = self.documents[doc_index]
        sentences, budget = doc.sentences, self.max_length - 3
        is_random = rng.random() < self.random_next_rate or len(sentences) < 2
        start, stop = _span(sentences, int(rng.integers(0, max(1, len(sentences) - 1))), budget)
        chunk = sentences[start:stop]
        a_end = int(rng.integers(1, len(chunk))) if len(chunk) >= 2 else 1
        a = chunk[:a_end]
        if not is_random:
            b = chunk[a_end:] or [sentences[start + a_end]]
            return a, b, NSP_IS_NEXT
        interval = (doc.chrom, int(doc.coords[start, 0]), int(doc.coords[start + a_end - 1, 1]))
        other = self._non_overlapping_document(doc_index, interval, rng)
        room = max(1, budget - sum(map(len, a)))
        first, stop = _span(other.sentences, int(rng.integers(0, len(other.sentences))), room)
        return a, other.sentences[first:stop], NSP_IS_RANDOM

    def _non_overlapping_document(self, doc_index: int, interval: tuple[str, int, int], rng):
        chrom, start, end = interval
        for _ in range(_MAX_PARTNER_DRAWS):
            candidate = int(rng.integers(0, len(self.documents)))
            other = self.documents[candidate]
            if candidate != doc_index and (other.chrom != chrom or other.end <= start or other.start >= end):
                return other
        raise InputFormatError(f"no document found in {_MAX_PARTNER_DRAWS} draws whose interval avoids "
                               f"{chrom}:{start}-{end}; the corpus needs more non-overlapping documents",
                               record=f"document {doc_index}")

    def assemble(self, a: list[np.ndarray], b: list[np.ndarray], nsp_label: int,
                 rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Truncate the pair to fit, add specials and segments, pad to a block multiple, apply masking."""
        a, b = _truncate_pair(list(a), list(b), self.max_length - 3)
        parts = [np.array([self.cls_id]), *a, np.array([self.sep_id]), *b, np.array([self.sep_id])]
        ids = np.concatenate(parts).astype(np.int64)
        sentence = np.concatenate([np.full(len(p), -1 if i in (0, len(a) + 1, len(parts) - 1) else i)
                                   for i, p in enumerate(parts)])
        size_a = sum(map(len, a))
        segments = (np.arange(len(ids)) > size_a + 1).astype(np.int64)    # 0: [CLS] A [SEP], 1: B [SEP]
        input_ids, labels = mask_tokens(ids, rng, rate=self.mask_rate, vocab_size=self.vocab_size,
                                        mask_id=self.mask_id, special_ids=self.special_ids)
        fields = {"input_ids": input_ids, "token_type_ids": segments, "attention_mask": np.ones(len(ids), dtype=bool),
                  "mlm_labels": labels, "sentence_index": sentence}
        length = -(-len(ids) // self.block_size) * self.block_size
        return {**_padded(fields, length, self.pad_id), "nsp_label": np.int64(nsp_label)}


def mask_tokens(ids: np.ndarray, rng: np.random.Generator, *, rate: float, vocab_size: int, mask_id: int,
                special_ids: np.ndarray):
    """BERT masking: pick round(rate × non-special tokens) positions; 80 % [MASK], 10 % random, 10 % kept.

    Tokens in `special_ids` (the tokenizer's) are never picked nor drawn as random replacements.
    Returns (masked ids, labels) with labels = the original id at picked positions, IGNORE_INDEX elsewhere.
    """
    special = np.isin(ids, special_ids)
    candidates = np.flatnonzero(~special)
    count = min(len(candidates), max(1, round(rate * len(candidates)))) if len(candidates) else 0
    picked = np.sort(rng.choice(candidates, size=count, replace=False))
    labels = np.full_like(ids, IGNORE_INDEX)
    labels[picked] = ids[picked]
    masked = ids.copy()
    action = rng.random(count)
    masked[picked[action < 0.8]] = mask_id
    swap = picked[(action >= 0.8) & (action < 0.9)]
    leading = len(special_ids)
    if np.array_equal(np.sort(special_ids), np.arange(leading)):  # specials first (dnabird's layout): one draw
        masked[swap] = rng.integers(leading, vocab_size, size=len(swap))
    else:
        masked[swap] = rng.choice(np.setdiff1d(np.arange(vocab_size), special_ids), size=len(swap))
    return masked, labels


def _span(sentences: Sequence[np.ndarray], first: int, room: int) -> tuple[int, int]:
    """Consecutive sentences [start, stop) from `first` holding >= `room` tokens if the document allows:
    extended forwards to the document's end, then backwards."""
    start, stop, size = first, first, 0
    while stop < len(sentences) and size < room:
        size += len(sentences[stop])
        stop += 1
    while start > 0 and size < room:
        start -= 1
        size += len(sentences[start])
    return start, stop


def _truncate_pair(a: list[np.ndarray], b: list[np.ndarray], budget: int):
    """Shorten the longer side until |A| + |B| <= budget: whole sentences first (A from the front, so it
    stays adjacent to B; B from the back), tokens only when one sentence is left."""
    while sum(map(len, a)) + sum(map(len, b)) > budget:
        size_a, size_b = sum(map(len, a)), sum(map(len, b))
        excess = size_a + size_b - budget
        if size_a > size_b:
            a = a[1:] if len(a) > 1 else [a[0][min(excess, len(a[0]) - 1):]]
        else:
            b = b[:-1] if len(b) > 1 else [b[0][:max(1, len(b[0]) - excess)]]
    return a, b


def collate(examples: list[dict[str, np.ndarray]], *, pad_id: int) -> dict[str, torch.Tensor]:
    """Stack examples into a batch, padding each field to the longest (block-multiple) example ([PAD] is
    `pad_id`, the tokenizer's)."""
    length = max(len(e["input_ids"]) for e in examples)
    padded = [_padded(e, length, pad_id) for e in examples]
    batch = {key: torch.from_numpy(np.stack([p[key] for p in padded])) for key in padded[0]}
    batch["nsp_label"] = torch.tensor([int(e["nsp_label"]) for e in examples])
    return batch


def _padded(fields: dict[str, np.ndarray], length: int, pad_id: int) -> dict[str, np.ndarray]:
    """The token-aligned fields of an example padded to `length`, each with its fill ([PAD] is `pad_id`)."""
    fill = {"input_ids": pad_id, "token_type_ids": 0, "attention_mask": False, "mlm_labels": IGNORE_INDEX,
            "sentence_index": -1}
    return {key: np.pad(fields[key], (0, length - len(fields[key])), constant_values=value)
            for key, value in fill.items()}
