"""The one training loop: AdamW, warmup + linear decay, accumulation, clipping, DDP, checkpoints, resume.

Written out in one function (nanoGPT / torchtune style). The caller seeds global RNG once before
building the model (`seed_everything`); from then on the loop owns the RNG state and checkpoints it.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

import torch
from torch.nn.parallel import DistributedDataParallel

from dnabird.errors import CheckpointError, Interrupted, NonFiniteLossError, reject
from dnabird.io import write_json_atomic
from dnabird.progress import progress_bar
from dnabird.train import checkpoint, distributed
from dnabird.train.data import accumulation_steps, step_batches
from dnabird.train.metrics import MetricsLog, plot_learning_curve
from dnabird.train.schedule import warmup_linear_decay

log = logging.getLogger(__name__)


@dataclass
class TrainConfig:
    """Optimisation and bookkeeping settings of one run (every key can be set from YAML).

    AdamW with decoupled weight decay 0.01, betas (0.9, 0.999), eps 1e-6 is the default: the
    paper's "Adam" is BERT's AdamWeightDecay optimizer, which is exactly this (Table 21, lr 1e-4).
    """

    out_dir: str = "runs/pretrain"
    max_steps: int = 1_000_000        # optimizer steps
    global_batch_size: int = 256      # examples per optimizer step, over all ranks and micro-batches
    micro_batch_size: int = 8         # examples per forward/backward on one rank
    lr: float = 1e-4                  # peak learning rate
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-6
    weight_decay: float = 0.01        # not applied to biases and 1-D (norm) weights
    warmup_steps: int = 10_000        # linear warmup, then linear decay to 0 at max_steps
    grad_clip: float = 1.0            # max global gradient L2 norm (0 disables)
    checkpoint_every: int = 1000      # steps between checkpoints (one is always written at the end)
    keep_last: int = 3                # checkpoints kept on disk
    log_every: int = 1                # steps between metrics.jsonl records
    eval_every: int = 0               # steps between calls of the caller's `evaluate` (and the last step; 0: last only)
    precision: str = "auto"           # auto (bf16 autocast on GPU, fp32 on CPU) | bf16 | fp32
    device: str = "auto"              # auto | cpu | cuda
    num_workers: int = 0              # DataLoader worker processes per rank
    progress: bool = True             # tqdm bar (only on a TTY and on rank 0)

    def __post_init__(self):
        reject(self.precision not in ("auto", "bf16", "fp32"), "train.precision", self.precision,
               "one of auto, bf16, fp32")
        reject(self.device not in distributed.DEVICES, "train.device", self.device,
               f"one of {', '.join(distributed.DEVICES)}")
        for name in ("max_steps", "global_batch_size", "micro_batch_size", "checkpoint_every", "keep_last",
                     "log_every"):
            reject(int(getattr(self, name)) < 1, f"train.{name}", getattr(self, name), "an integer >= 1")
        reject(self.eval_every < 0, "train.eval_every", self.eval_every, "an integer >= 0")


class LossOutput(NamedTuple):
    """What a loss function returns for one micro-batch."""

    loss: torch.Tensor                                   # scalar to minimise (mean over the micro-batch)
    num_tokens: int                                      # real tokens processed, for tokens/s
    metrics: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}  # name -> (numerator, denominator)


def seed_everything(seed: int) -> None:
    """Seed torch's global RNG once, at the entry point, before the model is built."""
    torch.manual_seed(seed)


