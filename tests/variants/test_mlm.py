"""mlm_llr: the masked span on hand-made tokenizations, and the scores of a tiny random masked LM against
a brute-force computation (every SNV of a stretch, and indels), one forward pass per masked sequence."""

import numpy as np
import pytest
import torch

from dnabird.genome.reference import Genome, reverse_complement
from dnabird.model.config import tiny
from dnabird.model.heads import PretrainingModel
from dnabird.variants import Variant, score_variants
from dnabird.variants.mlm import MaskedSpan, masked_spans
from dnabird.variants.windows import AlleleWindows, centred_windows
from tests.variants.conftest import write_fasta


def windows(ref, alt, ref_at, ref_length, alt_at, alt_length):
    return AlleleWindows(ref, alt, ref_at, alt_at, ref_length, alt_length, 0, len(ref), "+", False, False)


def test_masked_span_grows_until_both_tokenizations_end_on_a_boundary():
    # SNV at bp 5. REF tokens [0,4) [4,6) [6,8) [8,10); ALT tokens [0,4) [4,5) [5,7) [7,10).
    # REF token [4,6) -> span [4,6); ALT needs [4,5) [5,7) -> [4,7); REF then [4,8); ALT then [4,10); REF agrees.
    snv = windows("AAAACCCCGG", "AAAACGCCGG", 5, 1, 5, 1)
    ref, alt = masked_spans(snv, [(0, 4), (4, 6), (6, 8), (8, 10)], [(0, 4), (4, 5), (5, 7), (7, 10)])
    assert (ref, alt) == (MaskedSpan(1, 4, 6), MaskedSpan(1, 4, 6))
    # with coinciding tokens and no flank, only the variant's own token is masked
    same = masked_spans(snv, [(0, 4), (4, 6), (6, 10)], [(0, 4), (4, 6), (6, 10)])
    assert same == (MaskedSpan(1, 2, 2), MaskedSpan(1, 2, 2))
    # a 2-bp flank reaches into both neighbours
    assert masked_spans(snv, [(0, 4), (4, 6), (6, 10)], [(0, 4), (4, 6), (6, 10)], flank=2)[0] == MaskedSpan(0, 3, 10)
    # deletion of bp 5-6 (REF 4:7 -> ALT 4:5): REF [0,2) [2,5) [5,7) [7,10); ALT [0,3) [3,4) [4,6) [6,8)
    deletion = windows("ACGTACGTAC", "ACGTATAC", 4, 3, 4, 1)
    ref, alt = masked_spans(deletion, [(0, 2), (2, 5), (5, 7), (7, 10)], [(0, 3), (3, 4), (4, 6), (6, 8)])
    assert (ref, alt) == (MaskedSpan(0, 4, 10), MaskedSpan(0, 4, 8))


def brute_force_spans(spans_ref, spans_alt, w, flank):
    """The smallest left/right extents >= flank at which both sequences are cut on token boundaries
    (or run past their ends), found by trying every extent."""
    bounds = [{0} | {e for _, e in spans} for spans in (spans_ref, spans_alt)]
    lengths = [spans_ref[-1][1], spans_alt[-1][1]]
    starts, stops = [w.ref_at, w.alt_at], [w.ref_at + w.ref_length, w.alt_at + w.alt_length]
    left = next(e for e in range(flank, 10_000)
                if all(s - e <= 0 or s - e in b for s, b in zip(starts, bounds, strict=True)))
    right = next(e for e in range(flank, 10_000)
                 if all(t + e >= n or t + e in b for t, n, b in zip(stops, lengths, bounds, strict=True)))
    return [[i for i, (a, b) in enumerate(spans) if a >= max(0, s - left) and b <= min(n, t + right)]
            for spans, s, t, n in zip((spans_ref, spans_alt), starts, stops, lengths, strict=True)]


def brute_force_log_likelihood(model, tokenizer, sequence, masked, length):
    """log p(true tokens) at `masked`, each sequence run alone through the model's full logits."""
    ids = tokenizer.encode(sequence)
    inputs = [tokenizer.cls_id] + [tokenizer.mask_id if i in masked else t for i, t in enumerate(ids)] + [
        tokenizer.sep_id]
    tensor = torch.tensor([inputs + [tokenizer.pad_id] * (length - len(inputs))])
    with torch.no_grad():
        logits = model(tensor, tensor != tokenizer.pad_id).mlm_logits[0].double().log_softmax(-1)
    return sum(float(logits[i + 1, ids[i]]) for i in masked)


