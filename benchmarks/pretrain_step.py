"""Tokens/s and peak memory of one pretraining optimizer step (MLM + NSP loss, AdamW) per model and length.

Each configuration runs in a fresh process (honest peak memory). On CUDA the step runs under bf16
autocast and the table adds MFU = model FLOPs / 989 TFLOP/s (H100/H200 dense bf16 spec), counting
dense layers, the attention blocks actually computed and the MLM head at masked positions (x3 for
forward + backward). `--hf` adds transformers' BigBirdForPreTraining on the same input, side by side.

    python benchmarks/pretrain_step.py                      # tiny + bigbird-base at 1024 and 4096
    python benchmarks/pretrain_step.py --presets tiny --lengths 1024 --steps 2   # smoke run
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import time

PEAK_FLOPS = 989e12


def model_flops(config, batch: int, length: int, masked: int) -> float:
    """Training FLOPs of one step (forward x 3)."""
    from dnabird.attention import pattern_from_dict

    h, i, d = config.hidden_size, config.intermediate_size, config.head_size
    dense = 2 * (4 * h * h + 2 * h * i) * batch * length * config.num_layers
    pattern = pattern_from_dict(dict(config.attention))
    block = config.length_multiple
    pairs = int(pattern.layout(length // block, seed=0).block_mask().sum())       # over heads
    attention = 4 * pairs * block * block * d * batch * config.num_layers
    transform = h * h if config.mlm_transform else 0
    head = 2 * (transform + h * config.vocab_size) * masked
    return 3.0 * (dense + attention + head)


def _batch(vocab: int, batch: int, length: int, device):
    import torch

    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(5, vocab, (batch, length), generator=gen)
    labels = torch.where(torch.rand(batch, length, generator=gen) < 0.15, ids, torch.full_like(ids, -100))
    return {"input_ids": ids.to(device), "attention_mask": torch.ones_like(ids, dtype=torch.bool).to(device),
            "token_type_ids": torch.zeros_like(ids).to(device), "mlm_labels": labels.to(device),
            "nsp_label": torch.zeros(batch, dtype=torch.long).to(device)}


def _measure(job: dict) -> dict:
    import torch

    from dnabird.model.config import preset
    from dnabird.model.heads import PretrainingModel

    device = torch.device(job["device"])
    if job.get("backend"):  # one attention backend: the device's "auto" list becomes that backend alone
        from dnabird.attention.backends import AUTO_ORDER

        AUTO_ORDER[device.type] = (job["backend"],)
    config = preset(job["preset"], max_positions=max(4096, job["length"]))
    data = _batch(config.vocab_size, job["batch"], job["length"], device)
    if job["impl"] == "dnabird":
        model = PretrainingModel(config).to(device)

        def loss():
            return model(data["input_ids"], data["attention_mask"], data["token_type_ids"],
                         mlm_labels=data["mlm_labels"], nsp_labels=data["nsp_label"]).loss
    else:
        from transformers import BigBirdConfig, BigBirdForPreTraining

        hf = BigBirdConfig(vocab_size=config.vocab_size, hidden_size=config.hidden_size,
                           num_hidden_layers=config.num_layers, num_attention_heads=config.num_heads,
                           intermediate_size=config.intermediate_size, max_position_embeddings=config.max_positions,
                           attention_type="block_sparse", block_size=config.attention["block_size"],
                           num_random_blocks=config.attention["num_random_blocks"])
        model = BigBirdForPreTraining(hf).to(device)

        def loss():
            return model(input_ids=data["input_ids"], attention_mask=data["attention_mask"].long(),
                         token_type_ids=data["token_type_ids"], labels=data["mlm_labels"],
                         next_sentence_label=data["nsp_label"]).loss
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")

    def step():
        with autocast:
            value = loss()
        value.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step()                                                   # warm-up (allocations, kernels)
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    for _ in range(job["steps"]):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / job["steps"]
    peak = (torch.cuda.max_memory_allocated() if device.type == "cuda"
            else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    masked = int((data["mlm_labels"] != -100).sum())
    flops = model_flops(config, job["batch"], job["length"], masked)
    return {**job, "tokens_per_s": job["batch"] * job["length"] / seconds, "peak_mib": peak / 2**20, "flops": flops,
            "seconds": seconds, "mfu": flops / seconds / PEAK_FLOPS if device.type == "cuda" else None}


def _measure_or_error(job: dict) -> dict:
    """`_measure(job)`, or its exception as text: an exception that does not unpickle in the parent (one whose
    __init__ takes other arguments than its message) would leave the pool waiting for ever."""
    try:
        return _measure(job)
    except Exception as err:  # noqa: BLE001 - re-raised in the parent by `run_isolated`
        return {"error": f"{type(err).__name__}: {err}"}


def run_isolated(job: dict) -> dict:
    """`_measure(job)` in a fresh process; its exception is raised here as a RuntimeError naming the job."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        result = pool.apply(_measure_or_error, (job,))
    if "error" in result:
        raise RuntimeError(f"{job}: {result['error']}")
    return result


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=["tiny", "bigbird-base"])
    parser.add_argument("--lengths", nargs="+", type=int, default=[1024, 4096])
    parser.add_argument("--batch", type=int, default=1, help="sequences per step")
    parser.add_argument("--steps", type=int, default=3, help="timed steps after one warm-up step")
    parser.add_argument("--hf", action="store_true", help="also time transformers' BigBirdForPreTraining")
    args = parser.parse_args()
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    header = f"{'device':<6} {'model':<13} {'tokens':>6} {'impl':<8} {'tokens/s':>10} {'peak MiB':>9} {'MFU':>6} " \
             f"{'vs HF':>6}"
    from dnabird.provenance import cpu_description

    described = cpu_description()
    print(f"cpu rows on {described['cpu']}; torch's kernels: {described['cpu kernels']}")
    print(header)
    print("-" * len(header))
    for device in devices:
        for name in args.presets:
            for length in args.lengths:
                impls = ["dnabird", "hf"] if args.hf else ["dnabird"]
                rows = [run_isolated({"device": device, "preset": name, "length": length, "batch": args.batch,
                                      "steps": args.steps, "impl": impl}) for impl in impls]
                for row in rows:
                    mfu = f"{row['mfu']:.1%}" if row["mfu"] is not None else "—"
                    ratio = f"{row['tokens_per_s'] / rows[-1]['tokens_per_s']:.2f}x" if args.hf else "—"
                    print(f"{device:<6} {name:<13} {length:>6} {row['impl']:<8} {row['tokens_per_s']:>10.0f} "
                          f"{row['peak_mib']:>9.0f} {mfu:>6} {ratio:>6}")


if __name__ == "__main__":
    main()
