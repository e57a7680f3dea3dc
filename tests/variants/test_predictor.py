"""Model outputs are checked where they are produced: NaN or infinite values stop scoring, mutagenesis and
embedding with an error naming the model and the inputs, never a table of NA."""

import json
import shutil

import numpy as np
import pytest
import torch

from dnabird.cli import main
from dnabird.errors import NonFiniteOutputError
from dnabird.model.config import tiny
from dnabird.model.heads import PretrainingModel
from dnabird.variants import Variant, embed, saturation_mutagenesis, score_variants
from tests.variants.conftest import CHR1


def corrupt_weights(directory, tensor="encoder.layers.0.attention.query.weight"):
    """Overwrite one tensor's bytes in model.safetensors with 0xFF (NaN in float32): the file still reads."""
    path = directory / "model.safetensors"
    data = bytearray(path.read_bytes())
    size = int.from_bytes(data[:8], "little")
    begin, end = json.loads(data[8:8 + size])[tensor]["data_offsets"]
    data[8 + size + begin:8 + size + end] = b"\xff" * (end - begin)
    path.write_bytes(bytes(data))


def test_a_corrupt_checkpoint_stops_dnabird_score_naming_the_model(classifier_dir, genome_and_vcf, tmp_path, capsys):
    genome, vcf, _ = genome_and_vcf
    broken = shutil.copytree(classifier_dir, tmp_path / "broken")
    corrupt_weights(broken)
    out = tmp_path / "scores.tsv"
    assert main(["-q", "score", "--model", str(broken), "--genome", str(genome), "--vcf", str(vcf), "--out", str(out),
                 "--device", "cpu"]) == 1
    err = capsys.readouterr().err
    assert f"model {broken} produced NaN/inf classifier logits" in err and "chr2:100 " in err
    assert not out.exists()


def test_nan_in_masked_lm_and_hidden_states_is_refused(tokenizer, hand_genome):
    model = PretrainingModel(tiny(vocab_size=tokenizer.vocab_size, num_layers=1), seed=0).eval()
    with torch.no_grad():
        model.encoder.layers[0].attention.query.weight[0, 0] = float("nan")  # as a corrupt weight would
    options = dict(tokenizer=tokenizer, window_bp=21, eval_length=64, progress=False)
    with pytest.raises(NonFiniteOutputError, match=r"model PretrainingModel produced NaN/inf masked-LM "
                                                   r"log-probabilities for 3 of 3 inputs of a batch \(chr1:15 A>C\)"):
        score_variants(model, hand_genome, [Variant("chr1", 15, "A", "C")], **options)
    with pytest.raises(NonFiniteOutputError, match="masked-LM"):
        saturation_mutagenesis(model, hand_genome, "chr1:15-15", **options)
    with pytest.raises(NonFiniteOutputError, match=r"hidden states for 1 of 1 inputs of a batch \(sequence_0\)"):
        embed(model, [CHR1[:20]], tokenizer=tokenizer, eval_length=64, progress=False)
    assert np.isfinite(embed(PretrainingModel(model.config, seed=0), [CHR1[:20]], tokenizer=tokenizer,
                             eval_length=64, progress=False)).all()
