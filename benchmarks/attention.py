"""CPU benchmark of the attention core against dense SDPA and Hugging Face's block-sparse attention.

B 1, 12 heads, head dim 64, fp32, 2 threads, BigBird ITC (block 64, window 3, 2 global, 3 random
blocks). Every cell (candidate x length x mode) runs in its own process, so its peak memory (the
increase of peak RSS over the process's RSS once the inputs exist) is its own; a cell that does not
fit under `--mem-cap-gib` prints OOM. Candidates on identical q/k/v (same seed):

  dnabird      attention(q, k, v, BigBirdITC(12), backend="sdpa")  (blockify + gather)
  gemm-bwd     the same, with a backward that recomputes the probabilities from the flash forward's
               log-sum-exp and forms the gradients with batched GEMMs over whole chunks
  math         the same, with CPU SDPA forced to its math kernels (no flash)
  flex         the same call with backend="flex" (compiled FlexAttention; forward only on CPU)
  dense-mask   SDPA with the same ITC mask as an additive float mask (built once, outside the timing)
  full         SDPA without a mask (full attention)
  hf-5         transformers' BigBirdBlockSparseAttention.bigbird_block_sparse_attention, this interpreter
  hf-4.57      the same under `--hf457-python` (an interpreter with transformers 4.57.6); n/a without it

gemm-bwd and math are alternatives for the CPU backward; their f+b cells state their largest gradient
difference from the dense masked reference (at up to 2048 tokens). Every table names the CPU, its
widest vector ISA and the one torch's kernels use: cap the latter with
`ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2`. On a busy machine,
`--threads 1 --clock cpu` times each call by the process's CPU time instead of the wall clock
(other processes' load then inflates it far less).

    python benchmarks/attention.py --hf457-python PY    # the full table (about 20 minutes on 2 cores)
    python benchmarks/attention.py --lengths 1024 2048 --reps 1 --modes fwd   # a smoke run
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import torch

BATCH, HEADS, HEAD_DIM, BLOCK, RANDOM_BLOCKS, SEED = 1, 12, 64, 64, 3, 0
LENGTHS = (1024, 2048, 4096, 8192, 16384)
CANDIDATES = ("dnabird", "gemm-bwd", "math", "flex", "dense-mask", "full", "hf-5", "hf-4.57")
BACKWARD_VARIANTS = ("gemm-bwd", "math")
MODES = ("fwd", "f+b")
FORWARD_ONLY = {"flex"}  # FlexAttention's backward does not run on CPU in torch 2.13
BACKWARD_ONLY = {"gemm-bwd"}  # its forward is dnabird's
TARGETS_AT_4096 = {"vs faster HF": 2.0, "vs dense-mask": 2.5}
MEMORY_RATIO_TARGET = 4.5


# ----------------------------------------------------------------------------- one cell (child process)

def make_inputs(length: int, requires_grad: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, k, v of shape [B, H, L, D], identical in every process for the same length."""
    generator = torch.Generator().manual_seed(SEED)
    shape = (BATCH, HEADS, length, HEAD_DIM)
    return tuple(torch.randn(shape, generator=generator).requires_grad_(requires_grad) for _ in range(3))


def dnabird_call(backend: str, length: int):
    from dnabird.attention import BigBirdITC, attention

    pattern = BigBirdITC(num_heads=HEADS, block_size=BLOCK, num_random_blocks=RANDOM_BLOCKS)
    return lambda q, k, v: attention(q, k, v, pattern, seed=SEED, backend=backend)


class RecomputedBackward(torch.autograd.Function):
    """softmax(q kᵀ · scale) v by torch's CPU flash forward; the backward recomputes P = exp(q kᵀ · scale − lse)
    and takes dV = Pᵀ dO, dS = P ⊙ (dO Vᵀ − rowsum(dO ⊙ O)), dQ = dS K · scale, dK = dSᵀ Q · scale."""

    @staticmethod
    def forward(ctx, q, k, v, mask, scale):
        bias = None if mask is None else torch.zeros(mask.shape, dtype=q.dtype).masked_fill_(~mask, float("-inf"))
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=bias, scale=scale)
        ctx.save_for_backward(q, k, v, out, lse, mask)
        ctx.scale = scale
        return out

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, out, lse, mask = ctx.saved_tensors
        probs = torch.matmul(q, k.transpose(-1, -2)).mul_(ctx.scale).sub_(lse.unsqueeze(-1)).exp_()
        if mask is not None:
            probs.masked_fill_(~mask, 0.0)
        grad_v = torch.matmul(probs.transpose(-1, -2), grad_out)
        grad_scores = torch.matmul(grad_out, v.transpose(-1, -2))
        grad_scores.sub_((grad_out * out).sum(-1, keepdim=True)).mul_(probs)
        del probs
        grad_q = torch.matmul(grad_scores, k).mul_(ctx.scale)
        grad_k = torch.matmul(grad_scores.transpose(-1, -2), q).mul_(ctx.scale)
        return grad_q, grad_k, grad_v, None, None


