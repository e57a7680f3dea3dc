"""The shortened `pipelines/summarise.yaml` end to end (slow): data → word tokenizer → three models → one table."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_shortened_summarise_pipeline(tmp_path):
    models = ["truncated_512", "led_longformer", "bigbird_itc"]
    warmups = [f"text_summarise.models.warmup.train.{k}=3" for k in ("max_steps", "eval_every")]
    subprocess.run([sys.executable, "-m", "dnabird", "-q", "run", str(ROOT / "pipelines" / "summarise.yaml"),
                    f"out_dir={tmp_path}", "text_data.summaries.train=32", "text_data.summaries.validation=4",
                    "text_data.summaries.test=8", "text_data.summaries.warmup=16",
                    "text_summarise.base.train.max_steps=3", "text_summarise.base.train.warmup_steps=1",
                    "text_summarise.base.train.eval_every=3", "text_summarise.base.validation_documents=4", *warmups],
                   check=True, cwd=ROOT)
    results = json.loads((tmp_path / "text_summarise" / "results.json").read_text())
    runs = ["warmup", *models]  # the pipeline's order; results.json sorts its keys
    assert sorted(results) == sorted(runs)
    tests = {name: entry["report"]["test"] for name, entry in results.items()}
    assert tests["truncated_512"]["truncated_documents"] == 8  # every document runs past 512 tokens
    assert tests["bigbird_itc"]["truncated_documents"] == tests["led_longformer"]["truncated_documents"] == 0
    assert results["warmup"]["data"]["train"].endswith("summaries_warmup/train.jsonl")  # the short documents
    for m in models:  # each encoder starts from the warm-up model, with its own attention
        assert results[m]["pretrained"].endswith("warmup/model")
        assert json.loads((tmp_path / "text_summarise" / m / "model" / "config.json").read_text())["encoder"][
            "attention"] == results[m]["model_overrides"]["attention"]
    for test in tests.values():
        assert set(test["rows"]) == {"fine-tuned model", "lead-3 baseline"}
        assert all(0.0 <= test["rows"]["fine-tuned model"][t] <= 1.0 for t in ("rouge1", "rouge2", "rougeL"))
    table = (tmp_path / "text_summarise" / "results.txt").read_text()
    rows = [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ")][1:]
    # the pipeline's order, then lead-3 on each test set: the warm-up's short documents, the others' long ones
    assert rows == [*runs, "lead-3 baseline (warmup)", f"lead-3 baseline ({', '.join(models)})"]
