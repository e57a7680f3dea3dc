"""The results page: figures read from the runs' records, several seeds as mean and range."""

from __future__ import annotations

import json
import shutil

import pytest

from dnabird.cli import main
from dnabird.errors import ConfigError
from dnabird.results import figures, render_results


def _fake_run(root, name, seed, accuracy, pipeline="pipelines/x.yaml", gpu="none"):
    """A run folder with one finished promoter stage whose model row has `accuracy` (trained on `gpu`)."""
    run = root / name
    (run / "promoter").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({
        "pipeline": pipeline, "seed": seed, "config": {"promoter": {"seed": seed}},
        "stages": {"promoter": "ran"}, "outputs": {}}))
    versions = {"commit": "abc123", "cpu": "Test CPU, 2 cores", "cpu threads": "2", "cuda": gpu}
    (run / "promoter" / "stage.json").write_text(json.dumps({
        "finished": True, "seconds": 60.0, "key": {"config": {"seed": seed}}, "versions": versions}))
    (run / "promoter" / "report.json").write_text(json.dumps({"test": {"rows": {
        "fine-tuned model": {"accuracy": accuracy, "ci95": {"accuracy": [accuracy - 0.1, accuracy + 0.1]}}}}}))
    return run


def test_several_seeds_give_mean_and_range_computed_by_hand(tmp_path):
    runs = [_fake_run(tmp_path, f"s{seed}", seed, acc) for seed, acc in ((0, 0.8), (1, 0.9), (2, 0.85))]
    page = render_results(runs)
    assert "| fine-tuned model | 0.850 (0.800–0.900, n=3) |" in page  # (0.8 + 0.9 + 0.85) / 3
    assert "| s1 | 1 | — | abc123 | Test CPU, 2 cores | 2 | 1.0 min |" in page


def test_a_gpu_run_names_its_gpu_beside_the_cpu(tmp_path):
    page = render_results([_fake_run(tmp_path, "g", 0, 0.8, gpu="Test GPU")])
    assert "| g | 0 | — | abc123 | Test GPU GPU; Test CPU, 2 cores | 2 | 1.0 min |" in page


def test_a_stage_copied_into_another_run_folder_counts_once(tmp_path):
    first = _fake_run(tmp_path, "s0", 0, 0.8)
    shutil.copytree(first, tmp_path / "copy")
    page = render_results([first, tmp_path / "copy", _fake_run(tmp_path, "s1", 1, 0.9)])
    assert "| fine-tuned model | 0.850 (0.800–0.900, n=2) |" in page


def test_one_run_gives_its_value_and_interval_and_pipelines_are_apart(tmp_path):
    page = render_results([_fake_run(tmp_path, "a", 0, 0.8), _fake_run(tmp_path, "b", 0, 0.6, "pipelines/y.yaml")])
    assert "| fine-tuned model | 0.800 [0.700, 0.900] |" in page
    assert "| fine-tuned model | 0.600 [0.500, 0.700] |" in page
    assert page.index("## pipelines/x.yaml") < page.index("0.800") < page.index("## pipelines/y.yaml")


def test_figures_of_the_embedded_default_equal_its_reports(embedded_default):
    promoter = json.loads((embedded_default.promoter / "report.json").read_text())["test"]["rows"]["fine-tuned model"]
    found = {(f.row, f.column): f for f in figures(embedded_default.promoter)}
    assert found[("fine-tuned model", "auroc")].value == promoter["auroc"]
    assert found[("fine-tuned model", "auroc")].interval == tuple(promoter["ci95"]["auroc"])
    pretrain = json.loads((embedded_default.pretrain / "report.json").read_text())
    found = {(f.row, f.column): f.value for f in figures(embedded_default.pretrain)}
    assert found[("model", "bits/bp at [MASK]")] == pretrain["at_mask"]["model"]["bits_per_base"]
    chromatin = json.loads((embedded_default.chromatin / "report.json").read_text())["test"]["rows"]
    found = {(f.row, f.column): f.value for f in figures(embedded_default.chromatin)}
    assert found[("fine-tuned model", "DNase median AUROC")] == chromatin["fine-tuned model"]["groups"]["DNase"][
        "median_auroc"]
    variants = json.loads((embedded_default.variants / "report.json").read_text())["scorers"]
    found = {(f.row, f.column): f.value for f in figures(embedded_default.variants)}
    ranking = variants["mlm_llr"]["benchmark"]["mlm_llr"]["distant_neutral"]
    assert found[("mlm_llr", "AUROC distant neutral")] == ranking["auroc"]


def test_the_command_writes_the_page_of_a_finished_run(embedded_default, tmp_path, capsys):
    out = tmp_path / "results.md"
    assert main(["report", "--results", str(out), str(embedded_default.root)]) == 0
    page = out.read_text()
    assert "## pipelines/demo.yaml" in page or "demo.yaml" in page
    assert "toy v" in page  # the fixture's generated genome and its version
    assert "### promoter" in page and "### variants" in page


def test_a_folder_without_run_json_is_a_clear_error(tmp_path):
    shutil.rmtree(_fake_run(tmp_path, "a", 0, 0.8) / "promoter")
    (tmp_path / "a" / "run.json").unlink()
    with pytest.raises(ConfigError, match="no run.json"):
        render_results([tmp_path / "a"])


def test_summarise_rows_give_rouge_columns(tmp_path):
    """A summarise report (rows of rouge_report) gives ROUGE-1/2/L cells; lead-k is a row beside the model."""
    from dnabird.text.rouge import rouge_report

    row = rouge_report(["a b c d"], ["a b x y"], resamples=10)  # unigram F1 2/4, bigram F1 1/3, LCS F1 2/4
    lead = rouge_report(["x"], ["a b x y"], resamples=10)  # unigram F1 2·(1·1/4)/(1+1/4) = 0.4
    stage = tmp_path / "summarise"
    stage.mkdir()
    (stage / "report.json").write_text(json.dumps({"test": {"rows": {"fine-tuned model": row,
                                                                     "lead-3 baseline": lead}}}))
    found = {(f.row, f.column): f.value for f in figures(stage)}
    assert found == pytest.approx({("fine-tuned model", "ROUGE-1"): 0.5, ("fine-tuned model", "ROUGE-2"): 1 / 3,
                                   ("fine-tuned model", "ROUGE-L"): 0.5, ("lead-3 baseline", "ROUGE-1"): 0.4,
                                   ("lead-3 baseline", "ROUGE-2"): 0.0, ("lead-3 baseline", "ROUGE-L"): 0.4})
