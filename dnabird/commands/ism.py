"""`dnabird ism`: in-silico saturation mutagenesis of a region (every SNV), with heat maps."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from dnabird.commands import add_command, options
from dnabird.commands.score import MODEL_OPTIONS, add_model_options
from dnabird.errors import ParameterError


def run(args: argparse.Namespace) -> None:
    """saturation mutagenesis of a region: every SNV, with heat maps

    Score every SNV of a region (at most the window long) in one window centred on it, with a fine-tuned head or
    zero-shot mlm_llr; writes the position x base effects (ism.h5, ism.tsv) and heat maps."""
    from dnabird.io import check_outputs
    from dnabird.variants import saturation_mutagenesis
    from dnabird.variants.score import scored_outputs

    out = Path(args.out)
    outputs = scored_outputs(args.model, args.method)
    plots = args.plot or outputs[:1]
    for output in plots:
        if output not in outputs:
            raise ParameterError("--plot", output, f"one of the model's outputs {outputs[:10]}")
    check_outputs([out / name for name in ("ism.h5", "ism.tsv", *map(plot_name, plots))],
                  folders=[out], inputs=[args.genome, f"{args.genome}.fai"])
    result = saturation_mutagenesis(args.model, args.genome, args.region, **options(args, *MODEL_OPTIONS))
    out.mkdir(parents=True, exist_ok=True)
    result.to_hdf5(out / "ism.h5")
    result.scores.to_tsv(out / "ism.tsv")
    for output in plots:
        result.plot(out / plot_name(output), output=output)
    print(f"wrote {out}: {len(result.scores.units)} SNVs of {result.chrom}:{result.start + 1}-{result.end}")


def plot_name(output: str) -> str:
    """The heat map file of one output."""
    return f"ism_{re.sub(r'[^A-Za-z0-9_.-]+', '_', output)}.png"


def register(subparsers) -> None:
    parser = add_command(subparsers, "ism", run)
    add_model_options(parser)
    parser.add_argument("--region", required=True, help="CHROM:START-END, 1-based inclusive (e.g. chr1:1001-1100)")
    parser.add_argument("--out", required=True, help="output folder: ism.h5, ism.tsv, ism_<output>.png")
    parser.add_argument("--plot", action="append", metavar="OUTPUT",
                        help="output to draw (repeatable; default the first)")
