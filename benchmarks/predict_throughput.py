"""`dnabird predict` throughput: sequences/s with GENA-LM's layout at 4096 tokens beside transformers'
`BigBirdForSequenceClassification` on the same windows, fp32 and bf16; and tiles/s over about 1 Mb of a
genome with a fine-tuned chromatin head.

Part 1: GENA-LM's `gena-lm-bigbird-base-t2t` layout (`benchmarks/model.py`'s GENA_LAYOUT; random weights, which
do not change the speed) with a multilabel head of `--outputs` outputs, its published tokenizer (the copy under
tests/data). Windows of the toy genome (`dnabird.datasets.toy`) long enough to fill `--eval-length` tokens are
predicted by `dnabird.predict` (forward strand, one pass each: task.json strand_rule "forward") and, on the same
token ids padded the same way, by transformers' model with the same layout under `torch.inference_mode`
(bf16: dnabird under bfloat16 autocast, transformers with bfloat16 weights: its block-sparse attention fails
under autocast). The ratio column compares each row to the first.
Part 2: `dnabird.predict` over tiles (the head's window every `--step` bp) of `--region` spans (default: the
demo genome's chr1 and the first 240 kb of chr2, 1 Mb) with `--head` (default the demo's chromatin head), both
strands averaged as its task.json says; and `predict_to_files` with its bigWig and bedGraph tracks.

    python benchmarks/predict_throughput.py                                   # the acceptance table (CPU)
    python benchmarks/predict_throughput.py --sequences 2 --batch-size 1 --eval-length 1024   # smaller
    python benchmarks/predict_throughput.py --device cuda --sequences 64 --batch-size 16      # a GPU
"""

from __future__ import annotations

import argparse
import copy
import tempfile
import time
from pathlib import Path

import torch

from dnabird.data.tokenizer import load_tokenizer
from dnabird.datasets.toy import generate
from dnabird.genome.reference import Genome
from dnabird.model.heads import SequenceClassifier
from dnabird.model.hf import config_from_hf
from dnabird.model.task_spec import TaskSpec
from dnabird.prediction import predict, predict_to_files

ROOT = Path(__file__).resolve().parent.parent
GENA_TOKENIZER = ROOT / "tests" / "data" / "gena_lm_t2t_1000h_multi_32k"


def windows_filling(genome: Genome, tokenizer, tokens: int, count: int) -> list[str]:
    """`count` windows of chr1, each the longest start that tokenizes to at most `tokens` − 2 ids."""
    sample = genome.fetch("chr1", 100_000, 120_000).sequence.upper()
    bp = int((tokens - 2) * len(sample) / len(tokenizer.encode(sample)) * 0.97)
    windows = []
    for n in range(count):
        start = 100_000 + n * bp
        window = genome.fetch("chr1", start, start + bp).sequence.upper()
        while len(tokenizer.encode(window)) > tokens - 2:
            window = window[:int(len(window) * 0.98)]
        windows.append(window)
    return windows


def hf_classifier(layout: dict, outputs: int):
    from transformers import BigBirdConfig, BigBirdForSequenceClassification

    with torch.random.fork_rng():
        config = BigBirdConfig(**layout, num_labels=outputs, problem_type="multi_label_classification")
        return BigBirdForSequenceClassification(config).eval()


def time_hf(model, tokenizer, windows: list[str], length: int, batch_size: int, precision: str, device) -> float:
    """Seconds for transformers' model over the windows: `[CLS] ids [SEP]` padded to `length`, as predict pads.
    bf16: the model's weights in bfloat16 (its block-sparse attention fails under autocast: a scatter of
    mixed dtypes)."""
    model = copy.deepcopy(model).to(torch.bfloat16) if precision == "bf16" else model
    rows = [tokenizer.encode(w) for w in windows]
    start = time.perf_counter()
    for first in range(0, len(rows), batch_size):
        ids, mask = tokenizer.pad_batch(rows[first:first + batch_size], block_size=64, length=length)
        ids, mask = torch.from_numpy(ids).to(device), torch.from_numpy(mask).long().to(device)
        with torch.inference_mode():
            torch.sigmoid(model(input_ids=ids, attention_mask=mask).logits.float())
    return time.perf_counter() - start


