"""A published-layout model imported once, then every workflow on the embedded default with it: zero-shot
variant scores (mlm_llr), promoter fine-tuning, embeddings, saturation mutagenesis and bits per base.

The model is a small random `BigBirdForMaskedLM` of GENA-LM's layout. It runs with GENA-LM's tokenizer and
with a copy whose special tokens sit at other ids ([MASK] at the last id, ids 0-4 spelling IUPAC letters no
test sequence holds). In that second run a spy on the embedding layer fails the test if any of the ids 0-4
(dnabird's or GENA-LM's special ids) reaches the model: a hard-coded special id anywhere makes it fail.
Embeddings are also compared with transformers' hidden states on the ids transformers' `AutoTokenizer` gives.
"""

import dataclasses
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from dnabird.data.hf_tokenizer import HFTokenizer
from dnabird.data.shards import build_shards
from dnabird.model.encoder import Embeddings
from dnabird.model.hub_import import import_hub_checkpoint
from dnabird.pretraining.evaluate import evaluate_checkpoint
from dnabird.stages.finetune import from_pipeline
from dnabird.tasks import finetune
from dnabird.variants import embed, saturation_mutagenesis, score_variants
from tests.gena_reference import GENA_TOKENIZER, gena_config, moved_specials, seeded

transformers = pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parent.parent
TRIPWIRE = torch.arange(5)  # dnabird's fixed special ids, and GENA-LM's


@pytest.fixture
def tripwire(monkeypatch):
    """Fail on any input id 0-4 reaching a model's embeddings (only armed for the moved-ids tokenizer)."""
    forward = Embeddings.forward

    def checked(self, input_ids, *args, **kwargs):
        found = torch.isin(input_ids, TRIPWIRE.to(input_ids.device))
        assert not found.any(), f"special id {input_ids[found].unique().tolist()} reached the model"
        return forward(self, input_ids, *args, **kwargs)

    monkeypatch.setattr(Embeddings, "forward", checked)


def vcf_alleles(path: Path) -> set[tuple[int, int]]:
    """(0-based record, 1-based ALT number) of every ALT allele, read from the VCF text."""
    records = [line.split("\t") for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return {(r, a) for r, fields in enumerate(records) for a in range(1, len(fields[4].split(",")) + 1)}


def imported(tmp_path: Path, tokenizer_dir: Path):
    """A random GENA-layout BigBirdForMaskedLM saved by transformers with `tokenizer_dir`'s files, imported."""
    tokenizer = HFTokenizer.load(tokenizer_dir)
    config = gena_config(transformers, pad_token_id=tokenizer.pad_id, hidden=32, layers=2)
    hf_model = seeded(lambda: transformers.BigBirdForMaskedLM(config), 7).eval()
    hf_model.save_pretrained(tmp_path / "hub")
    for file in tokenizer.files:
        shutil.copy(file, tmp_path / "hub" / file.name)
    import_hub_checkpoint(tmp_path / "hub", tmp_path / "model")
    return hf_model, tmp_path / "model", tokenizer


@pytest.mark.parametrize("ids", ["gena", "moved"])
def test_an_imported_model_scores_finetunes_embeds_mutates_and_evaluates(embedded_default, tmp_path, ids, request):
    tokenizer_dir = GENA_TOKENIZER if ids == "gena" else moved_specials(tmp_path / "moved_tokenizer")
    if ids == "moved":
        request.getfixturevalue("tripwire")
    hf_model, model, tokenizer = imported(tmp_path, tokenizer_dir)
    fasta, vcf = embedded_default.fasta, embedded_default.fasta.parent / "variants.vcf"

    scores = score_variants(model, fasta, vcf, method="mlm_llr", window_bp=200, progress=False, device="cpu")
    scored = set(zip(scores.units["record"], scores.units["allele"], strict=True))
    skipped = set(zip(scores.skipped["record"], scores.skipped["allele"], strict=True))
    assert scored | skipped == vcf_alleles(vcf) and not scored & skipped  # every allele accounted for
    assert len(scored) >= 0.9 * len(vcf_alleles(vcf)) and np.isfinite(scores.diff).all()
    assert scores.settings["tokenizer_hash"] == tokenizer.hash

    config = from_pipeline("promoter", ROOT / "pipelines" / "demo.yaml", [
        f"out_dir={embedded_default.root}", "fetch.source=toy", "promoter.data.anchor=tss:-500:+300",
        "promoter.train.max_steps=2", "promoter.train.eval_every=2", "promoter.train.warmup_steps=1",
        "promoter.train.global_batch_size=8", "promoter.train.micro_batch_size=8", "promoter.train.progress=false",
        "promoter.bootstrap_resamples=20", "promoter.eval_batch_size=64"])
    config = dataclasses.replace(config, pretrained=str(model), tokenizer=None,
                                 train=dataclasses.replace(config.train, out_dir=str(tmp_path / "promoter")))
    report = finetune("promoter", config)
    assert 0.0 <= report["test"]["rows"]["fine-tuned model"]["auroc"] <= 1.0
    assert HFTokenizer.load(tmp_path / "promoter" / "model").hash == tokenizer.hash  # travels with the model

    sequences = [embedded_default_window(fasta, "chr1", 30_000, 30_400), "ACGT" * 20 + "N" * 30 + "acgt" * 20]
    vectors = embed(model, sequences, pooling="cls_state", eval_length=128, progress=False, device="cpu")
    auto = transformers.AutoTokenizer.from_pretrained(tokenizer_dir)
    batch = auto([s.upper() for s in sequences], padding="max_length", max_length=128, return_tensors="pt")
    with torch.no_grad():
        expected = hf_model.bert(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    assert np.abs(vectors - expected.last_hidden_state[:, 0].numpy()).max() < 1e-4

    ism = saturation_mutagenesis(model, fasta, "chr1:30101-30104", method="mlm_llr", window_bp=200,
                                 progress=False, device="cpu")
    matrix = ism.matrix()
    assert matrix.shape[:2] == (4, 4) and np.isfinite(matrix[:, :, 0]).all()

    shards = build_shards(embedded_default.corpus, tokenizer, tmp_path / "shards", splits=("heldout",))
    evaluation = evaluate_checkpoint(model, shards["heldout"], max_length=256, num_examples=8, batch_size=8,
                                     device="cpu")
    assert evaluation["model"]["masked_tokens"] > 50 and math.isfinite(evaluation["model"]["bits_per_base"])
    assert "nsp_accuracy" not in evaluation["model"]  # an MLM-only import has no NSP head to score


def embedded_default_window(fasta: Path, chrom: str, start: int, end: int) -> str:
    from dnabird.genome.reference import Genome

    return Genome(fasta).fetch(chrom, start, end).sequence
