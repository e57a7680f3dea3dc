"""Shared passes (`dnabird.variants.marginals`) grouped from positions alone: the same variants get the same
default `mlm_llr` scores whatever their order in the VCF, the chunk size, the number of torchrun processes
or the strand of the FASTA."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dnabird.cli import main
from dnabird.genome.reference import Genome, reverse_complement
from tests.variants.conftest import write_fasta

ROOT = Path(__file__).resolve().parents[2]
SLICE = (100_000, 102_501)  # of the toy chr1: one contig of 2,501 bp
EVERY = 47  # bp between SNVs: several per grid cell, closer than the pass spacing (so dealt into several passes)
COMPLEMENT = str.maketrans("ACGT", "TGCA")
SETTINGS = ["--window-bp", "251", "--eval-length", "128", "--device", "cpu", "--batch-size", "8"]


def write_vcf(path: Path, rows: list[tuple[int, str, str]]) -> Path:
    lines = [f"chrA\t{pos}\tv{pos}\t{ref}\t{alt}\t.\tPASS\t." for pos, ref, alt in rows]
    path.write_text("##fileformat=VCFv4.2\n##contig=<ID=chrA>\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
                    + "\n".join(lines) + "\n")
    return path


def inputs(embedded_default, folder: Path):
    """The slice as its own genome, its reverse complement, and SNVs on both (the same SNVs, mirrored)."""
    sequence = Genome(embedded_default.fasta).fetch("chr1", *SLICE).sequence.upper()
    length = len(sequence)
    snvs = [(pos, sequence[pos - 1], "ACGT"[("ACGT".index(sequence[pos - 1]) + 1) % 4])
            for pos in range(200, length - 200, EVERY) if sequence[pos - 1] in "ACGT"]
    mirrored = [(length + 1 - pos, ref.translate(COMPLEMENT), alt.translate(COMPLEMENT)) for pos, ref, alt in snvs]
    return (write_fasta(folder / "g.fa", {"chrA": sequence}), write_fasta(folder / "rc.fa",
                                                                            {"chrA": reverse_complement(sequence)}),
            snvs, mirrored, length)


def llr(table: Path) -> pd.Series:
    scores = pd.read_csv(table, sep="\t")
    scores = scores[scores["output"] == "llr"]
    shared = scores["window_start"] != scores["pos"] - 1 - 251 // 2  # a shared window is centred between members
    return pd.Series(scores["diff"].to_numpy(), index=scores["pos"].to_numpy()).sort_index().rename(shared.sum())


def score(embedded_default, genome, vcf, out, *extra) -> pd.Series:
    assert main(["-q", "score", "--model", str(embedded_default.checkpoint), "--genome", str(genome), "--vcf",
                 str(vcf), "--out", str(out), *SETTINGS, *extra]) == 0
    return llr(out)


def test_shared_scores_do_not_depend_on_order_chunking_or_strand(embedded_default, tmp_path):
    genome, rc_genome, snvs, mirrored, length = inputs(embedded_default, tmp_path)
    rng = np.random.default_rng(0)
    reference = score(embedded_default, genome, write_vcf(tmp_path / "v.vcf", snvs), tmp_path / "s.tsv")
    assert len(reference) == len(snvs) and reference.name > len(snvs) // 3  # passes shared (chunks of 1000)
    shuffled = write_vcf(tmp_path / "shuffled.vcf", [snvs[i] for i in rng.permutation(len(snvs))])
    runs = {"shuffled": score(embedded_default, genome, shuffled, tmp_path / "shuffled.tsv"),
            "chunks of 7": score(embedded_default, genome, shuffled, tmp_path / "c7.tsv", "--chunk-records", "7")}
    reverse = score(embedded_default, rc_genome, write_vcf(tmp_path / "rc.vcf", mirrored[::-1]), tmp_path / "r.tsv")
    runs["reverse-complemented genome"] = pd.Series(reverse.to_numpy(), index=length + 1 - reverse.index).sort_index()
    for name, scores in runs.items():  # equal to float32 rounding (a row's batch mates move a log-probability
        # near -8 by up to an ulp, 9.5e-7, as they move the exact method's)
        assert (scores.index == reference.index).all(), name
        np.testing.assert_allclose(scores.to_numpy(), reference.to_numpy(), rtol=0, atol=2e-6, err_msg=name)


@pytest.mark.slow
def test_two_processes_give_the_shared_scores_of_one(embedded_default, tmp_path):
    genome, _, snvs, _, _ = inputs(embedded_default, tmp_path)
    vcf = write_vcf(tmp_path / "v.vcf", snvs)
    single = score(embedded_default, genome, vcf, tmp_path / "one.tsv")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "dnabird",
           "-q", "score", "--model", str(embedded_default.checkpoint), "--genome", str(genome), "--vcf", str(vcf),
           "--out", str(tmp_path / "two.tsv"), *SETTINGS]
    result = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    two = llr(tmp_path / "two.tsv")
    assert (two.index == single.index).all() and single.name > len(snvs) // 3
    np.testing.assert_allclose(two.to_numpy(), single.to_numpy(), rtol=0, atol=1e-5)
