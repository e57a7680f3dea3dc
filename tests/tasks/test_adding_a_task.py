"""Adding a task is one module and one registry line: a task defined here, registered in `TASKS` only, runs
through fine-tuning (`dnabird.tasks.finetune`), its own pipeline stage (the generic task stage, null paths from
an earlier stage) and the `compare` stage, with its own report and encoder overrides."""

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from dnabird.data.tokenizer import Tokenizer
from dnabird.finetune.config import FinetuneConfig
from dnabird.finetune.data import TaskData, TokenExamples
from dnabird.finetune.task import Scoring, Task
from dnabird.model.task_spec import TaskSpec
from dnabird.pipeline import Stage, build_pipeline, run_pipeline
from dnabird.stages import compare, finetune
from dnabird.train import TrainConfig

SIZES = {"train": 32, "validation": 16, "test": 12}
SHORT = {"max_steps": 4, "global_batch_size": 8, "micro_batch_size": 8, "lr": 3e-3, "warmup_steps": 1,
         "checkpoint_every": 4, "eval_every": 2, "progress": False}
MODEL = {"num_layers": 1, "hidden_size": 32, "num_heads": 2, "intermediate_size": 64, "max_positions": 128,
         "attention": {"type": "full"}}


@dataclass
class MotifData:
    test_examples: int = SIZES["test"]


@dataclass
class MotifConfig(FinetuneConfig):
    data: MotifData = field(default_factory=MotifData)
    pretrained: str | None = "none"
    model: str = "tiny"
    model_overrides: dict = field(default_factory=lambda: dict(MODEL))
    eval_batch_size: int = 16
    train: TrainConfig = field(default_factory=lambda: TrainConfig(**SHORT))


def examples(split: str) -> tuple[list[str], np.ndarray]:
    """60-bp random DNA; every other sequence carries the motif GGGGCGGGGC (label 1)."""
    rng = np.random.default_rng(len(split))
    labels = np.arange(SIZES[split]) % 2
    texts = ["".join(rng.choice(list("ACGT"), 50)) + ("GGGGCGGGGC" if label else "ACGTACGTAC") for label in labels]
    return texts, labels


class Motif(Task):
    name, config = "motif", MotifConfig
    stage_inputs = {"tokenizer": ("dna_tokenizer", "model")}

    @staticmethod
    def build(config: MotifConfig, tokenizer, *, block_size: int, out_dir: Path) -> TaskData:
        splits = {}
        for split, count in {**SIZES, "test": config.data.test_examples}.items():
            texts, labels = examples(split)
            ids, _ = tokenizer.encode_batch(texts[:count], block_size=block_size, length=64)
            splits[split] = TokenExamples(ids, labels[:count], seed=config.seed, shuffle=split == "train")
        spec = TaskSpec(task="motif", problem="binary", labels=["motif"], eval_length=64, tokenizer_hash=tokenizer.hash)
        return TaskData(spec, splits["train"], splits["validation"], splits["test"])

    def encoder_overrides(self, model_config) -> dict:
        return {"dropout": 0.0}

    def report(self, data: TaskData, config: MotifConfig, scoring: Scoring) -> dict:
        labels, scores, _ = scoring.predict(data.test)
        accuracy = float(((scores > 0) == labels).mean())
        row = {"examples": len(labels), "positives": int(labels.sum()), "accuracy": accuracy}
        return {"test": {"rows": {"motif model": row}}, "token_lengths": {}}


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory) -> Path:
    rng = np.random.default_rng(0)
    sentences = ["".join(rng.choice(list("ACGT"), 300)) for _ in range(200)]
    return Tokenizer.train(sentences, tmp_path_factory.mktemp("tokenizer") / "dna.model", vocab_size=64,
                           sample_size=200).path


@pytest.fixture
def registered(monkeypatch):
    from dnabird import tasks

    monkeypatch.setitem(tasks.TASKS, "motif", __name__)   # the one registry line


TASK = Motif()


def test_a_new_task_fine_tunes_through_the_registry(registered, tokenizer, tmp_path):
    from dnabird.model.checkpoint import read_config, read_task
    from dnabird.tasks import finetune as finetune_task

    config = MotifConfig(tokenizer=str(tokenizer))
    config.train.out_dir = str(tmp_path)
    report = finetune_task("motif", config)
    row = report["test"]["rows"]["motif model"]
    _, test_labels = examples("test")
    assert (row["examples"], row["positives"]) == (len(test_labels), int(test_labels.sum())) == (12, 6)
    assert 0 <= row["accuracy"] <= 1 and report["test"]["title"].startswith("motif: test split, 12 examples")
    assert report["selection"]["step"] in (2, 4)
    assert json.loads((tmp_path / "report.json").read_text())["test"]["rows"] == report["test"]["rows"]
    assert read_task(tmp_path / "model").task == "motif"
    assert read_config(tmp_path / "model").dropout == 0.0      # the task's encoder override (the preset: 0.1)


def test_a_new_task_runs_as_its_own_stage_and_in_the_comparison_stage(registered, tokenizer, tmp_path):
    @dataclass
    class Nothing:
        pass

    dna_tokenizer = Stage("dna_tokenizer", Nothing, lambda config, context: [],
                          lambda config, context, stage_dir: {"model": tokenizer})
    stages = [dna_tokenizer, finetune.stage("motif"), compare.stage("compare")]
    runs = {"slow": {"train": {"lr": 1e-4}}, "fast": {"train": {"lr": 3e-3}, "data": {"test_examples": 8}}}
    sections = {"out_dir": str(tmp_path), "dna_tokenizer": {}, "motif": {},
                "compare": {"task": "motif", "base": {"train": SHORT}, "runs": runs}}
    record = run_pipeline(build_pipeline(sections, Path("p.yaml"), stages), stages)
    assert record["stages"] == {"dna_tokenizer": "ran", "motif": "ran", "compare": "ran"}
    stage_report = json.loads((tmp_path / "motif" / "report.json").read_text())
    assert stage_report["config"]["tokenizer"] == str(tokenizer)          # filled from the earlier stage
    results = json.loads((tmp_path / "compare" / "results.json").read_text())
    assert [results[name]["train"]["lr"] for name in ("slow", "fast")] == [1e-4, 3e-3]
    assert [results[name]["report"]["test"]["rows"]["motif model"]["examples"] for name in runs] == [12, 8]
    table = (tmp_path / "compare" / "results.txt").read_text()
    assert "slow: motif model" in table and "fast: motif model" in table
    assert (tmp_path / "compare" / "fast" / "model").is_dir()
