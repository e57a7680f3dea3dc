"""Chromatin loader throughput and memory: 8-kb windows tokenized per second from the FASTA and read
per second from the HDF5 token cache, and peak memory while streaming a generated DeepSEA-style
bundle of >= 1 M rows slab by slab.

Target: the GPU pretraining rate (~650K tokens/s per H200) at 8.78 bp/token needs >= 700 windows/s of
8 kb per GPU from the loader (with the HDF5 cache if needed). Memory: flat in the bundle's row count.

Each measurement runs in its own process, so peak RSS is that cell's alone. The genome is uniform
random DNA; the tokenizer (sentencepiece BPE) is trained once on a small sample outside the timing.

    python benchmarks/chromatin_loader.py                       # the README table (1 M-row bundle)
    python benchmarks/chromatin_loader.py --rows 20000 --windows 200   # a quick smoke run
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

TARGET_WINDOWS_S = 700
LINE = 60


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_genome(path: Path, bp: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    letters = np.frombuffer(b"ACGT", dtype=np.uint8)
    seq = letters[rng.integers(0, 4, size=bp)]
    with path.open("wb") as out:
        out.write(b">chr1\n")
        for start in range(0, bp, LINE):
            out.write(seq[start:start + LINE].tobytes() + b"\n")


def setup(work: Path, windows: int, window: int, vocab: int) -> dict:
    """A random genome with `windows` bins and a tokenizer trained on a sample of it."""
    from dnabird.data.tokenizer import Tokenizer

    bp = windows * 400 + window + 2000
    fasta = work / "genome.fa"
    write_genome(fasta, bp)
    text = "".join(fasta.read_text().split("\n")[1:])
    sample = [text[i:i + 1000] for i in range(0, min(len(text), 3_000_000), 1000)]
    tokenizer = Tokenizer.train(sample, work / "dna.model", vocab_size=vocab, max_piece_length=16,
                                sample_size=len(sample), seed=0)
    centres = window // 2 + 1000 + 400 * np.arange(windows)
    bins = work / "bins.bed"
    bins.write_text("".join(f"chr1\t{c - 100}\t{c + 100}\ttest\n" for c in centres))
    return {"fasta": str(fasta), "tokenizer": str(tokenizer.path), "bins": str(bins), "bp_per_token":
            tokenizer.bp_per_token(sample[:200])}


def cell_fasta(args) -> dict:
    """Windows read from the FASTA and tokenized (both strands, as the windows route does)."""
    from collections import Counter

    from dnabird.data.tokenizer import Tokenizer
    from dnabird.genome.reference import Genome
    from dnabird.tasks.chromatin import Bin, encode_rows, reverse_complement_rows, window_sequences

    tokenizer = Tokenizer.load(args.tokenizer)
    genome = Genome(args.fasta, soft_mask="upper")
    bins = [Bin("chr1", int(s), int(e), "test", i)
            for i, (s, e) in enumerate(line.split("\t")[1:3] for line in Path(args.bins).read_text().splitlines())]
    started = time.perf_counter()
    tokens = 0
    for first in range(0, len(bins), 256):
        _, sequences = window_sequences(genome, bins[first:first + 256], args.window, 1.0, Counter())
        forward = np.stack(sequences)
        ids, _ = encode_rows(forward, tokenizer, 64, None)
        rc, _ = encode_rows(reverse_complement_rows(forward), tokenizer, 64, None)
        tokens += int((ids != tokenizer.pad_id).sum() + (rc != tokenizer.pad_id).sum())
    seconds = time.perf_counter() - started
    return {"windows_s": len(bins) * 2 / seconds, "tokens_s": tokens / seconds, "peak_mib": peak_rss_mib()}


def cell_cache(args) -> dict:
    """The same windows' token ids read back from an HDF5 cache (gzip, as the task writes it)."""
    import h5py

    rng = np.random.default_rng(0)
    rows, length = args.windows * 2, int(args.window / args.bp_per_token) + 64
    path = Path(args.work) / "cache.h5"
    with h5py.File(path, "w") as handle:
        handle.create_dataset("ids", data=rng.integers(5, 4096, size=(rows, length), dtype=np.int32),
                              compression="gzip", chunks=(min(rows, 64), length))
    started = time.perf_counter()
    with h5py.File(path, "r") as handle:
        ids = handle["ids"]
        for first in range(0, rows, 256):
            ids[first:first + 256]
    seconds = time.perf_counter() - started
    return {"windows_s": rows / seconds, "tokens_s": rows * length / seconds, "peak_mib": peak_rss_mib()}


