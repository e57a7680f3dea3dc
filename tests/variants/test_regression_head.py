"""A regression head scores variants in its targets' own scale: diff = inverse(output on ALT) − inverse(output on
REF), each averaged over both strands, checked against the model called directly on hand-tokenized windows;
`ism`, background quantiles, `benchmark-variants` and `embed` read such a head too."""

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import roc_auc_score

from dnabird.genome.reference import reverse_complement
from dnabird.model.checkpoint import load_checkpoint, save_checkpoint
from dnabird.model.config import tiny
from dnabird.model.heads import SequenceClassifier
from dnabird.model.task_spec import TaskSpec
from dnabird.variants import Variant, embed, saturation_mutagenesis, score_background, score_variants
from dnabird.variants.benchmark import benchmark_variants
from tests.variants.conftest import LENGTH, WINDOW

MEAN, STD = (1.0, -0.5), (2.0, 0.5)


@pytest.fixture(scope="module")
def regression_dir(tokenizer, tmp_path_factory):
    """A tiny random regression head (two targets, log1p then standardised) saved as a fine-tuned head."""
    config = tiny(vocab_size=tokenizer.vocab_size, dropout=0.0, attention_dropout=0.0, num_layers=1)
    task = TaskSpec(task="labelled", problem="regression", labels=["expression", "accessibility"],
                    eval_length=LENGTH, window_length=WINDOW, anchor="centre", strand_rule="both",
                    tokenizer_hash=tokenizer.hash, target_transform={"log1p": True, "mean": MEAN, "std": STD})
    model = SequenceClassifier(config, 2, problem="regression", seed=6)
    return save_checkpoint(model, tmp_path_factory.mktemp("ckpt") / "regression", tokenizer_files=(tokenizer.path,),
                           task=task)


def by_hand(model, tokenizer, window: str) -> np.ndarray:
    """The head's outputs on `[CLS] window [SEP]` padded to LENGTH, in the targets' scale (log1p and
    standardisation undone)."""
    ids = [tokenizer.cls_id, *tokenizer.encode(window), tokenizer.sep_id]
    mask = [1] * len(ids) + [0] * (LENGTH - len(ids))
    ids = ids + [tokenizer.pad_id] * (LENGTH - len(ids))
    with torch.no_grad():
        out = model(torch.tensor([ids]), torch.tensor([mask])).logits[0].double().numpy()
    return np.expm1(out * np.array(STD) + np.array(MEAN))


def test_score_is_the_heads_alt_minus_ref_output_in_the_targets_scale(regression_dir, tokenizer, genome_and_vcf):
    genome, _, chroms = genome_and_vcf
    half = WINDOW // 2
    variants = [Variant("chr1", pos, chroms["chr1"][pos - 1], "ACGT"[("ACGT".index(chroms["chr1"][pos - 1]) + 2) % 4])
                for pos in (300, 451, 600)]
    scores = score_variants(regression_dir, genome, variants, device="cpu", progress=False)
    assert scores.outputs == ("expression", "accessibility") and len(scores.units) == 3
    assert np.isnan(scores.logit_diff).all()
    model = load_checkpoint(regression_dir).eval()
    for n, v in enumerate(variants):
        ref = chroms["chr1"][v.pos - 1 - half:v.pos + half]
        alt = ref[:half] + v.alt + ref[half + 1:]
        expected = {name: np.mean([by_hand(model, tokenizer, w) for w in (seq, reverse_complement(seq))], axis=0)
                    for name, seq in (("ref", ref), ("alt", alt))}
        np.testing.assert_allclose(scores.ref[n], expected["ref"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(scores.diff[n], expected["alt"] - expected["ref"], rtol=1e-4, atol=1e-6)
    # ism of the same SNV, background quantiles, the benchmark's head row and embed read the head alike
    ism = saturation_mutagenesis(regression_dir, genome, "chr1:451-451", device="cpu", progress=False)
    np.testing.assert_allclose(ism.matrix("diff")[0, "ACGT".index(variants[1].alt)], scores.diff[1], atol=1e-6)
    background = score_background(regression_dir, genome, 5, device="cpu", progress=False)
    calibrated = scores.calibrate(background)
    assert set(calibrated.quantiles) == {"diff", "abs_diff"}
    assert ((calibrated.quantiles["diff"] >= 0) & (calibrated.quantiles["diff"] <= 1)).all()
    assert embed(regression_dir, [ref], progress=False, device="cpu").shape == (1, model.config.hidden_size)


def test_benchmark_ranks_a_regression_head_by_its_largest_change(regression_dir, genome_and_vcf, tmp_path):
    genome, _, chroms = genome_and_vcf
    rows = [("chr1", pos, chroms["chr1"][pos - 1], "ACGT"[("ACGT".index(chroms["chr1"][pos - 1]) + 1) % 4], n % 2)
            for n, pos in enumerate(range(200, 700, 50))]
    labels = pd.DataFrame(rows, columns=["chrom", "pos", "ref", "alt", "label"])
    labels.to_csv(tmp_path / "labels.tsv", sep="\t", index=False)
    report = benchmark_variants(regression_dir, genome, tmp_path / "labels.tsv", methods=["head"], resamples=10,
                                device="cpu", progress=False)
    scores = score_variants(regression_dir, genome, [Variant(*row[:4]) for row in rows], device="cpu", progress=False)
    assert report["methods"]["head"]["score"] == "max |Δ|"
    assert report["methods"]["head"]["auroc"] == pytest.approx(
        roc_auc_score(labels["label"], np.abs(scores.diff).max(axis=1)), abs=1e-12)
