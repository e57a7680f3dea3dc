"""Leakage between a training split and the splits a model is judged on, counted before training.

For each validation or test example: is it identical to a training example or to its reverse complement (and
does such a copy carry another label), does its region overlap a training region or repeat one's exact
coordinates, and does it share a long k-mer (32 bp by default, canonical: a k-mer and its reverse complement
count as one) with any training sequence. Sequences are compared through 16-byte digests of their canonical
form and k-mers as 2-bit codes in 64-bit integers (k <= 32), sorted once for the training split and searched
for the others: 100,000 training sequences of 1 kb take about half a minute (benchmarks/leakage.py).

`pretraining_chromosomes` reads the chromosomes a pretrained checkpoint saw, where its run recorded them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dnabird.genome.reference import reverse_complement

CHECKS = ("identical_to_train", "identical_other_label", "overlapping_train_region", "same_coordinates_as_train",
          "sharing_kmer_with_train")
_CODE = np.full(256, 4, dtype=np.uint8)
_CODE[list(b"ACGT")] = np.arange(4, dtype=np.uint8)
_CHUNK = 1 << 20


def canonical_digest(sequence: str) -> bytes:
    """A 16-byte digest of the lesser of `sequence` and its reverse complement (upper-case A/C/G/T/N)."""
    return hashlib.blake2b(min(sequence, reverse_complement(sequence)).encode("ascii"), digest_size=16).digest()


def canonical_kmers(sequences: Sequence[str], k: int):
    """Yield (codes, owners) chunk by chunk: the canonical 2-bit code (uint64) of every k-mer without N in
    `sequences`, and a function giving the sequence index of chosen codes (`owners(selection)`)."""
    if not 1 <= k <= 32:
        raise ValueError(f"k={k} is invalid: expected 1 <= k <= 32 (a k-mer in 64 bits)")
    joined = np.frombuffer("N".join(sequences).encode("ascii"), dtype=np.uint8)
    starts = np.cumsum([0] + [len(s) + 1 for s in sequences[:-1]])
    codes = _CODE[joined]
    total = len(codes) - k + 1
    for first in range(0, max(total, 0), _CHUNK):
        width = min(_CHUNK, total - first)
        raw = codes[first:first + width + k - 1]
        unknown = np.concatenate([[0], np.cumsum(raw == 4, dtype=np.int32)])   # N seen before each position
        forward, reverse = _window_codes((raw & 3).astype(np.uint64), k)
        keep = np.flatnonzero(unknown[k:k + width] == unknown[:width])
        np.minimum(forward, reverse, out=forward)

        def owners(selection, keep=keep, first=first):
            return np.searchsorted(starts, first + keep[selection], side="right") - 1

        yield forward[keep], owners


def _window_codes(bases: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """2-bit codes of every k-mer of `bases` (uint64 codes 0-3) and of its reverse complement, built by doubling:
    codes of 1-, 2-, 4-, … -mers, then k's binary pieces joined (a few passes over the array, not k)."""
    forward, reverse, length = {1: bases}, {1: np.uint64(3) - bases}, 1
    while 2 * length <= k:
        size = len(bases) - 2 * length + 1
        shift = np.uint64(2 * length)
        forward[2 * length] = (forward[length][:size] << shift) | forward[length][length:length + size]
        reverse[2 * length] = (reverse[length][length:length + size] << shift) | reverse[length][:size]
        length *= 2
    width = len(bases) - k + 1
    codes, complements, offset = np.zeros(width, np.uint64), np.zeros(width, np.uint64), 0
    for piece in sorted(forward, reverse=True):
        if k - offset >= piece:
            codes = (codes << np.uint64(2 * piece)) | forward[piece][offset:offset + width]
            complements |= reverse[piece][offset:offset + width] << np.uint64(2 * offset)
            offset += piece
    return codes, complements


def _sorted_distinct(values: np.ndarray) -> np.ndarray:
    """`values` sorted without repeats (a sort and a comparison: faster than `np.unique` on 64-bit codes)."""
    values = np.sort(values)
    return values[np.concatenate([[True], values[1:] != values[:-1]])] if len(values) else values


def kmer_set(sequences: Sequence[str], k: int) -> np.ndarray:
    """The sorted distinct canonical k-mer codes of `sequences`."""
    chunks = [codes for codes, _ in canonical_kmers(sequences, k)]
    return _sorted_distinct(np.concatenate(chunks)) if chunks else np.zeros(0, dtype=np.uint64)


def sharing_kmers(sequences: Sequence[str], reference: np.ndarray, k: int) -> np.ndarray:
    """bool [N]: which of `sequences` hold a canonical k-mer of the sorted `reference` codes (`kmer_set`)."""
    found = np.zeros(len(sequences), dtype=bool)
    if len(reference) == 0:
        return found
    for codes, owners in canonical_kmers(sequences, k):
        order = np.argsort(codes)          # sorted keys: each search starts where the last one ended
        at = np.searchsorted(reference, codes[order]).clip(max=len(reference) - 1)
        found[owners(order[reference[at] == codes[order]])] = True
    return found