def write_bundle(path: Path, rows: int, length: int) -> None:
    """A v7.3-layout train split of random one-hot rows and 919 sparse labels (lzf chunks of 256 rows)."""
    import h5py

    rng = np.random.default_rng(0)
    with h5py.File(path, "w") as handle:
        x = handle.create_dataset("trainxdata", shape=(length, 4, rows), dtype=np.uint8,
                                  chunks=(length, 4, 256), compression="lzf")
        y = handle.create_dataset("traindata", shape=(919, rows), dtype=np.uint8, chunks=(919, 256),
                                  compression="lzf")
        eye = np.eye(4, dtype=np.uint8)
        for first in range(0, rows, 8192):
            n = min(8192, rows - first)
            x[:, :, first:first + n] = eye[rng.integers(0, 4, size=(n, length))].transpose(1, 2, 0)
            y[:, first:first + n] = (rng.random((919, n)) < 0.02).astype(np.uint8)


def cell_stream(args) -> dict:
    """The generated bundle streamed once in slab order (read + one-hot decode), in a fresh process."""
    from dnabird.tasks.deepsea import BundleSplit, decode_onehot, slab_order

    path = Path(args.work) / "train.mat"
    baseline = peak_rss_mib()
    started = time.perf_counter()
    split = BundleSplit(path)
    order = slab_order(split.rows, slab=args.slab, buffer_slabs=args.buffer_slabs, seed=0, epoch=0)
    buffer_rows = args.slab * args.buffer_slabs
    seen = 0
    for first in range(0, split.rows, buffer_rows):
        rows = order[first:first + buffer_rows]
        for slab in np.unique(rows // args.slab):
            start = int(slab) * args.slab
            x, _ = split.read(start, min(split.rows, start + args.slab))
            seen += len(decode_onehot(x))
    seconds = time.perf_counter() - started
    return {"rows": seen, "rows_s": seen / seconds, "peak_mib": peak_rss_mib(), "before_mib": baseline,
            "file_mib": path.stat().st_size / 2 ** 20}


def run_cell(kind: str, args, extra: dict) -> dict:
    command = [sys.executable, __file__, "--cell", kind, "--work", str(args.work), "--window", str(args.window),
               "--windows", str(args.windows), "--rows", str(args.rows), "--length", str(args.length),
               "--slab", str(args.slab), "--buffer-slabs", str(args.buffer_slabs)]
    for key, value in extra.items():
        command += [f"--{key.replace('_', '-')}", str(value)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cell", choices=("fasta", "cache", "stream"))
    parser.add_argument("--work", type=Path)
    parser.add_argument("--window", type=int, default=8000)
    parser.add_argument("--windows", type=int, default=1000, help="bins tokenized (each on both strands)")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the generated bundle")
    parser.add_argument("--length", type=int, default=1000, help="bp per bundle row")
    parser.add_argument("--slab", type=int, default=2048)
    parser.add_argument("--buffer-slabs", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=4096)
    parser.add_argument("--fasta")
    parser.add_argument("--tokenizer")
    parser.add_argument("--bins")
    parser.add_argument("--bp-per-token", type=float, default=8.78)
    args = parser.parse_args()
    if args.cell:
        cell = {"fasta": cell_fasta, "cache": cell_cache, "stream": cell_stream}[args.cell]
        print(json.dumps(cell(args)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        args.work = Path(tmp)
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        made = setup(args.work, args.windows, args.window, args.vocab)
        fasta = run_cell("fasta", args, {"fasta": made["fasta"], "tokenizer": made["tokenizer"], "bins": made["bins"]})
        cache = run_cell("cache", args, {"bp_per_token": made["bp_per_token"]})
        write_bundle(args.work / "train.mat", args.rows, args.length)
        stream = run_cell("stream", args, {})
    print(f"{args.window}-bp windows, tokenizer vocab {args.vocab} ({made['bp_per_token']:.2f} bp/token), "
          f"{os.cpu_count()} CPUs, target >= {TARGET_WINDOWS_S} windows/s")
    print("| route | windows/s | tokens/s | peak RSS |")
    print("|---|---|---|---|")
    for name, cell in (("FASTA + tokenize (both strands)", fasta), ("HDF5 token cache", cache)):
        verdict = "pass" if cell["windows_s"] >= TARGET_WINDOWS_S else "below"
        print(f"| {name} | {cell['windows_s']:.0f} ({verdict}) | {cell['tokens_s'] / 1e3:.0f}K | "
              f"{cell['peak_mib']:.0f} MiB |")
    print(f"\nstreaming a generated v7.3 bundle, {stream['rows']:,} rows x {args.length} bp "
          f"({stream['file_mib']:.0f} MiB on disk, lzf; {stream['rows'] * args.length * 4 / 2 ** 30:.1f} GiB "
          f"as one-hot): {stream['rows_s']:.0f} rows/s, peak RSS {stream['peak_mib']:.0f} MiB "
          f"({stream['before_mib']:.0f} MiB before reading), slabs of {args.slab} x {args.buffer_slabs}")


if __name__ == "__main__":
    main()