def backward_variant_call(variant: str, length: int):
    """dnabird's call with another CPU backward: the GEMM recompute above, or SDPA's math kernels."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from dnabird.attention.backends import sdpa

    flash = sdpa.sdpa_kernel
    if variant == "gemm-bwd":
        sdpa.sdpa_kernel = lambda q, k, v, mask, scale, dropout_p: (
            RecomputedBackward.apply(q, k, v, mask, scale) if torch.is_grad_enabled() and q.requires_grad
            else flash(q, k, v, mask, scale, dropout_p))
        return dnabird_call("sdpa", length)
    call = dnabird_call("sdpa", length)

    def math(q, k, v):
        with sdpa_kernel(SDPBackend.MATH):
            return call(q, k, v)

    return math


def gradient_difference(call, length: int) -> float:
    """Largest |difference| of dq, dk, dv between `call` and the dense masked reference (at most 2048 tokens)."""
    length = min(length, 2048)
    grads = []
    for candidate in (call, dense_mask_call(length)):
        q, k, v = make_inputs(length, requires_grad=True)
        candidate(q, k, v).sum().backward()
        grads.append((q.grad, k.grad, v.grad))
    return max(float((a - b).abs().max()) for a, b in zip(*grads, strict=True))


def dense_mask_call(length: int):
    from dnabird.attention import BigBirdITC

    pattern = BigBirdITC(num_heads=HEADS, block_size=BLOCK, num_random_blocks=RANDOM_BLOCKS)
    allowed = pattern.dense_mask(length, SEED)  # bool [H, L, L]
    additive = torch.zeros(1, *allowed.shape).masked_fill_(~allowed, float("-inf"))
    del allowed
    return lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=additive)


def full_call(length: int):
    return lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v)


def hf_call(length: int):
    """transformers' block-sparse attention kernel on given q/k/v (train mode: real random blocks)."""
    from transformers import BigBirdConfig
    from transformers.models.big_bird.modeling_big_bird import BigBirdBlockSparseAttention, BigBirdModel

    config = BigBirdConfig(hidden_size=HEADS * HEAD_DIM, num_attention_heads=HEADS, block_size=BLOCK,
                           num_random_blocks=RANDOM_BLOCKS, max_position_embeddings=max(4096, length),
                           attention_type="block_sparse")
    module = BigBirdBlockSparseAttention(config, seed=SEED).train()
    masks = BigBirdModel.create_masks_for_block_sparse_attn(torch.ones(BATCH, length), BLOCK)
    blocked, band, from_mask, to_mask = masks
    extra = {"output_attentions": False}
    if "output_attentions" not in inspect.signature(module.bigbird_block_sparse_attention).parameters:
        extra = {}  # transformers 5 dropped the argument

    def call(q, k, v):
        out, _ = module.bigbird_block_sparse_attention(
            q, k, v, band, from_mask, to_mask, blocked, blocked, HEADS, RANDOM_BLOCKS, HEAD_DIM, BLOCK, BLOCK,
            BATCH, length, length, seed=SEED, plan_from_length=None, plan_num_rand_blocks=None, **extra)
        return out

    return call


CALLS = {
    "dnabird": lambda length: dnabird_call("sdpa", length),
    "gemm-bwd": lambda length: backward_variant_call("gemm-bwd", length),
    "math": lambda length: backward_variant_call("math", length),
    "flex": lambda length: dnabird_call("flex", length),
    "dense-mask": dense_mask_call,
    "full": full_call,
    "hf-5": hf_call,
    "hf-4.57": hf_call,
}


