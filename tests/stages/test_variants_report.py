"""The `variants` and `report` stages on the embedded default (run by the shared fixture)."""

import csv
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score


def test_variant_stage_counts_and_benchmark_agree_with_the_truth_file(embedded_default):
    folder = embedded_default.variants
    report = json.loads((folder / "report.json").read_text())
    truth = list(csv.DictReader(open(embedded_default.fasta.parent / "variant_truth.tsv"), delimiter="\t"))
    effects = pd.read_csv(folder / "effects.tsv", sep="\t").set_index("id")
    label = {r["id"]: r["label"] for r in truth}
    element = {r["id"]: r["element"] for r in truth}
    # the labels table the stage benchmarks: disruptive 1, neutral 0, the REF-mismatch decoy left out
    labels = pd.read_csv(folder / "labels.tsv", sep="\t").set_index("id")
    assert labels["label"].to_dict() == {i: int(label[i] == "disruptive") for i in label if label[i] != "ref_mismatch"}
    for scorer in ("mlm_llr", "embed_dist"):
        entry = report["scorers"][scorer]["benchmark"][scorer]
        scored = [i for i in effects.index if pd.notna(effects.loc[i, scorer])]
        disruptive = [i for i in scored if label[i] == "disruptive"]
        distant = [i for i in scored if label[i] == "neutral" and element[i] == "."]
        controls = [i for i in scored if label[i] == "neutral" and element[i] != "."]
        assert (entry["distant_neutral"]["positives"], entry["distant_neutral"]["negatives"]) == (len(disruptive),
                                                                                                  len(distant))
        assert entry["in_element_control"]["negatives"] == len(controls) > 0
        # the AUROC by counting won pairs (ties one half) on the written effects, the AUPRC by scikit-learn
        score = effects[scorer]
        wins = sum((score[d] > score[n]) + 0.5 * (score[d] == score[n]) for d in disruptive for n in distant)
        assert entry["distant_neutral"]["auroc"] == pytest.approx(wins / (len(disruptive) * len(distant)), abs=1e-12)
        ids = disruptive + controls
        expected = average_precision_score([1] * len(disruptive) + [0] * len(controls), score[ids])
        assert entry["in_element_control"]["auprc"] == pytest.approx(expected, abs=1e-12)
        low, high = entry["in_element_control"]["auprc_interval"]
        assert low <= expected <= high
    # the promoter head scores only variants inside a lifted TSS window: none of the distant neutral ones
    promoter = report["scorers"]["promoter"]["benchmark"]["promoter"]
    assert promoter["distant_neutral"]["negatives"] == 0 and promoter["in_element_control"]["negatives"] > 0
    assert "auroc" not in promoter["distant_neutral"]
    assert report["ism"]["region"].startswith("chr") and (folder / "ism.png").stat().st_size > 0


def test_chromatin_head_is_also_ranked_on_the_tf_motif_variants_alone(embedded_default):
    report = json.loads((embedded_default.variants / "report.json").read_text())
    truth = list(csv.DictReader(open(embedded_default.fasta.parent / "variant_truth.tsv"), delimiter="\t"))
    effects = pd.read_csv(embedded_default.variants / "effects.tsv", sep="\t").set_index("id")
    scored = {i for i in effects.index if pd.notna(effects.loc[i, "chromatin"])}
    tf_motif = {"CTCF", "GATA", "FOXA", "YY1"}  # the toy's TF sites (toy_genome.SITE_DENSITY)
    kind = {r["id"]: r["element"].split(":")[0] for r in truth}
    chosen = [r for r in truth if r["id"] in scored and kind[r["id"]] in tf_motif]
    disruptive = [r["id"] for r in chosen if r["label"] == "disruptive"]
    controls = [r["id"] for r in chosen if r["label"] == "neutral"]
    row = report["scorers"]["chromatin"]["benchmark"]["chromatin, TF-motif variants only"]
    assert row["distant_neutral"]["positives"] == len(disruptive) > 0
    assert row["in_element_control"]["negatives"] == len(controls) > 0
    score = effects["chromatin"]
    wins = sum((score[d] > score[c]) + 0.5 * (score[d] == score[c]) for d in disruptive for c in controls)
    assert row["in_element_control"]["auroc"] == pytest.approx(wins / (len(disruptive) * len(controls)), abs=1e-12)


