"""The `predict` stage: its tracks hold `dnabird.predict`'s outputs on the same tiles averaged per base by hand,
report.md shows its plot, a rerun skips it, and a plot line naming no output fails before any work."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyBigWig
import pytest

from dnabird import predict
from dnabird.errors import ParameterError
from dnabird.pipeline import build_pipeline, run_pipeline


def by_hand(table: pd.DataFrame, output: str, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Per base of a contig: the mean of the tiles covering it, and whether any does."""
    total, count = np.zeros(length), np.zeros(length)
    for start, end, value in zip(table["start"], table["end"], table[output], strict=True):
        total[start:end] += value
        count[start:end] += 1
    covered = count > 0
    return np.divide(total, count, out=np.full(length, np.nan), where=covered), covered


def test_the_stages_tracks_average_the_heads_tiles_per_base_and_the_report_shows_its_plot(embedded_default):
    folder = embedded_default.predict
    report = json.loads((folder / "report.json").read_text())
    assert report["model"] == "chromatin/model" and report["genome"] == "data/toy_hg19.fa"  # null: earlier stages'
    direct = predict(embedded_default.chromatin / "model", tiles=report["regions"], step=report["step"],
                     genome=embedded_default.fasta, device="cpu", progress=False).table()
    table = pd.read_csv(folder / report["files"]["table"], sep="\t")
    assert report["summary"]["predicted"] == len(direct) == len(table) > 1 and report["step"] == 500
    outputs = [c for c in direct.columns if "|" in c]
    assert len(outputs) == report["outputs"] == 17
    assert table[["chrom", "start", "end"]].values.tolist() == direct[["chrom", "start", "end"]].values.tolist()
    np.testing.assert_allclose(table[outputs], direct[outputs], rtol=1e-5, atol=1e-6)
    tracks = folder / report["files"]["tracks"]
    length = int(direct["end"].max()) + 1000  # past the last tile: bases no tile covers
    for output in outputs:
        expected, covered = by_hand(direct, output, length)
        with pyBigWig.open(str(tracks / f"{output.replace('|', '_')}.probability.bw")) as bigwig:
            assert bigwig.chroms("chr1") == 760000
            read = np.array(bigwig.values("chr1", 0, length), dtype=np.float64)
        np.testing.assert_allclose(read[covered], expected[covered], rtol=1e-5, atol=1e-6)
        assert np.isnan(read[~covered]).all()
    assert set(report["plot"]["lines"]) == {"DNase (median of 3)", "TF (median of 10)", "HM (median of 4)"}
    assert (folder / "tracks.png").stat().st_size > 1000
    text = (embedded_default.root / "report.md").read_text()
    assert "![tracks](predict/tracks.png)" in text
    row = next(line for line in text.splitlines() if line.startswith("| predict |"))
    assert f"{report['summary']['predicted']} tiles of {report['regions'][0]} every 500 bp" in row


def test_a_rerun_skips_the_stage_and_plot_lines_name_outputs_or_groups(embedded_default, tmp_path):
    model = embedded_default.chromatin / "model"
    section = {"model": str(model), "genome": str(embedded_default.fasta), "region": ["chr2:200001-201500"],
               "step": 250, "plot": ["K562|CTCF|None", "DNase"], "format": "parquet"}
    pipeline = build_pipeline({"out_dir": str(tmp_path / "run"), "predict": section}, Path("t.yaml"))
    assert run_pipeline(pipeline)["stages"] == {"predict": "ran"}
    assert run_pipeline(pipeline)["stages"] == {"predict": "skipped"}
    folder = tmp_path / "run" / "predict"
    report = json.loads((folder / "report.json").read_text())
    assert report["plot"]["lines"] == {"K562|CTCF|None": ["K562|CTCF|None"],
                                       "DNase (median of 3)": ["GM12878|DNase|None", "K562|DNase|None",
                                                               "HepG2|DNase|None"]}
    table = pd.read_parquet(folder / "tiles.parquet")
    assert table["start"].tolist() == [200000, 200250, 200500] and table["end"].max() == 201500
    direct = predict(model, tiles=["chr2:200001-201500"], step=250, genome=embedded_default.fasta, device="cpu",
                     progress=False).table()
    expected, covered = by_hand(direct, "K562|CTCF|None", 202000)
    graph = pd.read_csv(folder / "tiles.parquet.tracks" / "K562_CTCF_None.probability.bedGraph", sep="\t",
                        header=None, names=["chrom", "start", "end", "value"])
    for start, end, value in zip(graph["start"], graph["end"], graph["value"], strict=True):
        assert covered[start:end].all() and value == pytest.approx(expected[start], rel=1e-5)
        assert np.ptp(expected[start:end]) < 1e-12
    section["plot"] = ["K562|CTCF", "TF"]
    with pytest.raises(ParameterError, match=r"predict\.plot.*K562\|CTCF'.*DNase, TF, HM"):
        run_pipeline(build_pipeline({"out_dir": str(tmp_path / "bad"), "predict": section}, Path("t.yaml")))
    assert not (tmp_path / "bad" / "predict" / "tiles.parquet").exists()
