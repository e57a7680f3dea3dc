"""CPU benchmark of linear attention (Performer FAVOR+, ReLU linear) with and without SPE against full softmax
and BigBird ITC, all through `dnabird.attention.attention`.

Fixed sizes (every cell): batch B (default 1; `--batch`), H = 8 heads, D = 64 q/k/v size per head, fp32,
forward only under `torch.no_grad()`. SPE: R = 64 realizations (so q̂, k̂ have 64 channels, like q, k),
sineSPE K = 10 sines, convSPE P = 128 taps, both gated, noise drawn every call. Performer: 256 orthogonal
random features drawn every call. BigBird ITC: block 64, window 3, 3 random blocks (default backend).
Full softmax: `scaled_dot_product_attention` without a mask (the core's Full pattern on the same backend).

Every cell (candidate x length) runs in its own process so that its peak memory (peak RSS minus the RSS once
the inputs exist) is its own. The time is the median over `--reps` calls after one warm-up call, measured by
the process's CPU time (`--clock cpu`, the default: other processes' load on a shared machine inflates it far
less than the wall clock) with `--threads` threads.

SPE overhead = (linear attention with SPE) / (the same kernel without), same H, D, R.

    python benchmarks/linear_attention.py                      # the table, 1K-16K (B 1)
    python benchmarks/linear_attention.py --batch 8 --lengths 1024 4096 --candidates performer performer+sine
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import torch

HEADS, HEAD_DIM, REALIZATIONS, SINES, TAPS, FEATURES, SEED = 8, 64, 64, 10, 128, 256, 0
LENGTHS = (1024, 2048, 4096, 8192, 16384)
CANDIDATES = ("full", "bigbird_itc", "performer", "performer+sine", "performer+conv", "relu", "relu+sine",
              "relu+conv")


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def make_call(candidate: str):
    from dnabird.attention import BigBirdITC, Full, Performer, ReluLinear, attention
    from dnabird.attention.spe import ConvSPE, SineSPE

    kernel_name, _, spe_name = candidate.partition("+")
    pattern = {"full": Full(HEADS), "bigbird_itc": BigBirdITC(HEADS, block_size=64, window_blocks=3,
                                                              num_random_blocks=3),
               "performer": Performer(HEADS, num_features=FEATURES), "relu": ReluLinear(HEADS)}[kernel_name]
    spe = None
    if spe_name == "sine":
        spe = SineSPE(HEADS, HEAD_DIM, num_sines=SINES, realizations=REALIZATIONS, gated=True)
    elif spe_name == "conv":
        spe = ConvSPE(HEADS, HEAD_DIM, kernel_size=TAPS, realizations=REALIZATIONS, gated=True)
    if spe is not None:
        spe.reset_parameters(torch.Generator().manual_seed(SEED))
    counter = iter(range(10**9))

    def call(q, k, v):
        seed = next(counter)  # fresh features and noise every call, as in training
        positional = None if spe is None else spe.bind(seed)
        return attention(q, k, v, pattern, seed=seed, positional=positional)

    return call


def cell(candidate: str, length: int, batch: int, reps: int, clock: str) -> dict:
    generator = torch.Generator().manual_seed(SEED)
    q, k, v = (torch.randn(batch, HEADS, length, HEAD_DIM, generator=generator) for _ in range(3))
    call = make_call(candidate)
    base = rss_mib()
    timer = time.process_time if clock == "cpu" else time.perf_counter
    times = []
    with torch.no_grad():
        out = call(q, k, v)  # warm-up
        assert out.shape == v.shape and torch.isfinite(out).all()
        del out
        for _ in range(reps):
            start = timer()
            out = call(q, k, v)
            times.append(timer() - start)
            del out
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"candidate": candidate, "length": length, "seconds": statistics.median(times),
            "peak_mib": max(0.0, peak - base)}


def run_cell(candidate, length, args) -> dict:
    command = [sys.executable, __file__, "--cell", candidate, str(length), "--batch", str(args.batch),
               "--reps", str(args.reps), "--clock", args.clock, "--threads", str(args.threads)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.cell_timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"candidate": candidate, "length": length, "error": f"over {args.cell_timeout} s"}
    if done.returncode:
        return {"candidate": candidate, "length": length, "error": done.stderr.strip().splitlines()[-1][:120]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(results: list[dict], candidates, lengths) -> str:
    by = {(r["candidate"], r["length"]): r for r in results}

    def value(candidate, length, key):
        r = by.get((candidate, length))
        return None if r is None or "error" in r else r[key]

    def fmt(x, spec):
        return "—" if x is None else format(x, spec)

    lines = ["| length | " + " | ".join(f"{c} (s / MiB)" for c in candidates) + " |",
             "|---|" + "---|" * len(candidates)]
    for length in lengths:
        cells = [f"{fmt(value(c, length, 'seconds'), '.3f')} / {fmt(value(c, length, 'peak_mib'), '.0f')}"
                 for c in candidates]
        lines.append(f"| {length} | " + " | ".join(cells) + " |")
    ratios = [(f"{c} ÷ full", c, "full") for c in candidates if c != "full"]
    ratios += [(f"SPE overhead {c}", c, c.partition("+")[0]) for c in candidates if "+" in c]
    lines += ["", "| ratio (time) | " + " | ".join(str(n) for n in lengths) + " |",
              "|---|" + "---|" * len(lengths)]
    for name, top, bottom in ratios:
        row = []
        for length in lengths:
            a, b = value(top, length, "seconds"), value(bottom, length, "seconds")
            row.append("—" if a is None or b is None else f"{a / b:.2f}×")
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    parser.add_argument("--candidates", nargs="+", default=list(CANDIDATES), choices=CANDIDATES)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--cell-timeout", type=int, default=600)
    parser.add_argument("--json", help="also write the cells to this file")
    parser.add_argument("--cell", nargs=2, metavar=("CANDIDATE", "LENGTH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.cell:
        print(json.dumps(cell(args.cell[0], int(args.cell[1]), args.batch, args.reps, args.clock)))
        return
    results = []
    for length in args.lengths:
        for candidate in args.candidates:
            results.append(run_cell(candidate, length, args))
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    print(f"B {args.batch}, H {HEADS}, D {HEAD_DIM}, R {REALIZATIONS}, K {SINES}, P {TAPS}, Performer features "
          f"{FEATURES}; fp32 forward, {args.threads} thread(s), {args.clock} clock, median of {args.reps}\n")
    print(table(results, args.candidates, args.lengths))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
