"""No quadratic memory: the sparse sdpa path at L = 16384 stays far below an L×L score matrix.

Each measurement runs in a fresh process and reports the growth of its peak RSS over the RSS
it held just before the call (forward and backward); torch's allocator is invisible to
tracemalloc, so RSS is the honest measure. A dense control proves the probe sees L×L memory.
"""

import subprocess
import sys

PROBE = """
import os, resource, sys, torch
from dnabird.attention import BigBirdITC, attention
torch.set_num_threads(1)
length, backend, heads = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, heads, length, 16, generator=g).requires_grad_() for _ in range(3))
pattern = BigBirdITC(heads)
attention(q[:, :, :512], k[:, :, :512], v[:, :, :512], pattern, backend=backend).sum().backward()  # warm-up
q.grad = k.grad = v.grad = None
before = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
attention(q, k, v, pattern, backend=backend).sum().backward()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before)
"""


def peak_growth(length: int, backend: str, heads: int = 2) -> int:
    """Bytes by which the peak RSS of a fresh process grows during one forward + backward call."""
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
