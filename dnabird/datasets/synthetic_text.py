"""Generated text for the NLP track's tests and demos: nothing is downloaded, the same seed gives the same bytes.

- `long_range_example` / `write_long_range`: a classification task whose label needs evidence far apart
  (associative recall). A document of `length` tokens (counting [CLS] and [SEP] around its words; one token
  per word) stores two keys within its first 100 tokens, `secret-a-X` and `secret-b-Z` (X, Z value words,
  each key stated `key_copies` = 8 times), and asks `query-a` or `query-b` within its last 100
  (`query_copies` = 16 times); filler text sprinkled with bare value words (distractors) lies between and
  around them. (Repeating the statements changes no label; it makes the evidence a larger share of what
  [CLS] first reads. The label needs two read-outs together, which key holds the warm value and which key is
  queried, and training from scratch leaves chance the sooner the larger that share: at 256 tokens an ITC
  model with 8 and 16 copies reached validation accuracy 1.0 by step 250, with 4 and 8 mostly not in 300-540.)
  The label is the class of the queried key's value ("warm" for red, amber, coral, orange; "cool" for blue,
  green, violet, teal), balanced. The two stored values always fall in different classes (which key holds the
  warm one is drawn at random), so every document needs the lookup: the last 128 tokens never hold a key, so a
  model that keeps only them is at chance, and a linear bag of words of the whole document is at chance too (it
  sees one warm and one cool stored value, never which key the query names). Each key statement is one token,
  so the label is the exclusive-or of two count features (which key is queried, which key holds the warm
  value): a one-hidden-layer perceptron on word counts solves it (docs/training-precision.md); what the task
  tests is reading both features from far apart and combining them. (Were both values allowed one class,
  stored values alone would label half the documents: models from scratch learnt that 75 % shortcut first and
  stayed in it.) `solve_long_range` reads the label back from the text alone (the generator's independent check).
- `markov_words`: word streams with learnable structure (each pseudo-word has a few likely successors);
  `write_text8` (a–z and space, one line, text8's format), `write_documents` (plain-text documents separated
  by blank lines) and `write_squad` (SQuAD v1.1-format JSON: facts stated in filler text, questions about them).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dnabird.errors import InputFormatError, ParameterError
from dnabird.io import write_text_atomic

WARM, COOL = ("red", "amber", "coral", "orange"), ("blue", "green", "violet", "teal")
VALUES = WARM + COOL
KEYS = ("a", "b")
KEY_CUE, QUERY_CUE = "secret", "query"
LABELS = ("cool", "warm")
EDGE = 100  # the key lies in the first EDGE tokens, the query in the last EDGE
TRUNCATED = 128  # the truncated baseline's view: the last TRUNCATED tokens
SYLLABLES = ("ka", "lo", "mi", "ne", "pu", "ra", "si", "to", "vu", "ze", "bo", "di", "fa", "gu", "he", "jo")


def pseudo_words(count: int, seed: int) -> list[str]:
    """`count` distinct pronounceable words of 2-3 syllables (never a value word or cue)."""
    rng = np.random.default_rng((seed, 17))
    words: list[str] = []
    while len(words) < count:
        word = "".join(rng.choice(SYLLABLES, size=int(rng.integers(2, 4))))
        if word not in VALUES and word not in words:
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


def long_range_example(length: int, rng: np.random.Generator, filler: list[str], *, distractor_rate: float = 0.08,
                       key_copies: int = 8, query_copies: int = 16) -> dict:
    """One document of the long-range task, {"text", "label"}; `length` counts [CLS] and [SEP]."""
    if length < EDGE + TRUNCATED + 8:
        raise ParameterError("length", length, f">= {EDGE + TRUNCATED + 8} tokens (keys and truncated view apart)")
    words = length - 2
    is_value = rng.random(words) < distractor_rate
    text = np.where(is_value, np.asarray(VALUES)[rng.integers(len(VALUES), size=words)],
                    np.asarray(filler)[rng.integers(len(filler), size=words)]).tolist()
    warm_key = str(KEYS[rng.integers(len(KEYS))])  # one stored value is warm, the other cool
    stored = {key: str((WARM if key == warm_key else COOL)[rng.integers(len(WARM))]) for key in KEYS}
    places = rng.choice(EDGE - 1, size=key_copies * len(KEYS), replace=False)  # token index word + 1 < EDGE
    for at, key in zip(places, np.repeat(KEYS, key_copies), strict=True):
        text[at] = f"{KEY_CUE}-{key}-{stored[key]}"
    queried = str(KEYS[rng.integers(len(KEYS))])
    for at in rng.choice(np.arange(words - EDGE + 1, words), size=query_copies, replace=False):
        text[at] = f"{QUERY_CUE}-{queried}"  # token index >= length - EDGE
    return {"text": " ".join(text), "label": LABELS[stored[queried] in WARM]}


def solve_long_range(text: str) -> str:
    """The label of a long-range document from its text alone: find the stored keys (`secret-<key>-<value>`,
    every statement of a key with one value, all in the first EDGE tokens) and the query (`query-<key>`, every
    copy naming one stored key, all in the last EDGE), and classify the queried key's value."""
    words = text.split()
    tokens = len(words) + 2  # [CLS] words [SEP]: token index = word index + 1
    stored, queries = {}, set()
    for index, word in enumerate(words):
        cue, _, rest = word.partition("-")
        if cue == KEY_CUE:
            key, _, value = rest.partition("-")
            if stored.setdefault(key, value) != value or value not in VALUES or index + 1 >= EDGE:
                raise InputFormatError(f"key word {word!r} at word {index} contradicts an earlier statement, "
                                       "is malformed or is out of place")
        elif cue == QUERY_CUE:
            if index + 1 < tokens - EDGE:
                raise InputFormatError(f"query word {word!r} at word {index} out of place")
            queries.add(rest)
    if len(queries) != 1 or not queries <= set(stored):
        raise InputFormatError(f"expected queries of one stored key {sorted(stored)}, found {sorted(queries)}")
    return LABELS[stored[queries.pop()] in WARM]


