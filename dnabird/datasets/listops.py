"""ListOps (Nangia & Bowman 2018) as generated for the Long-Range Arena (Tay et al. 2021).

LRA's algorithm, re-implemented: a node at depth < max_depth is a leaf digit with probability 3/4, else an
operator (MAX, MIN, MED, SM = sum mod 10, uniform) over 2 … max_args children one level deeper; at
max_depth every node is a digit. The root is drawn at depth 1. A tree's length counts its tokens without
parentheses (a digit 1, an operator node 2 + its children: the operator and its closing `]`); trees are kept
when min_length < length < max_length, duplicates dropped, and the first ones fill train, then validation,
then test. LRA defaults: 96,000 / 2,000 / 2,000 trees, max depth 10, max args 10, lengths in (500, 2000).

Trees are printed as LRA prints them, left-nested pairs in parentheses, e.g. "( ( ( [MAX 2 ) 9 ) ] )" for
[MAX 2 9]; the parentheses are not part of the expression (the tokenizer drops them, keeps the brackets).
Files are LRA's TSVs: a `Source<TAB>Target` header, then one tree and its value per line.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

from dnabird.errors import InputFormatError, check_int, reject
from dnabird.io import write_text_atomic

# operator -> its value over the sorted values of its children (MED: the floor of the median)
OPERATIONS = {"[MAX": lambda values: values[-1], "[MIN": lambda values: values[0],
              "[MED": lambda values: int(np.median(values)), "[SM": lambda values: sum(values) % 10}
OPERATORS = tuple(OPERATIONS)
END = "]"
LEAF_PROBABILITY = 0.75
SPLITS = ("train", "validation", "test")
FILE_SPLITS = {"train": "train", "validation": "val", "test": "test"}


def draw_tree(rng: np.random.Generator, depth: int, max_depth: int, max_args: int):
    """(tree, length): a digit (int), or [operator, child, …]."""
    if depth >= max_depth or rng.random() < LEAF_PROBABILITY:
        return int(rng.integers(10)), 1
    drawn = [draw_tree(rng, depth + 1, max_depth, max_args) for _ in range(int(rng.integers(2, max_args + 1)))]
    children, lengths = zip(*drawn, strict=True)
    return [OPERATORS[int(rng.integers(len(OPERATORS)))], *children], 2 + sum(lengths)


def evaluate(tree) -> int:
    """The value of a tree: MAX, MIN, MED (floor of the median), SM (sum mod 10)."""
    if isinstance(tree, int):
        return tree
    return OPERATIONS[tree[0]](sorted(evaluate(child) for child in tree[1:]))


def to_source(tree) -> str:
    """LRA's printed form: (operator, first child), then (that, next child) …, then (that, "]"), in parentheses."""
    if isinstance(tree, int):
        return str(tree)
    text = f"( {tree[0]} {to_source(tree[1])} )"
    for child in tree[2:]:
        text = f"( {text} {to_source(child)} )"
    return f"( {text} {END} )"


def generate(sizes: dict[str, int], *, seed: int = 0, min_length: int = 500, max_length: int = 2000,
             max_depth: int = 10, max_args: int = 10, max_draws: int | None = None) -> dict[str, list[tuple[str, int]]]:
    """Splits name -> [(source, value)] of distinct trees with min_length < length < max_length."""
    for name, value, minimum in (("max_depth", max_depth, 2), ("max_args", max_args, 2), ("max_length", max_length, 3)):
        check_int(name, value, minimum)
    reject(not 0 <= min_length < max_length - 1, "min_length", min_length,
           f"an integer in [0, max_length - 1 = {max_length - 1})")
    unknown = set(sizes) - set(SPLITS)
    reject(bool(unknown), "sizes", sorted(unknown), f"split names among {SPLITS}")
    wanted = sum(sizes.values())
    rng = np.random.default_rng(seed)
    kept: dict[str, int] = {}
    limit = max_draws if max_draws is not None else 2000 * max(wanted, 1)
    for _ in range(limit):
        if len(kept) >= wanted:
            break
        tree, length = draw_tree(rng, 1, max_depth, max_args)
        if min_length < length < max_length:
            kept.setdefault(to_source(tree), evaluate(tree))
    reject(len(kept) < wanted, "length bounds", (min_length, max_length),
           f"bounds that accept trees: {len(kept)} of {wanted} kept after {limit} draws "
           f"(max_depth={max_depth}, max_args={max_args})")
    items = iter(kept.items())  # the first trees fill train, then validation, then test
    return {split: list(itertools.islice(items, sizes.get(split, 0))) for split in SPLITS}


def write(directory: str | Path, splits: dict[str, list[tuple[str, int]]], task: str = "basic") -> dict[str, Path]:
    """`{task}_{train,val,test}.tsv` in `directory` (LRA's names); returns split -> path."""
    paths = {split: Path(directory) / f"{task}_{FILE_SPLITS[split]}.tsv" for split in splits}
    for split, rows in splits.items():
        write_text_atomic(paths[split], "Source\tTarget\n" + "".join(f"{source}\t{value}\n" for source, value in rows))
    return paths


def read(path: str | Path) -> list[tuple[str, int]]:
    """The (source, value) rows of a ListOps TSV (ours or LRA's); errors name the file and line."""
    path = Path(path)
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        raise InputFormatError("ListOps file not found", path=path) from None
    if not lines or lines[0].split("\t") != ["Source", "Target"]:
        raise InputFormatError("expected the header 'Source<TAB>Target'", path=path, line=1)
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2 or fields[1].strip() not in {str(d) for d in range(10)}:
            raise InputFormatError("expected '<expression><TAB><digit 0-9>'", path=path, line=number)
        rows.append((fields[0], int(fields[1])))
    return rows
