"""`predict_to_files` and `dnabird predict`: tracks of tiles equal the per-base average of the tiles' rows
computed here, read back with pyBigWig and from the bedGraph; a run killed with SIGKILL and rerun writes the
bytes of an uninterrupted run; an output path equal to an input is refused."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyBigWig
import pytest

from dnabird.cli import main
from dnabird.errors import OutputPathError
from dnabird.prediction import predict_to_files
from tests.stalling import kill_once_stalled

ROOT = Path(__file__).resolve().parents[2]
STANDIN = Path(__file__).with_name("predict_standin.py")


def test_tracks_hold_the_overlapping_tiles_averaged_per_base(embedded_default, tmp_path):
    out = tmp_path / "tiles.parquet"
    record = predict_to_files(embedded_default.chromatin / "model", out, genome=embedded_default.fasta, step=350,
                              tiles=["chr2:100001-103700", "chrM:14201-16571"], device="cpu", progress=False)
    table = pd.read_parquet(out)
    outputs = record["outputs"]
    assert record["scale"] == "probability" and len(outputs) == 17
    assert set(table["chrom"]) == {"chr2", "chrM"} and (table["end"] - table["start"] == 1000).all()
    span = table[table["chrom"] == "chr2"]
    assert span["start"].min() == 100000 and span["end"].max() == 103700      # the last tile ends at the span's end
    assert table[table["chrom"] == "chrM"]["end"].max() == 16571        # a span up to the contig's end
    folder = out.with_name("tiles.parquet.tracks")
    for k in (0, 9, 16):
        files = record["files"]["tracks"]["by_output"][outputs[k]]
        assert files["bigwig"].endswith(".probability.bw") and files["bedgraph"].endswith(".probability.bedGraph")
        with pyBigWig.open(str(folder / files["bigwig"])) as bigwig:
            for chrom, length in (("chr2", 640000), ("chrM", 16571)):
                rows = table[table["chrom"] == chrom]
                total, count = np.zeros(length), np.zeros(length)
                for start, end, value in zip(rows["start"], rows["end"], rows[outputs[k]], strict=True):
                    total[start:end] += value
                    count[start:end] += 1
                covered = count > 0
                first, last = np.flatnonzero(covered)[[0, -1]]
                read = np.array(bigwig.values(chrom, 0, length), dtype=np.float64)
                np.testing.assert_allclose(read[covered], total[covered] / count[covered], rtol=1e-6, atol=1e-7)
                assert np.isnan(read[~covered]).all() and (first, last) == (rows["start"].min(), rows["end"].max() - 1)
        graph = pd.read_csv(folder / files["bedgraph"], sep="\t", header=None, names=["chrom", "start", "end", "v"])
        chr2 = graph[graph["chrom"] == "chr2"]
        for start, end, value in zip(chr2["start"], chr2["end"], chr2["v"], strict=True):
            rows = table[(table["chrom"] == "chr2") & (table["start"] <= start) & (table["end"] >= end)]
            assert value == pytest.approx(rows[outputs[k]].mean(), rel=1e-6)


def _files(out: Path) -> dict[str, bytes]:
    """Every file a run left beside `out` (its name replaced by OUT), by name."""
    return {p.name.replace(out.name, "OUT"): p.read_bytes() for p in out.parent.iterdir()
            if p.name.startswith(out.name)}


def test_sigkill_after_the_first_chunk_then_rerun_gives_the_uninterrupted_bytes(embedded_default, tmp_path):
    regions = tmp_path / "regions.bed"
    regions.write_text("".join(f"chr{c}\t{s}\t{s + 200}\tr{n}\t0\t{'+-'[n % 2]}\n"
                               for n, (c, s) in enumerate([(1, 100000), (2, 50000), (3, 70000), (9, 1000),
                                                           (1, 759950), (7, 80000), ("Q", 5)])))
    args = ["--model", str(embedded_default.promoter / "model"), "--regions", str(regions), "--genome",
            str(embedded_default.fasta), "--device", "cpu", "--chunk-rows", "2", "--batch-size", "2"]
    assert main(["-q", "predict", *args, "--out", str(tmp_path / "a" / "p.tsv")]) == 0
    out = tmp_path / "b" / "p.tsv"
    kill_once_stalled(STANDIN, ["-q", "predict", *args, "--out", str(out)], tmp_path / "blocked")
    assert sorted(p.name for p in out.with_name("p.tsv.partial").iterdir()) == ["chunk_000000.h5", "run.json"]
    assert main(["-q", "predict", *args, "--out", str(out)]) == 0
    assert _files(out) == _files(tmp_path / "a" / "p.tsv")
    assert set(_files(out)) == {"OUT", "OUT.unpredicted.tsv", "OUT.json"}
    record = json.loads(out.with_name("p.tsv.json").read_text())
    assert record["summary"]["predicted"] == 5 and record["summary"]["unpredicted_by_reason"] == {
        "outside the chromosome": 1, "unknown chromosome": 1}


def test_an_output_path_equal_to_an_input_is_refused(embedded_default, tmp_path, capsys):
    regions = tmp_path / "regions.tsv"
    regions.write_text("chrom\tstart\tend\nchr1\t100000\t100100\n")
    with pytest.raises(OutputPathError, match="overwrite an input"):
        predict_to_files(embedded_default.chromatin / "model", regions, regions=regions,
                         genome=embedded_default.fasta, device="cpu", progress=False)
    assert main(["predict", "--model", str(embedded_default.chromatin / "model"), "--tiles", "--region", "chr1",
                 "--genome", str(embedded_default.fasta), "--out", str(embedded_default.fasta)]) == 1
    assert "overwrite an input" in capsys.readouterr().err
    assert regions.read_text() == "chrom\tstart\tend\nchr1\t100000\t100100\n"


@pytest.mark.slow
def test_two_processes_predict_disjoint_tiles_and_merge_in_input_order(embedded_default, tmp_path):
    from dnabird.prediction import predict

    head, span = embedded_default.chromatin / "model", "chrM:12001-16571"
    single = predict(head, tiles=[span], genome=embedded_default.fasta, step=400, device="cpu", progress=False)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "dnabird",
           "-q", "predict", "--model", str(head), "--tiles", "--region", span, "--step", "400", "--genome",
           str(embedded_default.fasta), "--out", str(tmp_path / "t.tsv"), "--device", "cpu", "--chunk-rows", "3"]
    result = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    merged = pd.read_csv(tmp_path / "t.tsv", sep="\t")
    assert merged["start"].tolist() == single.rows["start"].tolist() and len(merged) == 10
    np.testing.assert_allclose(merged[list(single.outputs)].to_numpy(), single.values, rtol=0, atol=1e-5)
    assert (tmp_path / "t.tsv.tracks").is_dir() and not (tmp_path / "t.tsv.partial").exists()
