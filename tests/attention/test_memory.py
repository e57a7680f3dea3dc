"""No quadratic memory: the sparse sdpa path at L = 16384 stays far below an L×L score matrix.

Each measurement runs in a fresh process and reports how far the process's peak mapped memory
(VmPeak) rises above what it mapped just before one forward + backward call. That bounds the
growth of its resident memory from above, and unlike RSS it cannot be inflated by shared-library
pages the kernel evicted under memory pressure; torch's allocator is invisible to tracemalloc.
A dense control proves the probe sees L×L memory.
"""

import subprocess
import sys

PROBE = """
import sys, torch
from dnabird.attention import BigBirdITC, attention
torch.set_num_threads(1)
def mapped(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith(field + ":"))
length, backend, heads = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, heads, length, 16, generator=g).requires_grad_() for _ in range(3))
pattern = BigBirdITC(heads)
attention(q[:, :, :512], k[:, :, :512], v[:, :, :512], pattern, backend=backend).sum().backward()  # warm-up
q.grad = k.grad = v.grad = None
before = mapped("VmSize")
attention(q, k, v, pattern, backend=backend).sum().backward()
print(mapped("VmPeak") - before)
"""


def peak_growth(length: int, backend: str, heads: int = 2) -> int:
    """Bytes by which a fresh process's peak mapped memory grows during one forward + backward call."""
    done = subprocess.run([sys.executable, "-c", PROBE, str(length), backend, str(heads)],
                          capture_output=True, text=True, check=True)
    return int(done.stdout.strip().splitlines()[-1])


def score_matrix_bytes(length: int, heads: int = 2) -> int:
    return heads * length * length * 4  # fp32 scores of every head


def test_sparse_path_stays_far_below_a_score_matrix():
    growth = peak_growth(16384, "sdpa")
    assert growth < score_matrix_bytes(16384) / 10, f"{growth / 2**20:.0f} MiB at L 16384"


def test_probe_sees_a_dense_score_matrix():
    growth = peak_growth(4096, "dense")
    assert growth > score_matrix_bytes(4096), f"{growth / 2**20:.0f} MiB at L 4096"