def write_long_range(out_dir: str | os.PathLike, *, length: int, sizes: dict[str, int], seed: int = 0) -> dict:
    """`<split>.jsonl` for each split in `sizes` (e.g. {"train": 2000, "validation": 200, "test": 500});
    returns {split: path}."""
    filler = pseudo_words(300, seed)
    return write_jsonl_splits(out_dir, sizes, (seed, length), lambda rng: long_range_example(length, rng, filler))


def write_jsonl_splits(out_dir: str | os.PathLike, sizes: dict[str, int], seeds: tuple[int, ...],
                       example: Callable[[np.random.Generator], dict]) -> dict[str, Path]:
    """`<split>.jsonl` of `sizes[split]` examples for each split (in name order, the k-th drawn from the
    generator `(*seeds, k)`); returns {split: path}."""
    paths = {}
    for index, (split, count) in enumerate(sorted(sizes.items())):
        rng = np.random.default_rng((*seeds, index))
        lines = [json.dumps(example(rng)) for _ in range(count)]
        paths[split] = write_text_atomic(Path(out_dir) / f"{split}.jsonl", "".join(line + "\n" for line in lines))
    return paths


def write_text8(path: str | os.PathLike, num_bytes: int, *, seed: int = 0) -> Path:
    """A text8-format file: `num_bytes` bytes of lower-case a–z and single spaces, one line, no newline."""
    return write_text_atomic(path, " ".join(markov_words(num_bytes // 3 + 10, seed))[:num_bytes])


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
    return write_text_atomic(path, "\n\n".join(documents) + "\n")


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
    return write_text_atomic(path, json.dumps({"version": "1.1", "data": articles}))
