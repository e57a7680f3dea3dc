"""score_variants with real (tiny, random) models saved as checkpoints: a SequenceClassifier with its
task.json (method "head") against a direct forward pass, reproducibility across runs and batch sizes
with sparse attention, and the output files read back with independent readers (pandas, h5py, pysam)."""

import gzip

import h5py
import numpy as np
import pandas as pd
import pysam
import pytest
import torch

from dnabird.model.config import tiny
from dnabird.model.heads import PretrainingModel
from dnabird.variants import score_variants
from tests.variants.conftest import LENGTH, WINDOW


def test_head_scores_match_a_direct_forward_pass(classifier_dir, tokenizer, genome_and_vcf):
    genome, vcf, chroms = genome_and_vcf
    scores = score_variants(classifier_dir, genome, vcf, progress=False, device="cpu")
    assert scores.settings["method"] == "head" and scores.outputs == ("K562|DNase|None", "GM12878|CTCF|None")
    assert scores.groups == ("DNase", "TF") and len(scores.units) == 14
    assert scores.skipped["reason"].tolist() == ["symbolic ALT"]
    first, centre = scores.units["pos"] - 1, WINDOW // 2
    assert (scores.units["pad_left"] == (first - centre < 0)).all() and scores.units["pad_left"].any()
    assert (scores.units["pad_right"] == (first + centre + 1 > 900)).all() and scores.units["pad_right"].any()
    from dnabird.model.checkpoint import load_checkpoint

    model = load_checkpoint(classifier_dir).eval()
    complement = str.maketrans("ACGT", "TGCA")
    for row in (0, 5, 12, 13):  # 0 and 12: N-padded at the chromosome start / end
        unit = scores.units.iloc[row]
        seq = "N" * WINDOW + chroms[unit.chrom] + "N" * WINDOW  # off-chromosome bases read as N
        first = unit.pos - 1 + WINDOW
        if len(unit.alt) == 1:
            start = first - WINDOW // 2
            ref = seq[start:start + WINDOW]
            alt = seq[start:first] + unit.alt + seq[first + 1:start + WINDOW]
        else:  # the insertion X>XT: REF centred on X, ALT on the allele's base 2 // 2 = 1 (T)
            start = first - WINDOW // 2
            ref = seq[start:start + WINDOW]
            alt = seq[start + 1:first] + unit.alt + seq[first + 1:first + 1 + WINDOW // 2]
        windows = [ref, alt, ref.translate(complement)[::-1], alt.translate(complement)[::-1]]
        ids, mask = tokenizer.encode_batch(windows, block_size=64, length=LENGTH)
        with torch.no_grad():
            logits = model(torch.from_numpy(ids), torch.from_numpy(mask)).logits.double()
        probs = torch.sigmoid(logits)
        assert scores.ref[row] == pytest.approx(((probs[0] + probs[2]) / 2).numpy(), abs=1e-6)
        assert scores.alt[row] == pytest.approx(((probs[1] + probs[3]) / 2).numpy(), abs=1e-6)
        expected = ((logits[1] - logits[0]) + (logits[3] - logits[2])) / 2
        assert scores.logit_diff[row] == pytest.approx(expected.numpy(), abs=1e-5)


def test_same_scores_across_runs_and_batch_sizes(tokenizer, genome_and_vcf):
    genome, vcf, _ = genome_and_vcf
    config = tiny(vocab_size=tokenizer.vocab_size, dropout=0.0, attention_dropout=0.0, num_layers=1)
    model = PretrainingModel(config, seed=2)
    runs = [score_variants(model, genome, vcf, tokenizer=tokenizer, window_bp=WINDOW, eval_length=LENGTH,
                           batch_size=size, progress=False, rc="forward") for size in (1, 7, 7)]
    assert np.array_equal(runs[1].ref, runs[2].ref) and np.array_equal(runs[1].alt, runs[2].alt)
    print(np.abs(runs[0].ref - runs[1].ref).max(), np.abs(runs[0].alt - runs[1].alt).max())
    np.testing.assert_allclose(runs[0].ref, runs[1].ref, rtol=0, atol=1e-5)
    np.testing.assert_allclose(runs[0].alt, runs[1].alt, rtol=0, atol=1e-5)
    assert not model.training


def test_tsv_hdf5_and_annotated_vcf_read_back(classifier_dir, genome_and_vcf, tmp_path):
    genome, vcf, _ = genome_and_vcf
    scores = score_variants(classifier_dir, genome, vcf, progress=False, rc="forward")
    scores.to_tsv(tmp_path / "s.tsv")
    table = pd.read_csv(tmp_path / "s.tsv", sep="\t")
    assert len(table) == 14 * 2 and list(table["output"][:2]) == list(scores.outputs)
    np.testing.assert_allclose(table["diff"].to_numpy(), scores.diff.reshape(-1), rtol=1e-12)
    assert (table["abs_diff"] == table["diff"].abs()).all() and table["strand"].eq("+").all()
    scores.to_hdf5(tmp_path / "s.h5")
    with h5py.File(tmp_path / "s.h5") as f:
        assert f["diff"].shape == (14, 2) and list(f["outputs"].asstr()[:]) == list(scores.outputs)
        np.testing.assert_allclose(f["logit_diff"][:], scores.logit_diff, rtol=1e-6)
        assert list(f["windows/pos"][:]) == list(scores.units["pos"]) and list(f["skipped/reason"].asstr()) == [
            "symbolic ALT"]
    for name in ("a.vcf", "a.vcf.gz"):
        scores.to_vcf(tmp_path / name, vcf)
        reader = pysam.VariantFile(str(tmp_path / name))
        outputs = [dict(r.items()) for r in reader.header.records if r.key == "DNABIRD_OUTPUT"]
        assert [o["Name"].strip('"') for o in outputs] == list(scores.outputs)
        records = list(reader)
        assert [r.id for r in records] == [f"v{n}" for n in range(13)] + ["ins"]
        for r, row in zip(records[:13], range(13), strict=True):
            assert r.info["DP"] == row and r.info["DNABIRD_WINDOWS"] == ("1",)
            assert r.info["DNABIRD_DIFF"] == pytest.approx(scores.diff[row], abs=1e-5)
            assert r.info["DNABIRD_LOGIT_DIFF"] == pytest.approx(scores.logit_diff[row], abs=1e-5)
        assert records[13].info["DNABIRD_WINDOWS"] == ("1",)  # ALT 2 (<DEL>) was not scored
    assert gzip.open(tmp_path / "a.vcf.gz").read().decode() == (tmp_path / "a.vcf").read_text()
