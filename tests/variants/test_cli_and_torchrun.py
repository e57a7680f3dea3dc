"""`dnabird score | ism | embed` end to end, and `dnabird score` under torchrun (2 gloo processes, each
scoring half of the records) against one process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pysam
import pytest

from dnabird.cli import main
from dnabird.variants import score_variants
from dnabird.variants.background import score_background

ROOT = Path(__file__).resolve().parents[2]


def test_two_processes_score_disjoint_records_and_merge_in_input_order(classifier_dir, genome_and_vcf, tmp_path):
    genome, vcf, _ = genome_and_vcf
    single = score_variants(classifier_dir, genome, vcf, progress=False, device="cpu").table()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "dnabird",
           "-q", "score", "--model", str(classifier_dir), "--genome", str(genome), "--vcf", str(vcf),
           "--out", str(tmp_path / "s.tsv"), "--device", "cpu", "--batch-size", "3",
           "--chunk-records", "4", "--background", "6"]  # chunks of records, each split over the ranks
    result = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    merged = pd.read_csv(tmp_path / "s.tsv", sep="\t")
    assert merged["record"].tolist() == single["record"].tolist()  # input order, both ranks' records
    for column in ("id", "alt", "output", "strand"):
        assert merged[column].tolist() == single[column].tolist()
    np.testing.assert_allclose(merged[["ref_score", "alt_score", "logit_diff"]].to_numpy(),
                               single[["ref_score", "alt_score", "logit_diff"]].to_numpy(), rtol=0, atol=1e-5)
    unscored = pd.read_csv(tmp_path / "s.tsv.unscored.tsv", sep="\t")
    assert unscored[["id", "reason"]].values.tolist() == [["ins", "symbolic ALT"]]
    assert json.loads((tmp_path / "s.tsv.json").read_text())["summary"]["scored_alleles"] == 14
    background = score_background(classifier_dir, genome, 6, progress=False, device="cpu").table()
    merged = pd.read_csv(tmp_path / "s.tsv.background.tsv", sep="\t")
    assert merged["pos"].tolist() == background["pos"].tolist()
    np.testing.assert_allclose(merged["diff"], background["diff"], rtol=0, atol=1e-5)
    assert merged.shape == background.shape and not (tmp_path / "s.tsv.partial").exists()


def test_score_ism_and_embed_commands_on_the_embedded_default(embedded_default, tmp_path, capsys):
    vcf = embedded_default.fasta.parent / "variants.vcf"
    common = ["--model", str(embedded_default.checkpoint), "--genome", str(embedded_default.fasta),
              "--window-bp", "250", "--eval-length", "128", "--rc", "forward"]
    assert main(["-q", "score", *common, "--vcf", str(vcf), "--out", str(tmp_path / "toy.vcf.gz")]) == 0
    printed = capsys.readouterr().out
    assert "not scored, REF mismatch: 1" in printed
    records = list(pysam.VariantFile(str(tmp_path / "toy.vcf.gz")))
    truth = pd.read_csv(embedded_default.fasta.parent / "variant_truth.tsv", sep="\t")
    assert [r.id for r in records] == truth["id"].tolist()
    scored = [r for r in records if "DNABIRD_DIFF" in r.info]
    assert all(len(r.info["DNABIRD_DIFF"]) == 2 * len(r.alts) for r in scored)
    # every record is scored or named in the side file: the truth's REF mismatch, and any window whose 250 bp
    # tokenize past --eval-length (low-complexity sequence: few bp per token)
    unscored = pd.read_csv(tmp_path / "toy.vcf.gz.unscored.tsv", sep="\t")
    assert sorted([r.id for r in scored] + unscored["id"].tolist()) == sorted(truth["id"])
    mismatched = unscored.loc[unscored["reason"] == "REF mismatch", "id"].tolist()
    assert mismatched == truth.loc[truth["label"] == "ref_mismatch", "id"].tolist()
    assert set(unscored["reason"]) <= {"REF mismatch", "window exceeds eval_length"} and len(scored) >= 95
    assert main(["-q", "ism", *common, "--region", "chr1:100001-100010", "--out", str(tmp_path / "ism")]) == 0
    with h5py.File(tmp_path / "ism" / "ism.h5") as f:
        assert f["diff"].shape == (10, 4, 2) and np.isfinite(f["diff"][:]).all()
    assert (tmp_path / "ism" / "ism_llr.png").is_file()
    regions = tmp_path / "r.bed"
    regions.write_text("chr1\t100000\t100200\ta\t0\t+\nchr2\t5000\t5200\tb\t0\t-\n")
    assert main(["-q", "embed", "--model", str(embedded_default.checkpoint), "--genome", str(embedded_default.fasta),
                 "--regions", str(regions), "--eval-length", "128", "--out", str(tmp_path / "e.h5")]) == 0
    with h5py.File(tmp_path / "e.h5") as f:
        assert f["embeddings"].shape == (2, 128) and list(f["names"].asstr()) == ["a", "b"]


def test_outputs_and_options_are_checked_before_any_model_call(classifier_dir, genome_and_vcf, tmp_path, capsys,
                                                               monkeypatch):
    from dnabird.inference.predictor import Predictor

    genome, vcf, _ = genome_and_vcf
    monkeypatch.setattr(Predictor, "load", lambda *a, **k: pytest.fail("the model was loaded"))
    model = ["--model", str(classifier_dir), "--genome", str(genome), "--device", "cpu"]
    copy = tmp_path / "calls.vcf"
    copy.write_text(vcf.read_text())
    (tmp_path / "link.vcf").symlink_to(copy)
    assert main(["score", *model, "--vcf", str(copy), "--out", str(tmp_path / "link.vcf")]) == 1
    assert "link.vcf: the output would overwrite an input" in capsys.readouterr().err
    assert copy.read_text() == vcf.read_text()
    (tmp_path / "folder").mkdir()
    assert main(["score", *model, "--vcf", str(vcf), "--out", str(tmp_path / "folder")]) == 1
    assert "folder: is a directory" in capsys.readouterr().err
    assert main(["score", *model, "--vcf", str(vcf), "--out", str(copy / "scores.tsv")]) == 1
    assert f"{copy} is a file, not a folder" in capsys.readouterr().err
    assert main(["ism", *model, "--region", "chr1:100-110", "--out", str(tmp_path / "ism"), "--plot", "nope"]) == 1
    assert "--plot='nope' is invalid: expected one of the model's outputs ['K562|DNase|None'" in capsys.readouterr().err
    assert not (tmp_path / "ism").exists()
    assert main(["ism", *model, "--region", "chr1:100-110", "--out", str(copy)]) == 1
    assert "calls.vcf: is a file; the output must be a folder" in capsys.readouterr().err
    assert main(["embed", "--model", str(classifier_dir), "--sequences", str(genome), "--out", str(genome)]) == 1
    assert "the output would overwrite an input" in capsys.readouterr().err
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text(f"out_dir: {copy / 'run'}\ntokenizer:\n  vocab_size: 64\n")
    assert main(["run", str(pipeline)]) == 1
    assert f"{copy} is a file, not a folder" in capsys.readouterr().err


def test_an_empty_bed_is_an_error_naming_it(classifier_dir, genome_and_vcf, tmp_path, capsys):
    genome, _, _ = genome_and_vcf
    (tmp_path / "empty.bed").write_text("# no regions\n")
    assert main(["embed", "--model", str(classifier_dir), "--genome", str(genome), "--regions",
                 str(tmp_path / "empty.bed"), "--out", str(tmp_path / "e.h5")]) == 1
    assert f"{tmp_path / 'empty.bed'}: the BED file holds no regions" in capsys.readouterr().err
