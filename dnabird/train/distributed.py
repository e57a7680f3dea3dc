"""Process-group set-up for `torchrun` (DDP) and the few collectives the loop needs.

Launch lines (the same script runs alone without torchrun):
  1 GPU:    dnabird pretrain --config STAGE.yaml
  8 GPUs:   torchrun --standalone --nproc_per_node 8 -m dnabird pretrain --config STAGE.yaml
  2 nodes:  torchrun --nnodes 2 --nproc_per_node 8 --node_rank {0|1} --rdzv_backend c10d \
                --rdzv_endpoint HOST0:29500 -m dnabird pretrain --config STAGE.yaml
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from dnabird.errors import reject

DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class Context:
    """Where this process sits: its rank among `world_size` processes and its device."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = torch.device("cpu")
    joined: bool = False    # this call of `setup` created the process group (so `teardown` leaves it)

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def resolve_device(device: str, local_rank: int = 0) -> torch.device:
    """The torch device a `device` setting names: "auto" is the first GPU when there is one, else the CPU."""
    reject(device not in DEVICES, "device", device, f"one of {', '.join(DEVICES)}")
    reject(device == "cuda" and not torch.cuda.is_available(), "device", device,
           "auto or cpu: torch sees no CUDA device here")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(f"cuda:{local_rank}" if device == "cuda" else device)


def setup(device: str = "auto") -> Context:
    """Join the process group `torchrun` describes in the environment (gloo on CPU, nccl on GPU).

    Without torchrun's variables this is a single process on `device` ("auto": first GPU, else CPU).
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank, local_rank = int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", "0"))
    dev = resolve_device(device, local_rank)
    if dev.type == "cuda":
        torch.cuda.set_device(dev)
    joined = world_size > 1 and not dist.is_initialized()
    if joined:
        dist.init_process_group("nccl" if dev.type == "cuda" else "gloo")
    return Context(rank=rank, world_size=world_size, local_rank=local_rank, device=dev, joined=joined)


def teardown(ctx: Context) -> None:
    """Leave the process group `setup` joined (no-op for a single process or a group the caller made), once
    every rank has reached this point: a rank that left while another still used the group could bring
    down the other's gloo threads at exit."""
    if ctx.joined and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def all_reduce_sum(values: torch.Tensor, ctx: Context) -> torch.Tensor:
    """Sum a tensor over all ranks (returns it unchanged for a single process)."""
    if ctx.distributed:
        dist.all_reduce(values, op=dist.ReduceOp.SUM)
    return values


def barrier(ctx: Context) -> None:
    """Wait for every rank (no-op for a single process)."""
    if ctx.distributed:
        dist.barrier()
