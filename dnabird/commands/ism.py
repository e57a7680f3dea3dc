"""`dnabird ism`: in-silico saturation mutagenesis of a region (every SNV), with heat maps."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from dnabird.commands.score import add_model_options
from dnabird.errors import ParameterError


def run(args: argparse.Namespace) -> int:
    from dnabird.variants import saturation_mutagenesis

    result = saturation_mutagenesis(args.model, args.genome, args.region, method=args.method, rc=args.rc,
                                    window_bp=args.window_bp, eval_length=args.eval_length, flank_bp=args.flank_bp,
                                    batch_size=args.batch_size, device=args.device)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result.to_hdf5(out / "ism.h5")
    result.scores.to_tsv(out / "ism.tsv")
    for output in args.plot or [result.scores.outputs[0]]:
        if output not in result.scores.outputs:
            raise ParameterError("--plot", output, f"one of the model's outputs {list(result.scores.outputs)[:10]}")
        result.plot(out / f"ism_{re.sub(r'[^A-Za-z0-9_.-]+', '_', output)}.png", output=output)
    print(f"wrote {out}: {len(result.scores.units)} SNVs of {result.chrom}:{result.start + 1}-{result.end}")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("ism", help="saturation mutagenesis of a region: every SNV, with heat maps")
    add_model_options(parser)
    parser.add_argument("--region", required=True, help="CHROM:START-END, 1-based inclusive (e.g. chr1:1001-1100)")
    parser.add_argument("--out", required=True, help="output folder: ism.h5, ism.tsv, ism_<output>.png")
    parser.add_argument("--plot", action="append", metavar="OUTPUT",
                        help="output to draw (repeatable; default the first)")
    parser.set_defaults(func=run)
