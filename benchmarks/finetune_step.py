"""Fine-tuning throughput on 8-kb windows: examples/s of one optimizer step of the promoter classifier
(binary [CLS] head, the recipe's loss, AdamW) and of evaluation (forward only, eval mode), per model.

An 8,000-bp window is `--tokens` tokens: ~2,000 with a 32,000-piece genome tokenizer (~4 bp/token),
~2,500 with the toy's 1,024-piece one; DeePromoter negatives tokenise longer. Each configuration runs in a
fresh process (honest peak memory); CUDA rows (bf16 autocast) are added when a GPU is present.

    python benchmarks/finetune_step.py                              # tiny + bigbird-base, 2048 tokens
    python benchmarks/finetune_step.py --presets tiny --steps 2     # smoke run
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import time


def _measure(job: dict) -> dict:
    import torch

    from dnabird.finetune.recipe import classification_loss
    from dnabird.model.config import preset
    from dnabird.model.heads import SequenceClassifier

    device = torch.device(job["device"])
    config = preset(job["preset"])
    model = SequenceClassifier(config, 1, problem="binary").to(device)
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(5, config.vocab_size, (job["batch"], job["tokens"]), generator=gen)
    batch = {"input_ids": ids.to(device), "attention_mask": torch.ones_like(ids, dtype=torch.bool).to(device),
             "token_type_ids": torch.zeros_like(ids).to(device),
             "labels": (torch.arange(job["batch"]) % 2).float().to(device)}
    loss_fn = classification_loss("binary")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")

    def train_step():
        with autocast:
            loss = loss_fn(model, batch, 0).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    @torch.no_grad()
    def eval_step():
        with autocast:
            model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])

    def timed(step, setup) -> float:
        setup()
        step()                                                  # warm-up (allocations, kernels)
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(job["steps"]):
            step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        return job["batch"] * job["steps"] / (time.perf_counter() - start)

    train = timed(train_step, model.train)
    evaluate = timed(eval_step, model.eval)
    peak = (torch.cuda.max_memory_allocated() if device.type == "cuda"
            else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    return {**job, "train": train, "eval": evaluate, "peak_mib": peak / 2**20}


def run_isolated(job: dict) -> dict:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_measure, (job,))


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=["tiny", "bigbird-base"])
    parser.add_argument("--tokens", type=int, default=2048, help="tokens per 8-kb window ([CLS] and [SEP] included)")
    parser.add_argument("--batch", type=int, default=2, help="windows per step")
    parser.add_argument("--steps", type=int, default=3, help="timed steps after one warm-up step")
    args = parser.parse_args()
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    header = f"{'device':<6} {'model':<13} {'tokens':>6} {'batch':>5} {'train ex/s':>10} {'eval ex/s':>10} " \
             f"{'eval/train':>10} {'peak MiB':>9} {'711 steps x 256':>16}"
    print(header)
    print("-" * len(header))
    for device in devices:
        for name in args.presets:
            row = run_isolated({"device": device, "preset": name, "tokens": args.tokens, "batch": args.batch,
                                "steps": args.steps})
            hours = 711 * 256 / row["train"] / 3600     # Table 21's promoter fine-tune on this device
            print(f"{device:<6} {name:<13} {args.tokens:>6} {args.batch:>5} {row['train']:>10.2f} "
                  f"{row['eval']:>10.2f} {row['eval'] / row['train']:>9.1f}x {row['peak_mib']:>9.0f} "
                  f"{hours:>14.1f} h")


if __name__ == "__main__":
    main()
