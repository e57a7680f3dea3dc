"""The `promoter` stage of the embedded default (tests/conftest.py runs it with shortened settings), the
`dnabird finetune` command's view of a pipeline, and the pipelines that carry promoter sections."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dnabird.errors import ConfigError
from dnabird.model.checkpoint import read_task
from dnabird.pipeline import load_pipeline
from dnabird.stages.finetune import from_pipeline

ROOT = Path(__file__).resolve().parents[2]


def test_promoter_stage_reports_the_selected_model_beside_the_baselines(embedded_default):
    folder = embedded_default.promoter
    report = json.loads((folder / "report.json").read_text())
    rows = report["test"]["rows"]
    assert set(rows) == {"fine-tuned model", "4-mer baseline", "token count baseline"}
    test = report["data"]["examples"]["test"]
    for row in rows.values():
        assert row["examples"] == test["positives"] + test["negatives"] and row["positives"] == test["positives"]
        assert row["ci95"]["accuracy"][0] <= row["accuracy"] <= row["ci95"]["accuracy"][1]
    validated = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
    validated = {r["step"]: r["val_auroc"] for r in validated if "val_auroc" in r}
    assert set(validated) == {3, 6} and report["selection"]["step"] == max(validated, key=validated.get)
    task = read_task(folder / "model")
    assert (task.anchor, task.window_length, task.strand_rule) == ("tss:-500:+300", 800, "feature")
    assert task.eval_length == report["data"]["eval_length"] and task.eval_length % 16 == 0  # the demo's block
    assert report["token_lengths"]["test"]["promoter"]["max"] <= task.eval_length
    assert report["data"]["negatives"] == "genomic" and report["data"]["liftover"]["unmapped"] > 0
    for name in ("windows.tsv", "liftover_dropped.tsv", "roc.png", "pr.png", "learning_curve.png"):
        assert (folder / name).stat().st_size > 0


def test_finetune_reads_a_pipeline_section_with_paths_from_its_stages(embedded_default):
    config = from_pipeline("promoter", ROOT / "pipelines" / "demo.yaml", [f"out_dir={embedded_default.root}"])
    assert Path(config.pretrained) == embedded_default.checkpoint
    assert Path(config.tokenizer) == embedded_default.tokenizer
    assert Path(config.data.genome) == embedded_default.fasta and config.data.chain.endswith(".chain")
    assert Path(config.train.out_dir) == embedded_default.promoter and config.data.negatives == "genomic"


def test_shipped_promoter_pipelines_validate_and_fail_on_unknown_keys():
    grch37 = load_pipeline(ROOT / "pipelines" / "grch37.yaml").stages
    assert grch37["promoter"].train.max_steps == 711 and grch37["promoter"].train.global_batch_size == 256
    assert grch37["promoter"].train.lr == 1e-4 and grch37["promoter"].train.warmup_steps < 711
    assert grch37["promoter"].data.anchor == "tss:-5000:+3000" and grch37["promoter"].data.negatives == "deepromoter"
    assert set(grch37["fetch"].extra_sources) == {"promoters_bed", "chain", "feature_names"}
    compare = load_pipeline(ROOT / "pipelines" / "promoter_compare.yaml").stages["compare"]
    assert set(compare.runs) == {"pretrained_genomic", "scratch_genomic", "pretrained_deepromoter",
                                 "scratch_deepromoter"}
    with pytest.raises(ConfigError, match="runs.extra.train: unknown key 'max_step'"):
        load_pipeline(ROOT / "pipelines" / "promoter_compare.yaml",
                      ["compare.runs.extra={train: {max_step: 3}}"])


def _dnabird(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dnabird", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=1800)


@pytest.mark.slow   # 8-kb windows: tens of seconds to encode and score on 2 CPU cores
def test_grch37_promoter_section_smoke_run_on_the_toy_from_scratch(embedded_default, tmp_path):
    """grch37.yaml's promoter section (Table 21's column) on the toy source, a tiny model from scratch."""
    result = _dnabird("-q", "finetune", "promoter", "--config", ROOT / "pipelines" / "grch37.yaml",
                      "--pretrained", "none", "--out", tmp_path, f"out_dir={embedded_default.root}",
                      "promoter.model=tiny", "promoter.train.max_steps=2", "promoter.train.global_batch_size=2",
                      "promoter.train.micro_batch_size=2", "promoter.train.warmup_steps=1",
                      "promoter.train.eval_every=1", "promoter.train.num_workers=0",
                      "promoter.data.chromosomes=[chr1, chr7, chr8]", "promoter.bootstrap_resamples=100")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["task"]["anchor"] == "tss:-5000:+3000" and report["data"]["negatives"] == "deepromoter"
    assert "from scratch" in report["test"]["title"] and "6-mer baseline" in result.stdout
    # DeePromoter negatives: 12 of 20 parts are random, which the cheap baselines see at once
    assert report["test"]["rows"]["6-mer baseline"]["auroc"] > 0.9


@pytest.mark.slow   # four short fine-tuning runs (the full table: `dnabird run pipelines/promoter_compare.yaml`)
def test_promoter_compare_pipeline_on_the_embedded_default(embedded_default, tmp_path):
    data = embedded_default.fasta.parent
    result = _dnabird("-q", "run", ROOT / "pipelines" / "promoter_compare.yaml", f"out_dir={tmp_path}",
                      f"compare.base.pretrained={embedded_default.checkpoint}",
                      f"compare.base.tokenizer={embedded_default.tokenizer}",
                      f"compare.base.data.genome={embedded_default.fasta}",
                      f"compare.base.data.promoters={data / 'promoters_hg38.bed'}",
                      f"compare.base.data.chain={data / 'hg38ToHg19.over.chain'}",
                      "compare.base.train.max_steps=10", "compare.base.train.warmup_steps=2",
                      "compare.base.train.eval_every=5", "compare.base.train.checkpoint_every=10",
                      "compare.base.bootstrap_resamples=100")
    assert result.returncode == 0, result.stderr[-3000:]
    table = {run: entry["report"]["test"]
             for run, entry in json.loads((tmp_path / "compare" / "results.json").read_text()).items()}
    assert set(table) == {"pretrained_genomic", "scratch_genomic", "pretrained_deepromoter", "scratch_deepromoter"}
    for run in ("pretrained_deepromoter", "scratch_deepromoter"):   # composition gives DeePromoter's away
        rows, genomic = table[run]["rows"], table[run.replace("deepromoter", "genomic")]["rows"]
        assert rows["6-mer baseline"]["auroc"] > 0.9 > genomic["6-mer baseline"]["auroc"]
        assert rows["token count baseline"]["auroc"] > genomic["token count baseline"]["auroc"] + 0.2
    assert "scratch_genomic: fine-tuned model" in result.stdout
