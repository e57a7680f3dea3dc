"""A generated long-document summarisation task whose summaries a 512-token encoder cannot write: nothing is
downloaded, the same seed gives the same bytes.

A document is `min_words`–`max_words` words (one token per word with a word tokenizer; [CLS] and [SEP] make
two more) of filler sentences, with entity names sprinkled in as distractors everywhere, and `facts`
key-finding sentences, "finding <ordinal> is <entity> .", all placed past word `HIDDEN_FROM` (so past token
512) in ordinal order. The reference summary names the findings' entities in order, "<entity> … <entity> .":
every word of it but the full stop lies beyond a 512-token encoder's view, and the first sentences (the
lead-k baseline) hold no finding. `solve_summary` reads the summary back from a document's text alone (the
generator's independent check).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from dnabird.datasets.synthetic_text import markov_words, pseudo_words, write_jsonl_splits
from dnabird.errors import InputFormatError, ParameterError, reject

HIDDEN_FROM = 520  # findings start past this word (token index > 512 with [CLS] before the words)
ORDINALS = ("one", "two", "three", "four", "five", "six", "seven", "eight")
CUE, LINK = "finding", "is"
ENTITIES = 200


def entity_names(seed: int) -> list[str]:
    """`ENTITIES` names, distinct from the filler vocabulary (pseudo-words with a trailing "x")."""
    return [word + "x" for word in pseudo_words(ENTITIES, seed + 101)]


def summary_example(rng: np.random.Generator, filler: list[str], entities: list[str], *, min_words: int,
                    max_words: int, facts: int, distractor_rate: float = 0.01, hidden_from: int = HIDDEN_FROM) -> dict:
    """One {"document", "summary"} pair (see the module docstring), its findings past word `hidden_from`."""
    words = int(rng.integers(min_words, max_words + 1))
    fact_words = 4 * facts
    if words - hidden_from < 2 * fact_words:
        raise ParameterError("min_words", min_words, f"room for {facts} findings past word {hidden_from}")
    text = list(rng.choice(filler, size=words))
    for at in np.flatnonzero(rng.random(words) < distractor_rate):
        text[at] = str(rng.choice(entities))
    sentence_ends = np.cumsum(rng.integers(8, 15, size=words))
    for end in sentence_ends[sentence_ends < words]:
        text[end] = "."
    chosen = rng.choice(len(entities), size=facts, replace=False)
    slots = np.sort(rng.choice(np.arange(hidden_from // 5 + 1, (words - 5) // 5), size=facts, replace=False)) * 5
    names = [entities[i] for i in chosen]
    for ordinal, (at, name) in enumerate(zip(slots, names, strict=True)):
        text[at:at + 4] = [CUE, ORDINALS[ordinal], LINK, name]
        if at + 4 < words:
            text[at + 4] = "."
    if text[-1] != ".":
        text[-1] = "."
    return {"document": " ".join(text), "summary": " ".join(names) + " ."}


def solve_summary(document: str, hidden_from: int = HIDDEN_FROM) -> str:
    """The summary of a document from its text alone: its findings' entities in ordinal order."""
    words = document.split()
    found = {}
    for index in range(len(words) - 3):
        if words[index] == CUE and words[index + 2] == LINK and words[index + 1] in ORDINALS:
            if index < hidden_from:
                raise InputFormatError(f"finding at word {index}, before word {hidden_from}")
            found[ORDINALS.index(words[index + 1])] = words[index + 3]
    if sorted(found) != list(range(len(found))) or not found:
        raise InputFormatError(f"findings numbered {sorted(found)}: expected one, two, … in a row")
    return " ".join(found[i] for i in range(len(found))) + " ."


def write_summaries(out_dir: str | os.PathLike, *, sizes: dict[str, int], min_words: int = 1500,
                    max_words: int = 2998, facts: int = 4, seed: int = 0,
                    hidden_from: int = HIDDEN_FROM) -> dict[str, Path]:
    """`<split>.jsonl` of {"document", "summary"} for each split in `sizes`; returns {split: path}. Findings lie
    past word `hidden_from` (0: anywhere, as in the short warm-up documents of a first training stage)."""
    reject(not 1 <= facts <= len(ORDINALS), "facts", facts, f"1 to {len(ORDINALS)}")
    reject(not hidden_from < min_words <= max_words, "(min_words, max_words)", (min_words, max_words),
           f"min_words > {hidden_from} and max_words >= min_words")
    filler = sorted(w for w in set(markov_words(3000, seed)) if w not in ORDINALS + (CUE, LINK))
    entities = entity_names(seed)
    return write_jsonl_splits(out_dir, sizes, (seed, min_words, max_words), lambda rng: summary_example(
        rng, filler, entities, min_words=min_words, max_words=max_words, facts=facts, hidden_from=hidden_from))