def part_one(args, genome: Genome) -> None:
    from model import GENA_LAYOUT  # benchmarks/model.py, beside this script

    tokenizer = load_tokenizer(GENA_TOKENIZER)
    layout = {**GENA_LAYOUT, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
    windows = windows_filling(genome, tokenizer, args.eval_length, args.sequences)
    task = TaskSpec(task="bench", problem="multilabel", labels=[f"feature_{i}" for i in range(args.outputs)],
                    eval_length=args.eval_length, strand_rule="forward", tokenizer_hash=tokenizer.hash)
    device = torch.device(args.device)
    ours = SequenceClassifier(config_from_hf(layout), args.outputs, problem="multilabel")
    theirs = hf_classifier(layout, args.outputs).to(device)
    print(f"\nGENA-LM layout (12 x 768, block 64, 3 random blocks), {args.outputs} outputs, {len(windows)} windows "
          f"of {sum(map(len, windows)) // len(windows)} bp padded to {args.eval_length} tokens, batch "
          f"{args.batch_size}, {args.device} ({torch.get_num_threads()} threads)")
    print("| model | precision | sequences | seconds | sequences/s | vs first row |\n|---|---|---|---|---|---|")
    first = None
    for precision in args.precisions:
        for name in ("dnabird predict", "transformers BigBirdForSequenceClassification"):
            start = time.perf_counter()
            if name.startswith("dnabird"):
                predict(ours, sequences=windows, tokenizer=tokenizer, task=task, batch_size=args.batch_size,
                        device=args.device, precision=precision, progress=False)
                seconds = time.perf_counter() - start
            else:
                try:
                    seconds = time_hf(theirs, tokenizer, windows, args.eval_length, args.batch_size, precision,
                                      device)
                except RuntimeError as err:
                    print(f"| {name} | {precision} | {len(windows)} | fails: {str(err).splitlines()[0]} | | |")
                    continue
            rate = len(windows) / seconds
            first = first or rate
            print(f"| {name} | {precision} | {len(windows)} | {seconds:.1f} | {rate:.3f} | {rate / first:.2f} |")


def part_two(args, genome: Genome) -> None:
    head = Path(args.head)
    if not (head / "task.json").is_file():
        print(f"\n(no head at {head}: part 2 skipped; give --head and --genome, e.g. a demo run's)")
        return
    regions = args.region or ["chr1", "chr2:1-240000"]
    print(f"\ntiles of {', '.join(regions)} with {head} every {args.step or 'window'} bp, batch {args.tile_batch}")
    print("| run | tiles | seconds | tiles/s |\n|---|---|---|---|")
    options = dict(tiles=regions, genome=args.genome, step=args.step, batch_size=args.tile_batch,
                   device=args.device, progress=False)
    start = time.perf_counter()
    tiles = predict(head, **options)
    seconds = time.perf_counter() - start
    print(f"| predict | {len(tiles.rows)} | {seconds:.1f} | {len(tiles.rows) / seconds:.1f} |")
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        record = predict_to_files(head, Path(folder) / "tiles.tsv", **options)
        seconds = time.perf_counter() - start
    count = record["summary"]["predicted"]
    print(f"| predict_to_files (+ {2 * len(record['outputs'])} tracks) | {count} | {seconds:.1f} | "
          f"{count / seconds:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sequences", type=int, default=4, help="part 1: windows predicted per row")
    parser.add_argument("--eval-length", type=int, default=4096, help="part 1: tokens per window (padded)")
    parser.add_argument("--outputs", type=int, default=919, help="part 1: the head's outputs")
    parser.add_argument("--batch-size", type=int, default=2, help="part 1: windows per model call")
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16"], choices=("fp32", "bf16"))
    parser.add_argument("--head", default=str(ROOT / "runs" / "demo" / "chromatin" / "model"))
    parser.add_argument("--genome", default=str(ROOT / "runs" / "demo" / "data" / "toy_hg19.fa"))
    parser.add_argument("--region", action="append", help="part 2: spans to tile (default about 1 Mb)")
    parser.add_argument("--step", type=int, default=None, help="part 2: bp between tiles (default: the window)")
    parser.add_argument("--tile-batch", type=int, default=32, help="part 2: windows per model call")
    parser.add_argument("--parts", default="12", help="which parts to run: 1, 2 or 12")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    if "1" in args.parts:
        work = Path(tempfile.mkdtemp(prefix="predict-bench-"))
        part_one(args, Genome(generate(work / "toy", seed=0, scale=0.3)["fasta"]))
    if "2" in args.parts:
        part_two(args, Genome(args.genome))


if __name__ == "__main__":
    main()
