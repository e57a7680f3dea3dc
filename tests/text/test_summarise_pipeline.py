"""The shortened `pipelines/summarise.yaml` end to end (slow): data → word tokenizer → a warm-up model → three
encoders from it → one table, trained for a small fixed budget (about 2 minutes on 2 cores) and checked for the
task's point: only the encoders that see past token 512 write the summary."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = ["truncated_512", "led_longformer", "bigbird_itc"]
SHORTENED = ["text_data.summaries.min_words=600", "text_data.summaries.max_words=800",  # findings past word 520
             "text_data.summaries.train=256", "text_data.summaries.validation=8", "text_data.summaries.test=32",
             "text_data.summaries.warmup=2000", "compare.base.data.max_length=1024",
             "compare.base.validation_documents=8", "compare.base.bootstrap_resamples=200",
             "compare.base.train.max_steps=60", "compare.base.train.eval_every=30",
             "compare.base.train.checkpoint_every=60", "compare.runs.warmup.train.max_steps=4000",
             "compare.runs.warmup.train.eval_every=1000",
             "compare.runs.warmup.train.checkpoint_every=1000"]


@pytest.mark.slow
def test_shortened_summarise_pipeline_learns_what_only_a_long_encoder_can(tmp_path):
    subprocess.run([sys.executable, "-m", "dnabird", "-q", "run", str(ROOT / "pipelines" / "summarise.yaml"),
                    f"out_dir={tmp_path}", *SHORTENED], check=True, cwd=ROOT)
    results = json.loads((tmp_path / "compare" / "results.json").read_text())
    runs = ["warmup", *MODELS]  # the pipeline's order; results.json sorts its keys
    assert sorted(results) == sorted(runs)
    assert results["warmup"]["data"]["train"].endswith("summaries_warmup/train.jsonl")  # the short documents
    for m in MODELS:  # each encoder starts from the warm-up model, with its own attention
        assert results[m]["pretrained"].endswith("warmup/model")
        assert json.loads((tmp_path / "compare" / m / "model" / "config.json").read_text())["encoder"][
            "attention"] == results[m]["model_overrides"]["attention"]
    tests = {name: entry["report"]["test"] for name, entry in results.items()}
    assert tests["truncated_512"]["truncated_documents"] == 32  # every document runs past 512 tokens
    assert tests["bigbird_itc"]["truncated_documents"] == tests["led_longformer"]["truncated_documents"] == 0
    rouge_l = {name: test["rows"]["fine-tuned model"]["rougeL"] for name, test in tests.items()}
    lead = tests["bigbird_itc"]["rows"]["lead-3 baseline"]["rougeL"]
    for sparse in ("led_longformer", "bigbird_itc"):  # the acceptance's ordering, on a shortened run
        assert rouge_l[sparse] >= rouge_l["truncated_512"] + 0.2, rouge_l
        assert rouge_l[sparse] > lead + 0.2, (rouge_l, lead)
    table = (tmp_path / "compare" / "results.txt").read_text()
    rows = [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ")][1:]
    # the pipeline's order, then lead-3 on each test set: the warm-up's short documents, the others' long ones
    assert rows == [*runs, "lead-3 baseline (warmup)", f"lead-3 baseline ({', '.join(MODELS)})"]
