"""Saturation mutagenesis (each matrix entry against that SNV scored alone in the region's window) and
embeddings (against the encoder run directly)."""

import h5py
import numpy as np
import pytest
import torch

from dnabird.errors import ParameterError
from dnabird.genome.reference import Genome
from dnabird.inference.windows import parse_region
from dnabird.model.config import tiny
from dnabird.model.heads import PretrainingModel
from dnabird.variants import Variant, embed, saturation_mutagenesis, score_variants
from tests.variants.conftest import CHR1, MotifCounter, stub_outputs, stub_task


def test_matrix_entries_are_each_snv_scored_alone_in_the_region_window(tokenizer, hand_genome, tmp_path):
    # region chr1:13-16 (1-based) = 0-based [12, 16) "TGAT": centre 12 + 2 = 14, window [9, 20) for every SNV
    result = saturation_mutagenesis(MotifCounter(tokenizer), hand_genome, "chr1:13-16", tokenizer=tokenizer,
                                    task=stub_task(), rc="forward", progress=False)
    assert (result.chrom, result.start, result.end, result.sequence) == ("chr1", 12, 16, "TGAT")
    logits = result.matrix("logit_diff")
    assert logits.shape == (4, 4, 3)
    sigmoid = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
    window = CHR1[9:20]
    for offset in range(4):
        for b, alt in enumerate("ACGT"):
            at = 12 + offset - 9
            mutated = window[:at] + alt + window[at + 1:]
            expected = stub_outputs(mutated) - stub_outputs(window)  # one by one, on the string
            assert logits[offset, b] == pytest.approx(expected), (offset, alt)
            assert result.matrix()[offset, b] == pytest.approx(sigmoid(stub_outputs(mutated)) - sigmoid(
                stub_outputs(window)), abs=1e-12)
    assert (logits["TGAT".index("G"), "ACGT".index("G")] == 0).all()
    result.plot(tmp_path / "ism.png", output="GATA")
    assert (tmp_path / "ism.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_one_base_region_equals_score_variants(tokenizer, hand_genome):
    model = PretrainingModel(tiny(vocab_size=tokenizer.vocab_size, num_layers=1), seed=0)
    options = dict(tokenizer=tokenizer, window_bp=31, eval_length=64, progress=False)
    result = saturation_mutagenesis(model, hand_genome, ("chr1", 20, 21), **options)
    direct = score_variants(model, hand_genome, [Variant("chr1", 21, "T", alt) for alt in "ACG"], **options)
    assert result.scores.outputs == ("llr", "llr_per_bp")
    np.testing.assert_allclose(result.matrix()[0, [0, 1, 2], :], direct.diff, atol=1e-6)
    with pytest.raises(ParameterError, match="window_bp"):
        saturation_mutagenesis(model, hand_genome, "chr1:1-40", **options)
    with pytest.raises(ParameterError, match="region"):
        parse_region("chr1:10")


def test_embeddings_pool_the_encoder_output(tokenizer, hand_genome, tmp_path):
    model = PretrainingModel(tiny(vocab_size=tokenizer.vocab_size, num_layers=1), seed=0).eval()
    regions = [("chr1", 0, 20), ("chr1", 10, 30, "-")]
    cls = embed(model, hand_genome, regions, tokenizer=tokenizer, eval_length=64, out=tmp_path / "e.h5",
                progress=False)
    options = dict(tokenizer=tokenizer, eval_length=64, progress=False)
    pooled = {name: embed(model, Genome(hand_genome), regions, pooling=name, **options)
              for name in ("mean_sequence", "cls", "mean")}
    sequences = [CHR1[0:20], CHR1[10:30].translate(str.maketrans("ACGT", "TGCA"))[::-1]]
    ids, mask = tokenizer.encode_batch(sequences, block_size=64, length=64)
    with torch.no_grad():
        hidden = model.encoder(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()
    np.testing.assert_allclose(cls, hidden[:, 0], atol=1e-5)
    weight, bias = model.encoder.pooler.weight.detach().numpy(), model.encoder.pooler.bias.detach().numpy()
    np.testing.assert_allclose(pooled["cls"], np.tanh(hidden[:, 0] @ weight.T + bias), atol=1e-5)  # the heads' pooler
    for row, sequence in enumerate(sequences):
        n = len(tokenizer.encode(sequence))
        np.testing.assert_allclose(pooled["mean_sequence"][row], hidden[row, 1:n + 1].mean(0), atol=1e-5)
        np.testing.assert_allclose(pooled["mean"][row], hidden[row, :n + 2].mean(0), atol=1e-5)  # [CLS] … [SEP]
    with h5py.File(tmp_path / "e.h5") as f:
        np.testing.assert_allclose(f["embeddings"][:], cls, atol=1e-6)
        assert list(f["names"].asstr()) == ["chr1:0-20:+", "chr1:10-30:-"] and f.attrs["pooling"] == "cls_state"
    mean_model = PretrainingModel(tiny(vocab_size=tokenizer.vocab_size, num_layers=1, pooling="mean"), seed=0)
    with pytest.raises(ParameterError, match="no \\[CLS\\] pooler.*'cls_state'"):
        embed(mean_model, sequences, pooling="cls", **options)
    with pytest.raises(ParameterError, match="pooling"):
        embed(model, sequences, pooling="max", **options)
    plain = embed(model, sequences, tokenizer=tokenizer, eval_length=64, progress=False)
    np.testing.assert_allclose(plain, cls, atol=1e-6)
