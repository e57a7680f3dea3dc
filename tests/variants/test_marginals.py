"""Shared-pass masked marginals (`dnabird.variants.marginals`): a window that holds one variant scores as the
exact method; two variants sharing a pass score as a masked input built here by hand, run once; masked spans
of a pass lie the set distance apart, and closer variants go to separate passes."""

import numpy as np
import pytest
import torch

from dnabird.errors import ParameterError
from dnabird.model.config import tiny
from dnabird.model.heads import PretrainingModel
from dnabird.variants import Variant, score_variants
from tests.variants.conftest import write_fasta

WINDOW, LENGTH = 301, 256  # 4 blocks of 64


@pytest.fixture(scope="module")
def tiny_mlm(tokenizer):
    config = tiny(vocab_size=tokenizer.vocab_size, dropout=0.0, attention_dropout=0.0, num_layers=1)
    return PretrainingModel(config, seed=3).eval()


@pytest.fixture(scope="module")
def chrom():
    return "".join(np.random.default_rng(7).choice(list("ACGT"), size=3000))


def snv(chrom, pos):
    return Variant("chr1", pos, chrom[pos - 1], "ACGT"[("ACGT".index(chrom[pos - 1]) + 1) % 4])


def scored(model, tokenizer, genome, variants, **options):
    return score_variants(model, genome, variants, method="mlm_llr", tokenizer=tokenizer, window_bp=WINDOW,
                          eval_length=LENGTH, batch_size=4, progress=False, **options)


def test_a_window_holding_one_variant_scores_as_the_exact_method(tokenizer, tiny_mlm, chrom, tmp_path):
    genome = write_fasta(tmp_path / "g.fa", {"chr1": chrom})
    # far apart (more than half a window), or too close to share: every pass holds one variant
    variants = [snv(chrom, p) for p in (400, 420, 900, 905, 1400, 2000)]
    for rc in ("forward", "average"):
        exact = scored(tiny_mlm, tokenizer, genome, variants, rc=rc, variants_per_pass=1)
        shared = scored(tiny_mlm, tokenizer, genome, variants, rc=rc, variants_per_pass=8, pass_spacing_bp=50)
        assert exact.settings["variants_per_pass"] == 1 and shared.settings["variants_per_pass"] == 8
        np.testing.assert_allclose(shared.ref, exact.ref, rtol=0, atol=1e-6)
        np.testing.assert_allclose(shared.alt, exact.alt, rtol=0, atol=1e-6)
        assert (shared.units["window_start"] == exact.units["window_start"]).all()


def hand_built_llr(model, tokenizer, window: str, snvs: list[tuple[int, str]]) -> list[tuple[float, float]]:
    """(log P(REF token), log P(ALT token)) of each SNV (index in `window`, ALT base), each SNV's token
    masked at once in one input; SNVs must change only their own token."""
    ids, spans = tokenizer.encode(window), tokenizer.offsets(window)
    masked, picks = list(ids), []
    for at, base in snvs:
        token = next(i for i, (s, e) in enumerate(spans) if s <= at < e)
        alt_ids = tokenizer.encode(window[:at] + base + window[at + 1:])
        assert len(alt_ids) == len(ids) and sum(a != b for a, b in zip(alt_ids, ids, strict=True)) == 1
        masked[token] = tokenizer.mask_id
        picks.append((token, ids[token], alt_ids[token]))
    row = [tokenizer.cls_id] + masked + [tokenizer.sep_id]
    tensor = torch.tensor([row + [tokenizer.pad_id] * (LENGTH - len(row))])
    with torch.no_grad():
        log_probs = model(tensor, tensor != tokenizer.pad_id).mlm_logits[0].double().log_softmax(-1)
    return [(float(log_probs[t + 1, ref]), float(log_probs[t + 1, alt])) for t, ref, alt in picks]


def changes_one_token(tokenizer, window: str, at: int, base: str) -> bool:
    ids, alt = tokenizer.encode(window), tokenizer.encode(window[:at] + base + window[at + 1:])
    return len(ids) == len(alt) and sum(a != b for a, b in zip(alt, ids, strict=True)) == 1