def import_modules(candidate: str) -> None:
    if candidate.startswith("hf"):
        import transformers.models.big_bird.modeling_big_bird  # noqa: F401
    elif candidate != "full":
        import dnabird.attention  # noqa: F401


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def limit_memory(cap_gib: float) -> None:
    """Let this process allocate at most `cap_gib` more private memory than it holds now."""
    with open("/proc/self/status") as status:
        data_kib = next(int(line.split()[1]) for line in status if line.startswith("VmData:"))
    limit = data_kib * 1024 + int(cap_gib * 2**30)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def run_cell(candidate: str, length: int, mode: str, reps: int, budget_s: float, cap_gib: float,
             threads: int = 2, clock: str = "wall") -> dict:
    """Time `reps` calls (after one warm-up) and measure the peak RSS increase; runs in its own process."""
    torch.set_num_threads(threads)
    now = time.process_time if clock == "cpu" else time.perf_counter
    backward = mode == "f+b"
    q, k, v = make_inputs(length, requires_grad=backward)
    import_modules(candidate)  # imports are not the cell's memory
    baseline = current_rss_mib()
    limit_memory(cap_gib)
    call = CALLS[candidate](length)

    def once() -> float:
        start = now()
        if backward:
            call(q, k, v).sum().backward()
            for tensor in (q, k, v):
                tensor.grad = None
        else:
            with torch.no_grad():
                call(q, k, v)
        return now() - start

    warmup = once()
    reps = max(1, min(reps, int(budget_s / max(warmup, 1e-3))))
    times = [once() for _ in range(reps)]
    result = {"ms": 1000 * statistics.median(times), "mib": peak_rss_mib() - baseline, "reps": reps}
    if backward and candidate in BACKWARD_VARIANTS:
        result["grad_diff"] = gradient_difference(call, length)
    return result


# ----------------------------------------------------------------------------- the table (parent process)

def measure(python: str, candidate: str, length: int, mode: str, args: argparse.Namespace) -> dict | str:
    """Run one cell in a fresh process; returns its result, "OOM", or "error: …"."""
    command = [python, os.path.abspath(__file__), "--cell", candidate, str(length), mode,
               "--reps", str(args.reps), "--budget-s", str(args.budget_s),
               "--mem-cap-gib", str(args.mem_cap_gib), "--threads", str(args.threads), "--clock", args.clock]
    path = os.pathsep.join(filter(None, [REPO_ROOT, os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path)
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines:
        return json.loads(lines[-1])
    if done.returncode == -9 or "can't allocate memory" in done.stderr or "MemoryError" in done.stderr:
        return "OOM"
    return "error: " + (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1][:120]


def format_cell(result: dict | str | None) -> str:
    if result is None:
        return "n/a"
    if isinstance(result, str):
        return result if result == "OOM" else "err"
    return f"{result['ms']:.0f} ms / {result['mib']:.0f} MiB"


def ratio(numerator: dict | str | None, denominator: dict | str | None, key: str = "ms") -> str:
    if not isinstance(numerator, dict) or not isinstance(denominator, dict) or denominator[key] <= 0:
        return "n/a"
    return f"{numerator[key] / denominator[key]:.2f}x"


def faster_hf(row: dict) -> dict | None:
    measured = [row[name] for name in ("hf-5", "hf-4.57") if isinstance(row.get(name), dict)]
    return min(measured, key=lambda cell: cell["ms"]) if measured else None


def machine() -> str:
    """The CPU, its widest vector ISA and the one torch's kernels use (with any caps set)."""
    from dnabird.provenance import cpu_description

    described = cpu_description()
    return f"{described['cpu']}; torch's kernels: {described['cpu kernels']}"


def print_table(mode: str, results: dict, candidates: list[str], lengths: list[int], clock: str) -> None:
    columns = candidates + ["vs faster HF", "vs dense-mask"]
    rows = [["L"] + columns]
    for length in lengths:
        row = results[mode][length]
        cells = [format_cell(row.get(name)) for name in candidates]
        cells += [ratio(faster_hf(row), row.get("dnabird")), ratio(row.get("dense-mask"), row.get("dnabird"))]
        rows.append([str(length)] + cells)
    if 4096 in lengths and 16384 in lengths:
        memory = [ratio(results[mode][16384].get(name), results[mode][4096].get(name), "mib")
                  for name in candidates]
        rows.append(["mem 16k/4k"] + memory + ["", ""])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print(f"\n{mode} (median {'CPU' if clock == 'cpu' else 'wall'} time / peak RSS increase; "
          f"ratios = their time / dnabird time) on {machine()}")
    for row in rows:
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))


