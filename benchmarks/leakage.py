"""The leakage check's speed (`dnabird.data.leakage`, the `labelled` task's check before training): a training split
of N random sequences of L bp and a test split of N/10 (a tenth of them copies, reverse complements or holding a
shared 32-mer), timed for the whole check (digests, 32-mer sets, the search), beside a plain-Python reference (a set
of canonical 32-mer strings) on the smaller sizes. Prints a table; peak memory is the process's maximum RSS.

    python benchmarks/leakage.py --sequences 10000 100000 --length 1000
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from dnabird.data.leakage import Leakage
from dnabird.genome.reference import reverse_complement


def split(count: int, length: int, rng: np.random.Generator) -> tuple[list[str], list[str]]:
    letters = np.frombuffer(b"ACGT", dtype=np.uint8)
    train = [letters[rng.integers(0, 4, length)].tobytes().decode() for _ in range(count)]
    test = [letters[rng.integers(0, 4, length)].tobytes().decode() for _ in range(count // 10)]
    for i in range(0, len(test), 10):
        source = train[i]
        test[i] = [source, reverse_complement(source), test[i][:100] + source[200:232] + test[i][132:]][i % 3]
    return train, test


def reference(train: list[str], test: list[str], k: int = 32) -> int:
    def canonical(sequence):
        return {min(w, reverse_complement(w)) for i in range(len(sequence) - k + 1) for w in (sequence[i:i + k],)}

    seen = set().union(*(canonical(s) for s in train))
    return sum(bool(canonical(s) & seen) for s in test)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sequences", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--length", type=int, default=1000)
    parser.add_argument("--reference-up-to", type=int, default=2000, help="largest N the Python reference runs on")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| train sequences | bp each | check s | flagged test | Python reference s | ratio | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    for count in args.sequences:
        train, test = split(count, args.length, rng)
        started = time.perf_counter()
        flags = Leakage(train, [0] * len(train), k=32).check(test, [0] * len(test))
        seconds = time.perf_counter() - started
        flagged = int(np.any(np.stack(list(flags.values())), axis=0).sum())
        slow = "—"
        ratio = "—"
        if count <= args.reference_up_to:
            started = time.perf_counter()
            assert reference(train, test) == int(flags["sharing_kmer_with_train"].sum())
            python = time.perf_counter() - started
            slow, ratio = f"{python:.1f}", f"{python / seconds:.0f}x"
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"| {count} | {args.length} | {seconds:.1f} | {flagged} of {len(test)} | {slow} | {ratio} | {peak:.0f} |")


if __name__ == "__main__":
    main()
