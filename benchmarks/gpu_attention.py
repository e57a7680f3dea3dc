"""GPU benchmark of the attention backends: parity with the dense reference, then bf16 speed.

1. Parity (fp32, B 2, 4 heads, L 1000 with padding): each backend's output and q/k/v gradients
   against the dense backend (flex forward only where its backward cannot run).
2. Speed (bf16, B 1, 12 heads, head dim 64, BigBird ITC block 64 / 3 window / 2 global / 3 random):
   forward and forward+backward time of sdpa / xformers / flex against dense FlashAttention SDPA
   (full attention, no mask), with TFLOP/s that count only computed blocks (forward+backward =
   3.5 × forward, the FlashAttention convention) and time ratios dense / backend.

Without a CUDA device it says so and exits 0; `--smoke` then runs the same code on CPU at tiny
sizes (fp32, no FlashAttention) to show the script works.

    python benchmarks/gpu_attention.py                    # on a CUDA machine: the full table
    python benchmarks/gpu_attention.py --smoke            # anywhere: a tiny CPU run
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from dnabird.attention import BigBirdITC, attention
from dnabird.errors import BackendUnavailableError

BACKENDS = ("sdpa", "xformers", "flex")
LENGTHS = (1024, 2048, 4096, 8192, 16384)
HEADS, HEAD_DIM, BLOCK, SEED = 12, 64, 64, 0
GOALS = {4096: 2.0, 16384: 4.0}  # f+b speed-up of the chosen backend over dense FlashAttention


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_seconds(fn, device: torch.device, reps: int) -> float:
    """Median wall time of `fn()` after one warm-up call (which also compiles flex)."""
    fn()
    times = []
    for _ in range(reps):
        synchronize(device)
        start = time.perf_counter()
        fn()
        synchronize(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def forward_backward(call, q, k, v, grad):
    def step():
        for t in (q, k, v):
            t.grad = None
        call(q, k, v).backward(grad)

    return step


def forward_only(call, q, k, v):
    def step():
        with torch.no_grad():
            call(q, k, v)

    return step


def parity(device: torch.device, length: int) -> None:
    """Max |difference| to the dense backend of each backend's output and q/k/v gradients (fp32)."""
    g = torch.Generator(device=device).manual_seed(SEED)
    q, k, v = (torch.randn(2, 4, length, HEAD_DIM, device=device, generator=g) for _ in range(3))
    kpm = torch.ones(2, length, dtype=torch.bool, device=device)
    kpm[1, length * 2 // 3:] = False
    pattern = BigBirdITC(4, block_size=BLOCK)
    weights = torch.randn(2, 4, length, HEAD_DIM, device=device, generator=g)

    def run(backend: str, grads: bool):
        leaves = [t.clone().requires_grad_(grads) for t in (q, k, v)]
        with torch.set_grad_enabled(grads):
            out = attention(*leaves, pattern, key_padding_mask=kpm, seed=SEED, backend=backend)
        if not grads:
            return out, []
        (out * weights).sum().backward()
        return out.detach(), [t.grad for t in leaves]

    want_out, want_grads = run("dense", True)
    print(f"parity vs dense (fp32, B 2, H 4, L {length}, padding): max |diff| of output / dq, dk, dv")
    for backend in BACKENDS:
        try:
            try:
                out, grads = run(backend, True)
            except BackendUnavailableError as err:
                out, grads = run(backend, False)  # forward-only backends (flex on CPU)
                print(f"  {backend:9} backward refused: {'; '.join(err.reasons)}")
        except BackendUnavailableError as err:
            print(f"  {backend:9} unavailable: {'; '.join(err.reasons)}")
            continue
        diffs = [(out - want_out).abs().max()]
        if grads:
            diffs += [(a - b).abs().max() for a, b in zip(grads, want_grads, strict=True)]
        print(f"  {backend:9} " + " / ".join(f"{float(d):.1e}" for d in diffs))


def computed_flop(length: int, pattern: BigBirdITC) -> float:
    """Forward FLOPs of QKᵀ and PV over the blocks the layout computes, summed over heads."""
    blocks = int(pattern.layout(length // pattern.block_size, SEED).block_mask().sum())
    return 4 * pattern.block_size**2 * blocks * HEAD_DIM


def speed(device: torch.device, dtype: torch.dtype, lengths: list[int], reps: int) -> dict:
    """Rows of (length, name, fwd s, f+b s, TFLOP/s fwd, TFLOP/s f+b) for each backend and dense."""
    pattern = BigBirdITC(HEADS, block_size=BLOCK)
    dense_kernel = [torch.nn.attention.SDPBackend.FLASH_ATTENTION] if device.type == "cuda" else None
    results: dict = {}
    for length in lengths:
        g = torch.Generator(device=device).manual_seed(SEED)
        q, k, v, grad = (torch.randn(1, HEADS, length, HEAD_DIM, device=device, dtype=dtype, generator=g)
                         for _ in range(4))
        q, k, v = (t.requires_grad_() for t in (q, k, v))

        def dense(q, k, v):
            if dense_kernel is None:
                return F.scaled_dot_product_attention(q, k, v)
            with torch.nn.attention.sdpa_kernel(dense_kernel):
                return F.scaled_dot_product_attention(q, k, v)

        candidates = {name: (lambda q, k, v, name=name: attention(q, k, v, pattern, seed=SEED, backend=name))
                      for name in BACKENDS}
        candidates["dense-flash"] = dense
        for name, call in candidates.items():
            flop = 4.0 * length**2 * HEAD_DIM * HEADS if name == "dense-flash" else computed_flop(length, pattern)
            row = {}
            for mode, step in (("fwd", forward_only(call, q, k, v)), ("f+b", forward_backward(call, q, k, v, grad))):
                try:
                    seconds = median_seconds(step, device, reps)
                    row[mode] = (seconds, (3.5 if mode == "f+b" else 1.0) * flop / seconds / 1e12)
                except BackendUnavailableError:
                    row[mode] = "n/a (refused, see parity)"
                except torch.OutOfMemoryError:
                    row[mode] = "OOM"
                    torch.cuda.empty_cache()
            results[length, name] = row
            cells = [f"{row[m][0] * 1e3:8.2f} ms {row[m][1]:8.3f} TFLOP/s" if isinstance(row[m], tuple)
                     else row[m] for m in ("fwd", "f+b")]
            print(f"  L {length:5} {name:11} fwd {cells[0]:30} f+b {cells[1]}", flush=True)
    return results


def summarize(results: dict, lengths: list[int]) -> None:
    """Speed-ups over dense FlashAttention (f+b time ratio) and the fastest backend per length."""
    print("\nf+b speed-up over dense FlashAttention (dense time / backend time)")
    print("     L  " + "  ".join(f"{name:>9}" for name in BACKENDS) + "  fastest")
    for length in lengths:
        dense = results[length, "dense-flash"].get("f+b")
        ratios = {}
        for name in BACKENDS:
            mine = results[length, name].get("f+b")
            if isinstance(mine, tuple) and isinstance(dense, tuple):
                ratios[name] = dense[0] / mine[0]
        cells = [f"{ratios[name]:8.2f}x" if name in ratios else f"{'n/a':>9}" for name in BACKENDS]
        best = max(ratios, key=ratios.get) if ratios else "n/a"
        goal = f"  (goal ≥ {GOALS[length]}x)" if length in GOALS else ""
        print(f"{length:6}  " + "  ".join(cells) + f"  {best}{goal}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--smoke", action="store_true", help="without CUDA: a tiny fp32 run on CPU")
    args = parser.parse_args(argv)
    if torch.cuda.is_available():
        device, dtype, parity_length = torch.device("cuda"), torch.bfloat16, 1000
        print(f"{torch.cuda.get_device_name(device)}, torch {torch.__version__}")
    elif args.smoke:
        device, dtype, parity_length = torch.device("cpu"), torch.float32, 1000
        args.lengths, args.reps = [512], 1
        torch.set_num_threads(2)
        from dnabird.provenance import cpu_description

        print(f"no CUDA device: smoke run on CPU (fp32, L 512) on {cpu_description()['cpu']}; "
              "the figures say nothing about GPUs")
    else:
        print("no CUDA device is present: nothing to measure (use --smoke for a tiny CPU run)")
        return 0
    parity(device, parity_length)
    print(f"\nspeed ({str(dtype).removeprefix('torch.')}, B 1, H {HEADS}, D {HEAD_DIM}, ITC block {BLOCK}; "
          "TFLOP/s count computed blocks only)")
    results = speed(device, dtype, args.lengths, args.reps)
    summarize(results, args.lengths)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