def check_targets(results: dict) -> None:
    """Print the issue's CPU acceptance targets (L 4096 forward+backward) with PASS/FAIL."""
    row = results.get("f+b", {}).get(4096)
    if not row:
        return
    measured = {"vs faster HF": ratio(faster_hf(row), row.get("dnabird")),
                "vs dense-mask": ratio(row.get("dense-mask"), row.get("dnabird"))}
    print(f"\nacceptance at L 4096, f+b, on {machine()} (cells vary by ±30 % on a busy machine: recheck with "
          "--lengths 4096 --modes f+b --candidates dnabird dense-mask hf-5 hf-4.57 --reps 7):")
    for name, target in TARGETS_AT_4096.items():
        value = measured[name]
        verdict = "n/a" if value == "n/a" else "PASS" if float(value[:-1]) >= target else "FAIL"
        print(f"  dnabird {name}: {value} (target >= {target}x) {verdict}")
    big = results["f+b"].get(16384, {}).get("dnabird")
    if big is not None:
        value = ratio(big, row.get("dnabird"), "mib")
        verdict = "n/a" if value == "n/a" else "PASS" if float(value[:-1]) <= MEMORY_RATIO_TARGET else "FAIL"
        print(f"  dnabird memory 16384/4096: {value} (target <= {MEMORY_RATIO_TARGET}x) {verdict}")


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    parser.add_argument("--candidates", nargs="+", choices=CANDIDATES, default=list(CANDIDATES))
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--reps", type=int, default=3, help="timed calls per cell after one warm-up (median)")
    parser.add_argument("--budget-s", type=float, default=60.0,
                        help="fewer reps when one call is slower than budget/reps seconds")
    parser.add_argument("--mem-cap-gib", type=float, default=8.0, help="a cell allocating more prints OOM")
    parser.add_argument("--hf457-python", help="interpreter of an environment with transformers 4.57.6")
    parser.add_argument("--threads", type=int, default=2, help="torch threads per cell (default 2)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time calls by the wall clock, or by the process's CPU time (use with --threads 1)")
    parser.add_argument("--cell", nargs=3, metavar=("CANDIDATE", "LENGTH", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.cell:
        candidate, length, mode = args.cell[0], int(args.cell[1]), args.cell[2]
        print(json.dumps(run_cell(candidate, length, mode, args.reps, args.budget_s, args.mem_cap_gib,
                                  args.threads, args.clock)))
        return 0

    import transformers

    print(f"torch {torch.__version__}, transformers {transformers.__version__} (hf-5), "
          f"hf-4.57 via {args.hf457_python or 'n/a (pass --hf457-python)'}; "
          f"B {BATCH}, H {HEADS}, D {HEAD_DIM}, fp32, {args.threads} threads, {args.clock} clock, "
          f"ITC block {BLOCK} / 3 window / 2 global / {RANDOM_BLOCKS} random blocks")
    interpreters = {name: sys.executable for name in CANDIDATES}
    interpreters["hf-4.57"] = args.hf457_python
    results: dict = {mode: {length: {} for length in args.lengths} for mode in args.modes}
    for mode in args.modes:
        for length in args.lengths:
            for candidate in args.candidates:
                skipped = interpreters[candidate] is None or (mode == "f+b" and candidate in FORWARD_ONLY) \
                    or (mode == "fwd" and candidate in BACKWARD_ONLY)
                result = None if skipped else measure(interpreters[candidate], candidate, length, mode, args)
                results[mode][length][candidate] = result
                note = f"  ({result})" if isinstance(result, str) and result != "OOM" else ""
                if isinstance(result, dict) and "grad_diff" in result:
                    note = f"  (max |grad difference| from the dense reference {result['grad_diff']:.1e})"
                print(f"  {mode:3} L {length:5} {candidate:10} {format_cell(result)}{note}", flush=True)
        print_table(mode, results, args.candidates, args.lengths, args.clock)
    check_targets(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
