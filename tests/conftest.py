"""Fixtures shared by every test package.

`embedded_default` builds the embedded default once per session with the same pipeline as
`make demo` (pipelines/demo.yaml), but on `toy` (3.6 Mbp, a third of the demo's genome): toy genome ->
corpus -> tokenizer -> shards -> a tiny model
pretrained briefly (`FIXTURE_OVERRIDES`: 150 steps of 32 x 128 tokens) -> that model fine-tuned on
promoters for 6 steps on 800-bp windows, and on the toy's chromatin bundle for 6 steps -> the
chromatin head over 9 tiles of 5 kb of chr1 (tracks and their plot) -> the toy VCF scored (zero-shot on 201-bp
windows, by the promoter and the chromatin heads) -> report.md.
Time budget: about 120 s on 2 free cores (genome, corpus, tokenizer, shards ~10 s; pretraining and
its evaluation ~60 s; the promoter stage ~15 s; the chromatin stage ~15 s; predict ~5 s; variants ~15 s).
Set DNABIRD_TEST_WORKSPACE to a folder to keep the artefacts between sessions: the pipeline then
skips every stage that is up to date and the fixture costs about a second.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_OVERRIDES = (
    "pretrain.max_length=128",
    "pretrain.train.global_batch_size=32",
    "pretrain.train.micro_batch_size=32",
    "pretrain.train.max_steps=150",
    "pretrain.train.warmup_steps=8",
    "pretrain.train.checkpoint_every=150",
    "pretrain.eval_examples=32",
    "pretrain.min_margin_bits={}",
    "promoter.data.anchor=tss:-500:+300",
    "promoter.data.kmer=4",
    "promoter.train.max_steps=6",
    "promoter.train.eval_every=3",
    "promoter.train.warmup_steps=1",
    "promoter.train.checkpoint_every=6",
    "promoter.bootstrap_resamples=200",
    "chromatin.train.max_steps=6",
    "chromatin.train.eval_every=3",
    "chromatin.train.warmup_steps=1",
    "chromatin.train.checkpoint_every=6",
    "chromatin.train.global_batch_size=16",
    "chromatin.train.micro_batch_size=16",
    "chromatin.data.slab_rows=64",
    "chromatin.data.baseline_rows=600",
    "chromatin.bootstrap_resamples=100",
    "predict.region=[chr1:120001-125000]",
    "variants.mlm_window_bp=201",
    "variants.bootstrap_resamples=200",
    "fetch.source=toy",
)


@pytest.fixture(scope="session")
def embedded_default(tmp_path_factory) -> SimpleNamespace:
    """Paths of the embedded default's artefacts: fasta, corpus, tokenizer, train_shards,
    heldout_shards, pretrain (the run folder: checkpoints, metrics.jsonl, report.json), checkpoint
    (the tiny pretrained model directory, loadable with `dnabird.model.checkpoint.load_checkpoint`) and
    promoter (the promoter stage's folder: report.json, model/ with task.json, windows.tsv ...),
    chromatin (the chromatin stage's folder: report.json, auroc_by_group.png, feature_table.tsv ...) and
    predict (the predict stage's folder: report.json, tiles.tsv, its tracks, tracks.png),
    variants (the variants stage's folder: report.json, effects.tsv, <scorer>.tsv, ism.h5 ...);
    report.md lies in root."""
    from dnabird.pipeline import load_pipeline, load_run_record, run_pipeline

    workspace = os.environ.get("DNABIRD_TEST_WORKSPACE")
    out = Path(workspace) if workspace else tmp_path_factory.mktemp("embedded_default")
    pipeline = load_pipeline(ROOT / "pipelines" / "demo.yaml",
                             [f"out_dir={out}", f"fetch.dest={out / 'data'}", *FIXTURE_OVERRIDES])
    run_pipeline(pipeline)
    outputs = load_run_record(out)["outputs"]
    return SimpleNamespace(
        root=out,
        fasta=Path(outputs["fetch"]["fasta"]),
        corpus=Path(outputs["corpus"]["corpus"]),
        tokenizer=Path(outputs["tokenizer"]["model"]),
        train_shards=Path(outputs["shards"]["train"]),
        heldout_shards=Path(outputs["shards"]["heldout"]),
        pretrain=out / "pretrain",
        checkpoint=Path(outputs["pretrain"]["model"]),
        promoter=out / "promoter",
        predict=out / "predict",
        variants=out / "variants",
        chromatin=out / "chromatin",
    )
