"""What a pretrained MLM knows of the toy genome's planted elements (promoter TATA, Inr and GC boxes, TF motif
sites): the bits per bp of the tokens covering an element when those tokens are masked, beside the same for a
background span of the same length in the same window (150-250 bp away, else 700-1000 bp, on no element or
CpG island). A model that has learnt a motif predicts its masked bases far better than background bases; one
that knows only composition predicts them as well as any bases of the same composition.

Held-out chromosomes (chr8, chr9: the demo's pretraining hold-out) and seen ones are reported apart.

    python benchmarks/motif_knowledge.py --run runs/demo                    # after make demo
"""

from __future__ import annotations

import argparse
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyfaidx
import torch

from dnabird.model.checkpoint import load_checkpoint, read_tokenizer

HELD_OUT = ("chr8", "chr9")
IGNORE = -100


def read_bed(path: Path) -> list[tuple[str, int, int, str]]:
    """(chrom, start, end, name) of each record."""
    rows = [line.rstrip("\n").split("\t") for line in path.open() if line.strip()]
    return [(r[0], int(r[1]), int(r[2]), r[3]) for r in rows]


def masked_bits_per_bp(model, tokenizer, window: str, span: tuple[int, int]) -> float:
    """Bits per bp of the tokens of `window` overlapping `span` ([start, end) in window bases), all masked at once."""
    ids, offsets = tokenizer.encode(window), tokenizer.offsets(window)
    chosen = [i for i, (a, b) in enumerate(offsets) if a < span[1] and b > span[0]]
    inputs = torch.tensor([[tokenizer.cls_id, *ids, tokenizer.sep_id]])
    labels = torch.full_like(inputs, IGNORE)
    for i in chosen:
        labels[0, i + 1], inputs[0, i + 1] = inputs[0, i + 1].item(), tokenizer.mask_id
    with torch.no_grad():
        out = model(inputs, torch.ones_like(inputs), mlm_labels=labels)
    true = labels[labels != IGNORE]
    nats = -torch.log_softmax(out.mlm_logits.float(), -1)[torch.arange(len(true)), true].sum().item()
    return nats / math.log(2) / sum(offsets[i][1] - offsets[i][0] for i in chosen)


def background_span(rng, start: int, end: int, busy: list[tuple[int, int]]) -> tuple[int, int] | None:
    """A span of the element's length near it that overlaps no element or island, or None."""
    for attempt in range(40):
        low, high = (150, 250) if attempt < 20 else (700, 1000)   # island promoters' elements sit in 1.2 kb islands
        shift = int(rng.integers(low, high)) * (1 if rng.random() < 0.5 else -1)
        if all(end + shift <= a or start + shift >= b for a, b in busy):
            return start + shift, end + shift
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True, help="a finished demo run folder")
    parser.add_argument("--per-group", type=int, default=200, help="elements per kind and chromosome set")
    parser.add_argument("--flank", type=int, default=128, help="bases of context on each side of the two spans")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    model = load_checkpoint(args.run / "pretrain" / "model").eval()
    tokenizer = read_tokenizer(args.run / "pretrain" / "model")
    genome = pyfaidx.Fasta(str(args.run / "data" / "toy_hg19.fa"))
    elements = [e for e in read_bed(args.run / "data" / "elements.bed") if not e[3].startswith("pair")]
    busy = defaultdict(list)
    for chrom, start, end, _ in [*elements, *read_bed(args.run / "data" / "cpg_islands.bed")]:
        busy[chrom].append((start, end))
    rng = np.random.default_rng(args.seed)
    pairs = defaultdict(list)
    for chrom, start, end, name in elements:
        group = (name.split(":")[0], "held out" if chrom in HELD_OUT else "pretraining")
        if len(pairs[group]) >= args.per_group:
            continue
        background = background_span(rng, start, end, busy[chrom])
        if background is None:
            continue
        low = min(start, background[0]) - args.flank
        high = max(end, background[1]) + args.flank
        if low < 0 or high > len(genome[chrom]):
            continue
        window = str(genome[chrom][low:high]).upper()
        if "N" in window:
            continue
        pairs[group].append([masked_bits_per_bp(model, tokenizer, window, (a - low, b - low))
                             for a, b in ((start, end), background)])
    print("| element | chromosomes | pairs | element bits/bp | background bits/bp | element below background |")
    print("|---|---|---|---|---|---|")
    for (kind, chromosomes), values in sorted(pairs.items()):
        v = np.asarray(values)
        print(f"| {kind} | {chromosomes} | {len(v)} | {v[:, 0].mean():.3f} | {v[:, 1].mean():.3f} | "
              f"{np.mean(v[:, 0] < v[:, 1]):.2f} |")


if __name__ == "__main__":
    main()
