"""Generated text for the NLP track's tests and demos: nothing is downloaded, the same seed gives the same bytes.

- `long_range_example` / `write_long_range`: a classification task whose label needs evidence far apart. A
  document of `length` tokens (counting [CLS] and [SEP] around its words) states `secret X` within its first
  100 tokens and asks `query Y` within its last 100; between and around them lies filler text sprinkled with
  the same value words (distractors). The label is "match" when X = Y, else "differ" (balanced). The last 128
  tokens never hold the secret, so a model that keeps only them is at chance. `solve_long_range` reads the
  label back from the text alone (the independent check of the generator).
- `markov_words`: word streams with learnable structure (each pseudo-word has a few likely successors);
  `write_text8` (a–z and space, one line, text8's format), `write_documents` (plain-text documents separated
  by blank lines) and `write_squad` (SQuAD v1.1-format JSON: facts stated in filler text, questions about them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from dnabird.errors import InputFormatError, ParameterError
from dnabird.io import write_text_atomic

VALUES = ("red", "green", "blue", "amber", "violet", "coral", "ivory", "olive")
KEY_CUE, QUERY_CUE = "secret", "query"
LABELS = ("differ", "match")
EDGE = 100  # the key lies in the first EDGE tokens, the query in the last EDGE
TRUNCATED = 128  # the truncated baseline's view: the last TRUNCATED tokens
SYLLABLES = ("ka", "lo", "mi", "ne", "pu", "ra", "si", "to", "vu", "ze", "bo", "di", "fa", "gu", "he", "jo")


def pseudo_words(count: int, seed: int) -> list[str]:
    """`count` distinct pronounceable words of 2-3 syllables (never a value word or cue)."""
    rng = np.random.default_rng((seed, 17))
    words: list[str] = []
    reserved = {*VALUES, KEY_CUE, QUERY_CUE}
    while len(words) < count:
        word = "".join(rng.choice(SYLLABLES, size=int(rng.integers(2, 4))))
        if word not in reserved and word not in words:
            words.append(word)
    return words


def markov_words(count: int, seed: int, *, vocabulary: int = 200, successors: int = 4) -> list[str]:
    """`count` words of a seeded chain over `vocabulary` pseudo-words, each followed by one of its
    `successors` favourite words 90 % of the time (a structure MLM and character models can learn)."""
    rng = np.random.default_rng((seed, 23))
    words = pseudo_words(vocabulary, seed)
    favourite = rng.integers(0, vocabulary, size=(vocabulary, successors))
    current = int(rng.integers(vocabulary))
    out = []
    for _ in range(count):
        out.append(words[current])
        current = int(favourite[current, rng.integers(successors)]) if rng.random() < 0.9 \
            else int(rng.integers(vocabulary))
    return out


def long_range_example(length: int, rng: np.random.Generator, filler: list[str],
                       distractor_rate: float = 0.08) -> dict:
    """One document of the long-range task, {"text", "label"}; `length` counts [CLS] and [SEP]."""
    if length < EDGE + TRUNCATED + 8:
        raise ParameterError("length", length, f">= {EDGE + TRUNCATED + 8} tokens (key and truncated view apart)")
    words = length - 2
    label = int(rng.integers(2))
    key = str(rng.choice(VALUES))
    query = key if label else str(rng.choice([v for v in VALUES if v != key]))
    text = [str(rng.choice(VALUES)) if rng.random() < distractor_rate else str(rng.choice(filler))
            for _ in range(words)]
    key_at = int(rng.integers(0, EDGE - 3))  # token index key_at + 1 ([CLS] first): value within EDGE tokens
    query_at = int(rng.integers(words - EDGE + 1, words - 2))
    text[key_at:key_at + 2] = [KEY_CUE, key]
    text[query_at:query_at + 2] = [QUERY_CUE, query]
    return {"text": " ".join(text), "label": LABELS[label]}


def solve_long_range(text: str) -> str:
    """The label of a long-range document from its text alone: find `secret X` and `query Y` (each exactly
    once, where the task puts them) and compare."""
    words = text.split()
    found = {}
    for cue in (KEY_CUE, QUERY_CUE):
        places = [i for i, w in enumerate(words) if w == cue]
        if len(places) != 1 or places[0] + 1 >= len(words) or words[places[0] + 1] not in VALUES:
            raise InputFormatError(f"expected one {cue!r} followed by a value, found it at {places}")
        found[cue] = places[0]
    # token index = word index + 1 ([CLS] first): both key words within the first EDGE tokens, both query
    # words within the last EDGE of the len(words) + 2 tokens
    if found[KEY_CUE] > EDGE - 3 or found[QUERY_CUE] < len(words) - EDGE + 1:
        raise InputFormatError(f"key at word {found[KEY_CUE]} or query at word {found[QUERY_CUE]} out of place")
    return LABELS[int(words[found[KEY_CUE] + 1] == words[found[QUERY_CUE] + 1])]


def write_long_range(out_dir: str | os.PathLike, *, length: int, sizes: dict[str, int], seed: int = 0) -> dict:
    """`<split>.jsonl` for each split in `sizes` (e.g. {"train": 2000, "validation": 200, "test": 500});
    returns {split: path}."""
    out_dir = Path(out_dir)
    filler = pseudo_words(300, seed)
    paths = {}
    for index, (split, count) in enumerate(sorted(sizes.items())):
        rng = np.random.default_rng((seed, length, index))
        lines = [json.dumps(long_range_example(length, rng, filler)) for _ in range(count)]
        paths[split] = out_dir / f"{split}.jsonl"
        write_text_atomic(paths[split], "".join(line + "\n" for line in lines))
    return paths


def write_text8(path: str | os.PathLike, num_bytes: int, *, seed: int = 0) -> Path:
    """A text8-format file: `num_bytes` bytes of lower-case a–z and single spaces, one line, no newline."""
    words = markov_words(num_bytes // 3 + 10, seed)
    text = " ".join(words)[:num_bytes]
    write_text_atomic(path, text)
    return Path(path)


def write_documents(path: str | os.PathLike, num_documents: int, *, seed: int = 0, words: int = 120) -> Path:
    """Plain-text documents of `words` words in sentences of 6-12 words, separated by blank lines."""
    rng = np.random.default_rng((seed, 29))
    stream = iter(markov_words(num_documents * words, seed))
    documents = []
    for _ in range(num_documents):
        sentences, left = [], words
        while left > 0:
            size = min(left, int(rng.integers(6, 13)))
            sentence = [next(stream) for _ in range(size)]
            sentences.append(" ".join(sentence).capitalize() + ".")
            left -= size
        documents.append(" ".join(sentences))
    write_text_atomic(path, "\n\n".join(documents) + "\n")
    return Path(path)


def write_squad(path: str | os.PathLike, num_paragraphs: int, *, seed: int = 0, facts: int = 4,
                filler_words: int = 40) -> Path:
    """A SQuAD v1.1-format file: paragraphs of filler text stating `facts` facts "the home of <name> is
    <place> ." each, and one question per fact ("where is the home of <name> ?") answered by its place."""
    rng = np.random.default_rng((seed, 31))
    names, places = pseudo_words(120, seed + 1)[:60], pseudo_words(120, seed + 1)[60:]
    filler = iter(markov_words(num_paragraphs * (facts + 1) * filler_words, seed))
    articles = []
    for p in range(num_paragraphs):
        chosen = rng.choice(len(names), size=facts, replace=False)
        context, qas = "", []
        for f, n in enumerate(chosen):
            context += " ".join(next(filler) for _ in range(filler_words)) + " . "
            place = places[int(rng.integers(len(places)))]
            context += f"the home of {names[n]} is "
            qas.append({"id": f"q{p}-{f}", "question": f"where is the home of {names[n]} ?",
                        "answers": [{"text": place, "answer_start": len(context)}]})
            context += f"{place} . "
        context += " ".join(next(filler) for _ in range(filler_words))
        articles.append({"title": f"article {p}", "paragraphs": [{"context": context, "qas": qas}]})
    write_text_atomic(path, json.dumps({"version": "1.1", "data": articles}))
    return Path(path)
