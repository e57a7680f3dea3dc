"""A regression task through the recipe: two targets read from planted motif counts plus noise, standardised for
training, fine-tuned from the fixture's pretrained model; the report's metrics in the user's scale equal scipy's on
the saved model's own outputs, beside a ridge k-mer baseline and the token count."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats

from dnabird.finetune.baselines import Baseline, kmer_counts
from dnabird.finetune.config import FinetuneConfig
from dnabird.finetune.data import LossSpec, TaskData, TokenExamples
from dnabird.finetune.report import comparison_table, format_table
from dnabird.finetune.task import Task
from dnabird.model.targets import TargetTransform
from dnabird.model.task_spec import TaskSpec
from dnabird.train import TrainConfig

MOTIFS = {"gc_box": "GGGGCGGGGC", "tata": "TATAAAAG"}   # target = copies × weight + noise
WEIGHTS = {"gc_box": 1.0, "tata": 2.0}
SIZES = {"train": 256, "validation": 48, "test": 96}
LENGTH_BP, EVAL_LENGTH = 160, 48


def examples(split: str, seed: int) -> tuple[list[str], np.ndarray]:
    """Random DNA with 0-3 copies of each motif at random non-overlapping slots; targets [N, 2] in the user's
    scale (counts × weight + 10 + Gaussian noise of s.d. 0.3)."""
    rng = np.random.default_rng(seed)
    texts, targets = [], []
    for _ in range(SIZES[split]):
        bases = list(rng.choice(list("ACGT"), LENGTH_BP))
        counts = {name: int(rng.integers(0, 4)) for name in MOTIFS}
        slots = rng.permutation(LENGTH_BP // 16)[:sum(counts.values())] * 16
        for at, name in zip(slots, [n for n, c in counts.items() for _ in range(c)], strict=True):
            bases[at:at + len(MOTIFS[name])] = MOTIFS[name]
        texts.append("".join(bases))
        targets.append([counts[n] * WEIGHTS[n] + 10 + rng.normal(0, 0.3) for n in MOTIFS])
    return texts, np.array(targets)


class MotifCounts(Task):
    name = "motif_counts"
    config = FinetuneConfig

    def build(self, config, tokenizer, *, block_size: int, out_dir: Path) -> TaskData:
        raw = {split: examples(split, seed) for seed, split in enumerate(SIZES)}
        transform = TargetTransform(mean=raw["train"][1].mean(0), std=raw["train"][1].std(0))
        spec = TaskSpec(task=self.name, problem="regression", labels=list(MOTIFS), eval_length=EVAL_LENGTH,
                        tokenizer_hash=tokenizer.hash, target_transform=transform.to_dict())
        splits = {}
        for split, (texts, targets) in raw.items():
            ids, _ = tokenizer.encode_batch(texts, block_size=block_size, length=EVAL_LENGTH)
            splits[split] = TokenExamples(ids, transform.forward(targets).astype(np.float32), seed=config.seed,
                                          shuffle=split == "train")
        as_bytes = {s: np.frombuffer("".join(t).encode(), np.uint8).reshape(len(t), -1) for s, (t, _) in raw.items()}
        kmers = Baseline(kmer_counts(as_bytes["train"], 4), kmer_counts(as_bytes["test"], 4), "ridge")
        return TaskData(spec, splits["train"], splits["validation"], splits["test"], loss=LossSpec("mse"),
                        baseline_features={"4-mer": kmers})


@pytest.fixture(scope="module")
def run(embedded_default, tmp_path_factory):
    from dnabird.finetune.recipe import finetune

    out = tmp_path_factory.mktemp("motif_counts")
    train = TrainConfig(max_steps=40, global_batch_size=16, micro_batch_size=16, lr=1e-3, warmup_steps=4,
                        eval_every=20, checkpoint_every=40, progress=False, out_dir=str(out))
    config = FinetuneConfig(pretrained=str(embedded_default.checkpoint), train=train, bootstrap_resamples=200,
                            eval_batch_size=32, selection_metric="auroc")   # not a regression metric: pearson
    return out, finetune(MotifCounts(), config)


def test_the_recipe_learns_a_regression_and_reports_it_in_the_users_scale(run):
    from dnabird.model.checkpoint import load_checkpoint, read_task, read_tokenizer

    out, report = run
    rows = report["test"]["rows"]
    assert list(rows) == ["fine-tuned model", "4-mer baseline", "token count baseline"]
    model = rows["fine-tuned model"]
    assert report["selection"]["metric"] == "pearson" and report["loss"]["kind"] == "mse"
    # the saved model's outputs on the test texts, mapped back with task.json's transform, scored by scipy
    spec, tokenizer = read_task(out / "model"), read_tokenizer(out / "model")
    texts, truth = examples("test", 2)
    ids, mask = tokenizer.encode_batch(texts, block_size=16, length=EVAL_LENGTH)
    net = load_checkpoint(out / "model").eval()
    with torch.no_grad():
        outputs = net(torch.from_numpy(ids), torch.from_numpy(mask)).logits.numpy()
    predicted = spec.transform.inverse(outputs)
    for k, name in enumerate(MOTIFS):
        target = model["targets"][name]
        assert target["pearson"] == pytest.approx(stats.pearsonr(truth[:, k], predicted[:, k])[0], abs=1e-4)
        assert target["spearman"] == pytest.approx(stats.spearmanr(truth[:, k], predicted[:, k])[0], abs=1e-4)
        assert target["mse"] == pytest.approx(np.mean((truth[:, k] - predicted[:, k]) ** 2), rel=1e-3)
        assert target["r2"] == pytest.approx(1 - target["mse"] / truth[:, k].var(), abs=1e-3)
        low, high = model["ci95"]["targets"][name]["pearson"]
        assert low <= target["pearson"] <= high
    assert model["pearson"] > 0.5, model                      # learnt: chance is |r| < 3 / sqrt(95) = 0.31
    assert report["warnings"] == []
    for baseline in ("4-mer baseline", "token count baseline"):
        assert set(rows[baseline]) >= {"pearson", "spearman", "r2", "mse", "ci95", "targets"}
    assert rows["4-mer baseline"]["pearson"] > 0.5             # the motifs are 4-mer-readable
    assert rows["token count baseline"]["pearson"] < rows["4-mer baseline"]["pearson"]


def test_regression_tables_show_every_metric_per_target_and_across_runs(run):
    _, report = run
    table = format_table(report)
    for column in ("pearson", "spearman", "r2", "mse"):
        assert column in table.splitlines()[1]
    assert "fine-tuned model: gc_box" in table and "4-mer baseline: tata" in table
    compared = comparison_table({"seed 0": report, "seed 1": report})
    assert "seed 1: fine-tuned model" in compared
    pearson = report["test"]["rows"]["fine-tuned model"]["pearson"]
    assert f"fine-tuned model (2 runs): pearson {pearson:.3f} ± 0.000" in compared


def test_the_run_report_and_results_page_show_any_task_stage_with_its_regression_figures(run, tmp_path):
    from dnabird.results import report_figures
    from dnabird.stages.report import ReportConfig, render

    out, report = run
    stage = tmp_path / "motif_counts"
    stage.mkdir()
    (stage / "report.json").write_text(json.dumps(report))
    (stage / "stage.json").write_text(json.dumps({"finished": True, "seconds": 3.0}))
    text = render(ReportConfig(stages=["motif_counts"]), tmp_path)
    pearson = report["test"]["rows"]["fine-tuned model"]["pearson"]
    assert f"| motif_counts | 3 | test mean over targets: Pearson r {pearson:.3f} [" in text
    assert "fine-tuned model: tata" in text                     # the per-target table below
    figures = {(f.row, f.column): f.value for f in report_figures("motif_counts", report)}
    assert figures[("fine-tuned model", "Pearson r")] == pearson and ("4-mer baseline", "R²") in figures