def train(model: torch.nn.Module, loss_fn: Callable[[torch.nn.Module, dict, int], LossOutput], dataset,
          config: TrainConfig, *, collate_fn: Callable, resume: bool = False, run_info: dict | None = None,
          save_model=checkpoint.save_model_safetensors, load_model=checkpoint.load_model_safetensors,
          evaluate: Callable[[torch.nn.Module, int], dict] | None = None,
          ctx: distributed.Context | None = None) -> list[dict]:
    """Train `model` on `dataset[global index]` for `config.max_steps` steps; returns the metrics records.

    `loss_fn(model, micro_batch, step)` computes the loss; `collate_fn` turns a list of examples into a
    micro-batch dict of tensors. With `resume`, continues from the newest checkpoint in `out_dir`.
    `evaluate(model, steps_done)`, called on rank 0 every `config.eval_every` steps and after the last
    (before that step's checkpoint is written), returns metrics added to the step's record.
    """
    owns_group = ctx is None   # then the loop joins the process group and leaves it before returning
    ctx = ctx or distributed.setup(config.device)
    out_dir, ckpt_root = Path(config.out_dir), Path(config.out_dir) / "checkpoints"
    model.to(ctx.device)
    decay = [p for p in model.parameters() if p.requires_grad and p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.ndim < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=config.lr, betas=tuple(config.betas), eps=config.eps)
    start_step, last_good = 0, None
    if resume:
        last_good = checkpoint.latest(ckpt_root)
        if last_good is None:
            raise CheckpointError(f"{ckpt_root}: no checkpoint to resume from")
        start_step = checkpoint.load(last_good, model, optimizer, ctx=ctx, load_model=load_model)["step"]
        log.info("resuming from %s (step %d)", last_good, start_step)
    if ctx.is_main:
        out_dir.mkdir(parents=True, exist_ok=True)
        run = {**(run_info or {}), "train": asdict(config), "world_size": ctx.world_size}
        write_json_atomic(out_dir / "run.json", run)
    metrics_log = (MetricsLog(out_dir / "metrics.jsonl", resume_step=start_step if resume else None)
                   if ctx.is_main else None)
    net = DistributedDataParallel(model) if ctx.distributed else model
    accum = accumulation_steps(config.global_batch_size, config.micro_batch_size, ctx.world_size)
    use_bf16 = config.precision == "bf16" or (config.precision == "auto" and ctx.device.type == "cuda")
    autocast = torch.autocast(ctx.device.type, dtype=torch.bfloat16, enabled=use_bf16)
    batches = step_batches(dataset, start_step=start_step, stop_step=config.max_steps,
                           global_batch=config.global_batch_size, micro_batch=config.micro_batch_size,
                           rank=ctx.rank, world_size=ctx.world_size, collate_fn=collate_fn,
                           num_workers=config.num_workers)
    bar = progress_bar(total=config.max_steps, initial=start_step, unit="step", dynamic_ncols=True,
                       enabled=config.progress and ctx.is_main)
    model.train()
    t0 = time.perf_counter()
    step, saved = start_step, start_step  # the step under way; that of the newest checkpoint, where a rerun resumes
    try:
        for step, micro_batches in zip(range(start_step, config.max_steps), batches, strict=False):
            lr = warmup_linear_decay(step, peak_lr=config.lr, warmup_steps=config.warmup_steps,
                                     total_steps=config.max_steps)
            for group in optimizer.param_groups:
                group["lr"] = lr
            sums: dict[str, torch.Tensor] = {}
            for i, batch in enumerate(micro_batches):
                batch = {k: v.to(ctx.device, non_blocking=True) for k, v in batch.items()}
                sync = i == accum - 1 or not ctx.distributed
                with contextlib.nullcontext() if sync else net.no_sync():
                    with autocast:
                        out = loss_fn(net, batch, step)
                    (out.loss / accum).backward()
                parts = {"loss": out.loss, "tokens": torch.tensor(float(out.num_tokens))}
                for metric, (num, den) in out.metrics.items():
                    parts.update({f"{metric}.num": num, f"{metric}.den": den})
                for name, value in parts.items():
                    value = value.detach().float().cpu()
                    sums[name] = sums[name] + value if name in sums else value
            names = sorted(sums)
            totals = distributed.all_reduce_sum(torch.stack([sums[n].to(ctx.device) for n in names]), ctx)
            totals = dict(zip(names, totals.tolist(), strict=True))
            loss = totals["loss"] / (accum * ctx.world_size)
            if not math.isfinite(loss):
                raise NonFiniteLossError(f"loss is {loss} at step {step + 1}; stopped before updating the model. "
                                         f"Last good checkpoint: {last_good or 'none written yet'}")
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip or float("inf"))
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            now = time.perf_counter()
            record = {"step": step + 1, "loss": loss, "lr": lr, "grad_norm": float(grad_norm),
                      "tokens_per_s": totals["tokens"] / (now - t0)}
            t0 = now
            record.update({n[:-4]: totals[n] / max(totals[n[:-4] + ".den"], 1.0)
                           for n in names if n.endswith(".num")})
            last = step + 1 == config.max_steps
            evaluated = evaluate is not None and ctx.is_main and (
                last or (config.eval_every > 0 and (step + 1) % config.eval_every == 0))
            if evaluated:
                record.update(evaluate(model, step + 1))
                model.train()
                t0 = time.perf_counter()
            if ctx.is_main and ((step + 1) % config.log_every == 0 or last or evaluated):
                metrics_log.append(record)
            bar.update(1)
            bar.set_postfix({k: f"{v:.4g}" for k, v in record.items() if k not in ("step", "grad_norm")})
            if (step + 1) % config.checkpoint_every == 0 or step + 1 == config.max_steps:
                last_good = checkpoint.save(ckpt_root, step + 1, model, optimizer, ctx=ctx,
                                            keep_last=config.keep_last, save_model=save_model)
                saved = step + 1
    except KeyboardInterrupt:
        bar.close()
        raise Interrupted(f"during step {step + 1} of {config.max_steps} (last checkpoint: step {saved})",
                          saved) from None
    bar.close()
    records = metrics_log.records() if metrics_log else []
    if records:
        metric_keys = [k for k in records[-1] if k not in ("step", "loss", "lr", "grad_norm", "tokens_per_s")]
        plot_learning_curve(records, out_dir / "learning_curve.png", keys=("loss", *metric_keys, "lr"))
    if owns_group:   # a gloo group left to interpreter shutdown can abort the process (SIGABRT)
        distributed.teardown(ctx)
    return records

