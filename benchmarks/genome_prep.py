"""Genome preparation throughput: corpus (one pass) + tokenisation into shards, bp/s and peak memory.

Each genome size runs in its own process (a fresh interpreter), so peak RSS is that cell's alone.
The genome is uniform random DNA in 4 chromosomes (sentencepiece speed barely depends on the
sequence); the tokenizer (vocab 4096) is trained once on a small sample outside the timing.
Target: >= 5 Mbp/s per pass on 2 cores, with memory flat in genome size. For reference the table
also shows sentencepiece alone encoding one part's sentences held in memory.

    python benchmarks/genome_prep.py                 # 10 and 100 Mbp (the table in the report)
    python benchmarks/genome_prep.py --sizes 1 2     # a quick smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

LINE = 60
TARGET_MBP_S = 5.0


def write_random_genome(path: Path, total_bp: int, chromosomes: int = 4, seed: int = 0) -> None:
    """A FASTA of uniform random ACGT, 60 bp per line, written in 1 Mbp chunks."""
    rng = np.random.default_rng(seed)
    letters = np.frombuffer(b"ACGT", dtype=np.uint8)
    with path.open("wb") as out:
        for index in range(chromosomes):
            out.write(f">chr{index + 1}\n".encode())
            remaining = total_bp // chromosomes
            while remaining:
                rows = min(remaining, 1 << 20) // LINE or 1
                chunk = min(remaining, rows * LINE)
                bases = letters[rng.integers(0, 4, size=chunk)]
                full, rest = divmod(chunk, LINE)
                block = np.full((full, LINE + 1), ord("\n"), dtype=np.uint8)
                block[:, :LINE] = bases[: full * LINE].reshape(full, LINE)
                out.write(block.tobytes())
                if rest:
                    out.write(bases[full * LINE:].tobytes() + b"\n")
                remaining -= chunk


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def train_tokenizer(path: Path) -> None:
    """A vocab-4096 tokenizer from 2 Mbp of random DNA (outside the timing)."""
    from dnabird.data.tokenizer import Tokenizer

    rng = np.random.default_rng(1)
    sequence = np.frombuffer(b"ACGT", dtype=np.uint8)[rng.integers(0, 4, size=2_000_000)].tobytes().decode()
    Tokenizer.train((sequence[i: i + 750] for i in range(0, len(sequence), 750)), path,
                    vocab_size=4096, sample_size=5000)


def run_cell(workdir: Path) -> dict:
    """One measurement, in its own process: genome.fa -> corpus (1 pass) -> shards."""
    from dnabird.data.corpus import CorpusConfig, build_corpus, corpus_parts, iter_part_documents
    from dnabird.data.shards import write_shard
    from dnabird.data.tokenizer import Tokenizer

    fasta = workdir / "genome.fa"
    tokenizer = Tokenizer.load(workdir.parent / "dna.model")
    baseline = peak_rss_mb()
    started = time.perf_counter()
    build_corpus(fasta, workdir / "corpus", CorpusConfig(passes=1, held_out=()), progress=False)
    corpus_s = time.perf_counter() - started
    started = time.perf_counter()
    for part in corpus_parts(workdir / "corpus", "train"):
        shard = workdir / "shards" / f"{part.name.split('.')[0]}.h5"
        write_shard(shard, iter_part_documents(part), tokenizer)
    tokenise_s = time.perf_counter() - started
    peak = peak_rss_mb()
    sentences = [s.sequence for d in iter_part_documents(corpus_parts(workdir / "corpus", "train")[0])
                 for s in d.sentences]
    started = time.perf_counter()
    tokenizer.encode(sentences, num_threads=os.cpu_count())
    sentencepiece_mbp_s = sum(map(len, sentences)) / 1e6 / (time.perf_counter() - started)
    return {"corpus_s": corpus_s, "tokenise_s": tokenise_s, "baseline_mb": baseline, "peak_mb": peak,
            "sentencepiece_mbp_s": sentencepiece_mbp_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[10, 100], help="genome sizes in Mbp")
    parser.add_argument("--cell", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cell is not None:
        print(json.dumps(run_cell(args.cell)))
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="genome_prep_") as root:
        train_tokenizer(Path(root) / "dna.model")
        for size in args.sizes:
            workdir = Path(root) / f"{size:g}Mbp"
            workdir.mkdir()
            write_random_genome(workdir / "genome.fa", int(size * 1e6))
            done = subprocess.run([sys.executable, __file__, "--cell", str(workdir)],
                                  check=True, capture_output=True, text=True)
            rows.append({"size_mbp": size, **json.loads(done.stdout.strip().splitlines()[-1])})
    from dnabird.provenance import cpu_description

    print(f"genome prep, one pass, on {cpu_description()['cpu']} (target >= {TARGET_MBP_S} Mbp/s, flat memory)")
    header = ("genome Mbp", "corpus s", "tokenise s", "total s", "Mbp/s", "vs target", "sentencepiece alone Mbp/s",
              "Mbp/s vs sentencepiece", "peak RSS MB", "RSS over start MB", "time / first")
    print(" | ".join(header))
    first = rows[0]["corpus_s"] + rows[0]["tokenise_s"]
    for row in rows:
        total = row["corpus_s"] + row["tokenise_s"]
        speed = row["size_mbp"] / total
        print(f"{row['size_mbp']:>10g} | {row['corpus_s']:8.1f} | {row['tokenise_s']:10.1f} | {total:7.1f} | "
              f"{speed:5.2f} | {speed / TARGET_MBP_S:8.2f}x | {row['sentencepiece_mbp_s']:25.2f} | "
              f"{speed / row['sentencepiece_mbp_s']:21.2f}x | {row['peak_mb']:11.0f} | "
              f"{row['peak_mb'] - row['baseline_mb']:17.0f} | {total / first:11.2f}x "
              f"(size {row['size_mbp'] / rows[0]['size_mbp']:g}x)")


if __name__ == "__main__":
    main()