def overlapping(chroms, starts, ends, train_chroms, train_starts, train_ends) -> np.ndarray:
    """bool [N]: which half-open intervals overlap at least one training interval on the same chromosome."""
    chroms, starts, ends = np.asarray(chroms), np.asarray(starts), np.asarray(ends)
    train_chroms, train_starts, train_ends = np.asarray(train_chroms), np.asarray(train_starts), np.asarray(train_ends)
    out = np.zeros(len(chroms), dtype=bool)
    for chrom in np.intersect1d(np.unique(chroms), np.unique(train_chroms)):
        mine, theirs = chroms == chrom, train_chroms == chrom
        order = np.argsort(train_starts[theirs], kind="stable")
        t_starts, reach = train_starts[theirs][order], np.maximum.accumulate(train_ends[theirs][order])
        before = np.searchsorted(t_starts, ends[mine], side="left")   # training intervals starting before end
        hit = before > 0
        hit[hit] = reach[before[hit] - 1] > starts[mine][hit]
        out[mine] = hit
    return out


class Leakage:
    """The leakage of other splits against a training split. Build with the training split's sequences, labels
    (any hashable per example) and, for regions, the intervals read and the coordinates given; then `check`
    each other split. `k`: k-mer length (0: no k-mer check)."""

    def __init__(self, sequences: Sequence[str], labels: Sequence, *, k: int = 32, regions=None, coordinates=None):
        self.k = k
        self.labels_of: dict[bytes, set] = {}
        for sequence, label in zip(sequences, labels, strict=True):
            self.labels_of.setdefault(canonical_digest(sequence), set()).add(label)
        self.train_duplicates = len(sequences) - len(self.labels_of)
        self.kmers = kmer_set(sequences, k) if k else None
        self.regions = regions
        self.coordinates = None if coordinates is None else set(zip(*coordinates, strict=True))

    def check(self, sequences: Sequence[str], labels: Sequence, *, regions=None, coordinates=None) -> dict:
        """Per check (`CHECKS`), a bool array over the split's examples; checks that do not apply are absent."""
        digests = [canonical_digest(s) for s in sequences]
        same = np.array([d in self.labels_of for d in digests], dtype=bool)
        other = np.array([d in self.labels_of and any(x != label for x in self.labels_of[d])
                          for d, label in zip(digests, labels, strict=True)], dtype=bool)
        flags = {"identical_to_train": same, "identical_other_label": other}
        if regions is not None and self.regions is not None:
            flags["overlapping_train_region"] = overlapping(*regions, *self.regions)
        if coordinates is not None and self.coordinates is not None:
            flags["same_coordinates_as_train"] = np.array([c in self.coordinates
                                                           for c in zip(*coordinates, strict=True)], dtype=bool)
        if self.k:
            flags["sharing_kmer_with_train"] = sharing_kmers(sequences, self.kmers, self.k)
        return flags


def summarise(flags: dict[str, np.ndarray], examples: int) -> dict:
    """Counts and fractions of a split's flags, and how many examples any check flags."""
    out = {"examples": examples}
    for name, values in flags.items():
        out[name] = {"count": int(values.sum()), "fraction": round(float(values.mean()), 4) if examples else 0.0}
    flagged = np.any(np.stack(list(flags.values())), axis=0) if flags else np.zeros(examples, dtype=bool)
    out["any"] = {"count": int(flagged.sum()), "fraction": round(float(flagged.mean()), 4) if examples else 0.0}
    return out


def pretraining_chromosomes(checkpoint: str | Path) -> tuple[list[str] | None, str]:
    """(chromosomes, how they were found) of the corpus a pretrained checkpoint was trained on: a dnabird
    pretraining run writes `run.json` beside its `model/` folder, naming its training shards, whose attributes
    list their chromosomes. (None, why not) when that record is absent or its shards are gone."""
    from dnabird.data.shards import ShardReader

    run = Path(checkpoint).parent / "run.json"
    if not run.is_file():
        return None, "the checkpoint records no pretraining corpus (no pretraining run.json beside it)"
    try:
        shards = json.loads(run.read_text())["pretrain"]["train_shards"]
    except (ValueError, KeyError, TypeError):
        return None, f"{run.name} beside the checkpoint names no pretraining shards"
    if not Path(shards).exists():
        return None, "the pretraining run's training shards are no longer where its run.json names them"
    with ShardReader(shards) as reader:
        chromosomes = sorted({chrom for chroms in reader.chroms for chrom in chroms})
    return chromosomes, "the pretraining run's training shards"


def format_leakage(summary: dict) -> list[str]:
    """Markdown lines of a leakage summary (`data.leakage` of a labelled run's report.json)."""
    lines = [f"Leakage against train (k-mers of {summary['kmer']} bp; warned above "
             f"{100 * summary['warn_fraction']:.1f} %; {summary['train_duplicates']} training examples repeat "
             "another):", "", "| split | examples | " + " | ".join(c.replace("_", " ") for c in CHECKS) + " |",
             "|---" * (len(CHECKS) + 2) + "|"]
    for split in ("validation", "test"):
        counts = summary[split]
        cells = [f"{counts[c]['count']} ({100 * counts[c]['fraction']:.1f} %)" if c in counts else "n/a"
                 for c in CHECKS]
        lines.append(f"| {split} | {counts['examples']} | " + " | ".join(cells) + " |")
    if "dropped" in summary:
        lines.append(f"\n{summary['dropped']} flagged validation and test examples dropped (leakage_dropped.tsv).")
    pretraining = summary.get("pretraining", {})
    if pretraining.get("checked"):
        seen = pretraining["test_chromosomes_pretrained_on"]
        lines.append(f"\nTest chromosomes in the pretraining corpus ({pretraining['source']}): "
                     f"{', '.join(seen) if seen else 'none'}.")
    elif pretraining:
        lines.append(f"\nPretraining corpus not checked: {pretraining['reason']}.")
    return lines + [f"\nWARNING: {w}" for w in summary.get("warnings", [])]