def brute_force_llr(model, tokenizer, w, flank, length):
    spans = [tokenizer.offsets(w.ref), tokenizer.offsets(w.alt)]
    masked = brute_force_spans(*spans, w, flank)
    values = [brute_force_log_likelihood(model, tokenizer, seq, set(m), length)
              for seq, m in zip((w.ref, w.alt), masked, strict=True)]
    bps = [spans[k][masked[k][-1]][1] - spans[k][masked[k][0]][0] for k in range(2)]
    return values, bps


@pytest.fixture(scope="module")
def tiny_mlm(tokenizer):
    config = tiny(vocab_size=tokenizer.vocab_size, dropout=0.0, attention_dropout=0.0, num_layers=1)
    return PretrainingModel(config, seed=3).eval()


def test_llr_matches_brute_force_for_every_snv_and_indels(tokenizer, tiny_mlm, tmp_path):
    rng = np.random.default_rng(1)
    chrom = "".join(rng.choice(list("ACGT"), size=400))
    genome = write_fasta(tmp_path / "g.fa", {"chr1": chrom})
    variants = [Variant("chr1", p, chrom[p - 1], alt) for p in range(200, 203) for alt in "ACGT" if alt != chrom[p - 1]]
    variants += [Variant("chr1", 210, chrom[209:214], chrom[209]),
                 Variant("chr1", 220, chrom[219], chrom[219] + "GATTACA")]
    length, window = 192, 101  # 3 blocks of 64: [CLS] + at most 101 tokens + [SEP]
    rows = []
    hook = tiny_mlm.register_forward_hook(lambda module, args, out: rows.append(len(args[0])))
    for flank, rc in ((0, "forward"), (3, "average")):
        rows.clear()
        scores = score_variants(tiny_mlm, genome, variants, method="mlm_llr", tokenizer=tokenizer, rc=rc,
                                window_bp=window, eval_length=length, flank_bp=flank, batch_size=5, progress=False)
        assert scores.outputs == ("llr", "llr_per_bp") and len(scores.units) == len(variants)
        passes = len(variants) * (1 if rc == "forward" else 2)  # windows scored
        assert passes < sum(rows) < 2 * passes  # SNVs whose masked REF and ALT inputs coincide share one pass
        for row, variant in enumerate(variants):
            w = centred_windows(Genome(genome), variant, window)
            if len(variant.ref) == len(variant.alt) == 1:  # SNV: the window is a plain slice
                start = variant.start - window // 2
                alt = chrom[start:variant.start] + variant.alt + chrom[variant.start + 1:start + window]
                assert (w.ref, w.alt) == (chrom[start:start + window], alt)
            strands = [w] if rc == "forward" else [w, w.reverse_complement()]
            expected = [brute_force_llr(tiny_mlm, tokenizer, s, flank, length) for s in strands]
            ref = np.mean([[v[0], v[0] / bp[0]] for v, bp in expected], axis=0)
            alt = np.mean([[v[1], v[1] / bp[1]] for v, bp in expected], axis=0)
            assert scores.ref[row] == pytest.approx(ref, abs=1e-4), variant
            assert scores.alt[row] == pytest.approx(alt, abs=1e-4), variant
            assert scores.diff[row, 0] == pytest.approx(alt[0] - ref[0], abs=1e-4)
        assert np.isnan(scores.logit_diff).all()
    hook.remove()


def test_default_windows_are_odd_so_both_strands_of_the_genome_score_a_variant_alike(tokenizer, tiny_mlm, tmp_path):
    half = "".join(np.random.default_rng(4).choice(list("ACGT"), size=1500))
    chrom = half + reverse_complement(half)  # its own reverse complement: position p mirrors 3001 - p
    genome = write_fasta(tmp_path / "g.fa", {"chr1": chrom})
    complement = str.maketrans("ACGT", "TGCA")
    variants = [Variant("chr1", p, chrom[p - 1], alt) for p in (700, 1200) for alt in "ACGT" if alt != chrom[p - 1]]
    mirrored = [Variant("chr1", 3001 - v.pos, v.ref.translate(complement), v.alt.translate(complement))
                for v in variants]
    options = dict(method="mlm_llr", tokenizer=tokenizer, eval_length=256, progress=False)  # the window: default
    forward = score_variants(tiny_mlm, genome, variants, **options)
    reverse = score_variants(tiny_mlm, genome, mirrored, **options)
    assert forward.settings["window_bp"] % 2 == 1
    np.testing.assert_allclose(forward.diff, reverse.diff, rtol=0, atol=1e-5)
