"""Peak memory of `dnabird score` against the number of VCF records: the chunked, resumable run
(`score_variants_to_files`, what the command runs) beside the whole-table route (`score_variants` then
`to_tsv`, the command's path before chunking), each in a fresh process whose peak RSS and CPU time the
kernel reports (`os.wait4`; CPU time is the fairer clock on a shared machine). Random SNVs over the genome
(REF read from it, in genome order), scored with the given model; the model settings default to a cheap
short window, since memory, not the model, is measured.

    python benchmarks/score_memory.py --run runs/demo                             # after make demo
    python benchmarks/score_memory.py --run RUN --records 20000 50000 100000 200000 --whole 20000 50000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dnabird.genome.reference import Genome

WHOLE_TABLE = """
import sys
from dnabird.variants import score_variants
from dnabird.variants.writers import write_skipped
model, genome, vcf, out, window, length, batch = sys.argv[1:]
scores = score_variants(model, genome, vcf, method="mlm_llr", window_bp=int(window), eval_length=int(length),
                        rc="forward", batch_size=int(batch), device="cpu", progress=False)
scores.to_tsv(out)
write_skipped(scores, out + ".unscored.tsv")
"""


def write_vcf(genome: Genome, count: int, path: Path, seed: int = 0) -> None:
    """`count` SNVs at random non-N positions of `genome`, in genome order, ALT the next base."""
    rng = np.random.default_rng(seed)
    names, sizes = zip(*genome.lengths.items(), strict=True)
    ends = np.cumsum(sizes)
    at = np.sort(rng.integers(ends[-1], size=count))
    with path.open("w") as out:
        out.write("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n")
        for n, position in enumerate(at):
            index = int(np.searchsorted(ends, position, side="right"))
            offset = int(position - (ends[index] - sizes[index]))
            ref = genome.fetch(names[index], offset, offset + 1).sequence.upper()
            ref = ref if ref in "ACGT" else "A"   # an N position: a REF mismatch, counted as skipped
            out.write(f"{names[index]}\t{offset + 1}\tv{n}\t{ref}\t{'ACGT'[('ACGT'.index(ref) + 1) % 4]}\t.\t.\t.\n")


def peak_rss(command: list[str]) -> tuple[float, float, float]:
    """(peak RSS in MiB, wall seconds, CPU seconds) of `command` run to completion in a child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{command[:4]} failed: {proc.stderr.read().decode()[-2000:]}")
    return usage.ru_maxrss / 1024, time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, required=True, help="a demo run folder (data/, pretrain/model)")
    parser.add_argument("--records", type=int, nargs="+", default=[20_000, 50_000, 100_000, 200_000])
    parser.add_argument("--whole", type=int, nargs="*", default=[20_000, 50_000],
                        help="record counts to also run the whole-table route at")
    parser.add_argument("--window-bp", type=int, default=11)
    parser.add_argument("--eval-length", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    model, fasta = args.run / "pretrain" / "model", args.run / "data" / "toy_hg19.fa"
    genome = Genome(fasta)
    settings = [str(args.window_bp), str(args.eval_length), str(args.batch_size)]
    print(f"model {model}, mlm_llr forward, window {args.window_bp} bp, eval length {args.eval_length}")
    print(f"{'records':>8}  {'route':<12} {'peak RSS MiB':>12} {'wall s':>8} {'CPU s':>8} {'records/CPU s':>13}")
    with tempfile.TemporaryDirectory() as folder:
        for count in sorted(set(args.records) | set(args.whole)):
            vcf = Path(folder) / f"{count}.vcf"
            write_vcf(genome, count, vcf)
            routes = {"chunked": [sys.executable, "-m", "dnabird", "-q", "score", "--model", str(model), "--genome",
                                  str(fasta), "--vcf", str(vcf), "--out", str(Path(folder) / f"c{count}.tsv"),
                                  "--method", "mlm_llr", "--rc", "forward", "--window-bp", settings[0],
                                  "--eval-length", settings[1], "--batch-size", settings[2], "--device", "cpu"],
                      "whole-table": [sys.executable, "-c", WHOLE_TABLE, str(model), str(fasta), str(vcf),
                                      str(Path(folder) / f"w{count}.tsv"), *settings]}
            for route, command in routes.items():
                if count in (args.records if route == "chunked" else args.whole):
                    rss, wall, cpu = peak_rss(command)
                    print(f"{count:>8}  {route:<12} {rss:>12.0f} {wall:>8.0f} {cpu:>8.0f} {count / cpu:>13.0f}",
                          flush=True)


if __name__ == "__main__":
    main()