def test_two_variants_sharing_a_pass_score_as_one_hand_built_masked_input(tokenizer, tiny_mlm, chrom, tmp_path):
    genome = write_fasta(tmp_path / "g.fa", {"chr1": chrom})
    # two SNVs 80 bp apart whose ALT changes only their own token in the shared window
    pairs = ((a, a + 80) for a in range(1000, 2000, 7))
    rows = []
    hook = tiny_mlm.register_forward_hook(lambda module, args, out: rows.append(len(args[0])))
    for first, second in pairs:
        variants = [snv(chrom, first), snv(chrom, second)]
        rows.clear()
        scores = scored(tiny_mlm, tokenizer, genome, variants, rc="forward", pass_spacing_bp=50)
        start, end = scores.units["window_start"].iloc[0], scores.units["window_end"].iloc[0]
        assert (scores.units["window_start"] == start).all()  # one shared window
        window = chrom[start:end]
        if all(changes_one_token(tokenizer, window, v.start - start, v.alt) for v in variants):
            break
    else:
        pytest.fail("no pair of SNVs that change one token each")
    hook.remove()
    assert sum(rows) == 1  # one pass serves both variants
    expected = hand_built_llr(tiny_mlm, tokenizer, window, [(v.start - start, v.alt) for v in variants])
    for n, (ref, alt) in enumerate(expected):
        assert scores.ref[n, 0] == pytest.approx(ref, abs=1e-5)
        assert scores.alt[n, 0] == pytest.approx(alt, abs=1e-5)
    exact = scored(tiny_mlm, tokenizer, genome, variants, rc="forward", variants_per_pass=1)
    assert not np.allclose(exact.ref[:, 0], scores.ref[:, 0], rtol=0, atol=1e-6)  # other context: not the exact scores


def test_masked_spans_of_a_pass_lie_the_set_distance_apart(tokenizer, tiny_mlm, chrom, tmp_path):
    genome = write_fasta(tmp_path / "g.fa", {"chr1": chrom})
    positions = list(range(500, 1400, 23))  # denser than the spacing: neighbours must go to separate passes
    variants = [snv(chrom, p) for p in positions]
    inputs = []
    hook = tiny_mlm.register_forward_hook(lambda module, args, out: inputs.extend(args[0].tolist()))
    spacing = 60
    scores = scored(tiny_mlm, tokenizer, genome, variants, rc="forward", variants_per_pass=4,
                    pass_spacing_bp=spacing)
    hook.remove()
    assert len(scores.units) == len(variants)
    assert len(inputs) < len(variants)  # passes are shared
    most = 0
    for row in inputs:
        tokens = [t for t in row if t not in (tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)]
        runs, gap, gaps = 0, None, []  # masked runs, and the bp between consecutive runs
        for token, previous in zip(tokens, [None] + tokens, strict=False):
            if token == tokenizer.mask_id and previous != tokenizer.mask_id:
                runs += 1
                if gap is not None:
                    gaps.append(gap)
                gap = 0
            elif token != tokenizer.mask_id and gap is not None:
                gap += len(tokenizer.decode([token]))
        assert all(g >= spacing for g in gaps), gaps
        most = max(most, runs)
    assert 2 <= most <= 4
    # variants closer than the spacing never share a window
    shared = scores.units.groupby(["window_start", "window_end"])["pos"].apply(sorted)
    for members in shared:
        assert all(b - a >= spacing for a, b in zip(members, members[1:], strict=False)), members


def test_bf16_scores_track_fp32_and_bad_settings_are_refused(tokenizer, tiny_mlm, chrom, tmp_path):
    genome = write_fasta(tmp_path / "g.fa", {"chr1": chrom})
    variants = [snv(chrom, p) for p in (600, 700, 1500)]
    fp32 = scored(tiny_mlm, tokenizer, genome, variants)
    bf16 = scored(tiny_mlm, tokenizer, genome, variants, precision="bf16")
    assert bf16.settings["precision"] == "bf16"
    np.testing.assert_allclose(bf16.diff, fp32.diff, rtol=0, atol=0.1)
    for options in (dict(variants_per_pass=0), dict(pass_spacing_bp=-1), dict(precision="fp8")):
        with pytest.raises(ParameterError):
            scored(tiny_mlm, tokenizer, genome, variants, **options)