def test_head_effect_is_the_largest_log_odds_change_of_the_long_table(embedded_default):
    """effects.tsv's chromatin column = per variant, the max over ALTs, windows and features of the
    |log odds ratio| written in chromatin.tsv (RC-averaged: the mean of the strands' ratios)."""
    report = json.loads((embedded_default.variants / "report.json").read_text())
    assert report["scorers"]["chromatin"]["effect"] == "max |Δ log odds|"
    effects = pd.read_csv(embedded_default.variants / "effects.tsv", sep="\t").set_index("id")
    long = pd.read_csv(embedded_default.variants / "chromatin.tsv", sep="\t", comment="#")
    expected = long["logit_diff"].abs().groupby(long["id"]).max()
    assert len(expected) > 20
    assert np.allclose(effects.loc[expected.index, "chromatin"], expected, rtol=1e-5, atol=1e-6)
    assert not np.allclose(expected, long["abs_diff"].groupby(long["id"]).max())  # not |Δp|


def test_report_lists_every_stage_with_its_time_and_links_existing_plots(embedded_default):
    text = (embedded_default.root / "report.md").read_text()
    for stage in ("fetch", "corpus", "tokenizer", "shards", "pretrain", "promoter", "variants"):
        record = json.loads((embedded_default.root / stage / "stage.json").read_text())
        assert f"| {stage} | {record['seconds']:.0f} |" in text
    links = [line[line.index("](") + 2:-1] for line in text.splitlines() if line.startswith("![")]
    assert {"pretrain/learning_curve.png", "promoter/roc.png", "variants/effects.png", "variants/ism.png"} <= set(links)
    assert all((embedded_default.root / link).stat().st_size > 1000 for link in links)


def test_each_scorer_lists_its_unscored_alleles_and_report_md_names_the_tables(embedded_default):
    folder = embedded_default.variants
    report = json.loads((folder / "report.json").read_text())
    truth = pd.read_csv(embedded_default.fasta.parent / "variant_truth.tsv", sep="\t")
    text = (embedded_default.root / "report.md").read_text()
    for scorer, entry in report["scorers"].items():
        unscored = pd.read_csv(folder / f"{scorer}.unscored.tsv", sep="\t")
        scored = set(pd.read_csv(folder / f"{scorer}.tsv", sep="\t", comment="#")["id"])
        # every allele of the VCF is scored or listed with its reason, and report.md links the list
        assert sorted(scored | set(unscored["id"])) == sorted(truth["id"]) and not scored & set(unscored["id"])
        assert len(unscored) == entry["summary"]["skipped_alleles"] and unscored["reason"].notna().all()
        assert f"(variants/{scorer}.unscored.tsv)" in text
    assert "REF mismatch" in set(pd.read_csv(folder / "mlm_llr.unscored.tsv", sep="\t")["reason"])


def test_mlm_llr_per_bp_is_ranked_beside_the_raw_llr(embedded_default):
    report = json.loads((embedded_default.variants / "report.json").read_text())
    effects = pd.read_csv(embedded_default.variants / "effects.tsv", sep="\t").set_index("id")
    long = pd.read_csv(embedded_default.variants / "mlm_llr.tsv", sep="\t", comment="#")
    per_bp = long[long["output"] == "llr_per_bp"].groupby("id")["diff"].mean()
    assert np.allclose(effects.loc[per_bp.index, "mlm_llr_per_bp"], -per_bp, rtol=1e-6, atol=1e-9)
    assert set(report["scorers"]["mlm_llr"]["benchmark"]) == {"mlm_llr", "mlm_llr_per_bp"}


def test_stage_reports_record_paths_inside_the_run_folder_relative_to_it(embedded_default):
    for stage in ("promoter", "chromatin", "variants"):
        assert str(embedded_default.root) not in (embedded_default.root / stage / "report.json").read_text(), stage
