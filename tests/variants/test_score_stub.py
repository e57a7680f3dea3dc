"""`score_variants` plumbing with a stand-in classifier whose logits are [GATA count, index of the first
GATA, centre base is A] of the window it reads: every expected value below is worked out by hand on CHR1.

    0         1         2         3
    0123456789012345678901234567890123456789
    ACGTGATAACCTTGATACGGTTATCGCCGATACGTTTAAC     GATA at 4, 13, 28; TATC (minus-strand GATA) at 21
"""

import math

import numpy as np
import pytest

from dnabird.errors import ParameterError
from dnabird.model.config import tiny
from dnabird.model.heads import PretrainingModel
from dnabird.variants import Variant, score_variants
from dnabird.variants.predictor import Predictor
from dnabird.variants.score import resolve_setup
from tests.variants.conftest import MotifCounter, stub_task, write_fasta

HEADER = "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"


def vcf(path, *records):
    path.write_text(HEADER + "".join("\t".join(map(str, (*r, ".", ".", "."))) + "\n" for r in records))
    return path


def score(tokenizer, genome, variants, task=None, **options):
    model = MotifCounter(tokenizer)
    return score_variants(model, genome, variants, tokenizer=tokenizer, task=task or stub_task(), progress=False,
                          device="cpu", **options), model


def logit_diffs(scores):
    return {(r.pos, r.alt, r.feature): tuple(row) for r, row in zip(scores.units.itertuples(), scores.logit_diff,
                                                                       strict=True)}


def test_snv_indels_and_reverse_complement_averaging(tokenizer, hand_genome, tmp_path):
    path = vcf(tmp_path / "v.vcf", ("chr1", 15, "snv", "A", "C"), ("chr1", 20, "ins", "G", "GGATA"),
               ("chr1", 14, "del", "GATAC", "G"))
    forward, _ = score(tokenizer, hand_genome, path, rc="forward")
    # SNV: window CCTTGATACGG -> CCTTGCTACGG: GATA 1 -> 0, first 4 -> -1, centre A -> C
    # insertion: ATACGGTTATC -> ACGGGATATTA: GATA 0 -> 1, first -1 -> 4, centre G -> A
    # deletion: CTTGATACGGT -> ACCTTGGGTTA: GATA 1 -> 0, first 3 -> -1, centre T -> G
    assert logit_diffs(forward) == {(15, "C", "."): (-1, -5, -1), (20, "GGATA", "."): (1, 5, 1),
                                    (14, "G", "."): (-1, -4, 0)}
    assert list(forward.units["strand"]) == ["+"] * 3
    both, model = score(tokenizer, hand_genome, path)  # the task's strand rule "both": forward and RC averaged
    # reverse complements: no GATA in CCGTATCAAGG / CCGTAGCAAGG, centre T / G: every RC difference is 0
    assert logit_diffs(both)[(15, "C", ".")] == (-0.5, -2.5, -0.5)
    sigmoid = [1 / (1 + math.exp(-x)) for x in (1, 4, 1, 0, -1, 0)]  # SNV REF logits forward, then RC
    assert both.ref[0] == pytest.approx([(sigmoid[0] + sigmoid[3]) / 2, (sigmoid[1] + sigmoid[4]) / 2,
                                         (sigmoid[2] + sigmoid[5]) / 2], abs=1e-12)
    assert np.allclose(both.diff, both.alt - both.ref) and list(both.units["strand"]) == ["both"] * 3
    assert sum(model.batch_sizes) == 12  # 3 variants x (REF, ALT) x 2 strands


def test_tss_windows_are_stranded_and_never_averaged(tokenizer, hand_genome, tmp_path):
    tss = tmp_path / "tss.bed"
    tss.write_text("chr1\t18\t19\tP_plus\t0\t+\nchr1\t25\t26\tP_minus\t0\t-\n")
    task = stub_task(anchor="tss:-6:+5", strand_rule="feature")
    path = vcf(tmp_path / "v.vcf", ("chr1", 23, "both", "A", "G"), ("chr1", 4, "none", "T", "G"))
    scores, _ = score(tokenizer, hand_genome, path, task=task, tss=tss)
    # + window [12, 23): TGATACGGTTA -> TGATACGGTTG, nothing changes; - window [21, 32) read on the minus
    # strand: TATCGGCGATA -> TATCGGCGACA, its GATA (the TATC at 21) broken: 1 -> 0, first 7 -> -1
    assert logit_diffs(scores) == {(23, "G", "P_plus"): (0, 0, 0), (23, "G", "P_minus"): (-1, -8, 0)}
    assert list(scores.units["strand"]) == ["+", "-"]
    assert list(scores.units["window_start"]) == [12, 21] and list(scores.units["window_end"]) == [23, 32]
    assert scores.skipped[["pos", "reason"]].values.tolist() == [[4, "in no TSS window"]]
    with pytest.raises(ParameterError, match="strand-specific"):
        score(tokenizer, hand_genome, path, task=task, tss=tss, rc="average")
    with pytest.raises(ParameterError, match="TSS BED"):
        score(tokenizer, hand_genome, path, task=task)


def test_ref_mismatch_multiallelic_and_unscorable_records(tokenizer, hand_genome, tmp_path):
    path = vcf(tmp_path / "v.vcf", ("chr1", 15, "multi", "a", "C,G,<DEL>"), ("chr1", 15, "wrong", "T", "C"),
               ("chr1", 10, "bnd", "C", "C[chr1:20["), ("chr1", 11, "star", "C", "*"), ("chr1", 12, "none", "T", "."),
               ("chr1", 13, "nref", "N", "A"), ("chr1", 41, "past", "A", "C"), ("chrZ", 5, "chrz", "A", "C"),
               ("MT", 2, "mt", "C", "A"), ("chrM", 2, "chrm", "C", "A"), ("chr1", 20, "long", "G", "G" + "A" * 12))
    scores, _ = score(tokenizer, hand_genome, path, rc="forward")
    assert [(r.id, r.alt, r.ref_match) for r in scores.units.itertuples()] == [
        ("multi", "C", True), ("multi", "G", True), ("chrm", "A", True)]
    # A>G at 14: CCTTGATACGG -> CCTTGGTACGG: GATA 1 -> 0, first 4 -> -1, centre A -> G
    assert logit_diffs(scores)[(15, "G", ".")] == (-1, -5, -1)
    assert dict(zip(scores.skipped["id"], scores.skipped["reason"], strict=True)) == {
        "multi": "symbolic ALT", "wrong": "REF mismatch", "bnd": "breakend ALT", "star": "spanning-deletion ALT *",
        "none": "no ALT allele", "nref": "REF not A/C/G/T", "past": "outside the chromosome",
        "chrz": "unknown chromosome", "mt": "unknown chromosome", "long": "allele does not fit the window"}
    assert scores.summary() == {"scored_alleles": 3, "scored_windows": 3, "skipped_alleles": 10, "ref_mismatches": 1,
                                "skipped_by_reason": {
                                    "REF mismatch": 1, "REF not A/C/G/T": 1, "allele does not fit the window": 1,
                                    "breakend ALT": 1, "no ALT allele": 1, "outside the chromosome": 1,
                                    "spanning-deletion ALT *": 1, "symbolic ALT": 1, "unknown chromosome": 2}}
    kept, _ = score(tokenizer, hand_genome, path, rc="forward", on_ref_mismatch="genome")
    wrong = kept.units[kept.units["id"] == "wrong"]
    assert wrong["ref_match"].tolist() == [False]  # scored with the genome's A: as A>C above
    assert tuple(kept.logit_diff[wrong.index[0]]) == (-1, -5, -1)


def test_variant_objects_and_chromosome_ends(tokenizer, hand_genome):
    variants = [Variant("chr1", 2, "C", "T", "start"), Variant("chr1", 40, "C", "G", "end"),
                Variant("chr1", 15, "A", "C,G", "split")]
    scores, _ = score(tokenizer, hand_genome, variants, rc="forward")
    assert scores.units[["id", "allele", "pad_left", "pad_right"]].values.tolist() == [
        ["start", 1, True, False], ["end", 1, False, True], ["split", 1, False, False], ["split", 2, False, False]]
    # NNNNACGTGAT -> NNNNATGTGAT and TTTAACNNNNN -> TTTAAGNNNNN: no GATA, centre C/T and C/G: all 0
    assert scores.logit_diff[:2].tolist() == [[0, 0, 0], [0, 0, 0]]
    assert list(scores.units["window_start"][:2]) == [-4, 34]


def test_batch_size_counts_sequences_per_model_call(tokenizer, hand_genome, tmp_path):
    genome = write_fasta(tmp_path / "g.fa", {"chr1": "ACGT" * 30})
    variants = [Variant("chr1", p, "ACGT"[(p - 1) % 4], "N") for p in range(20, 40)]
    one, model = score(tokenizer, genome, variants, batch_size=7)
    assert max(model.batch_sizes) == 7 and sum(model.batch_sizes) == 80


def test_window_and_length_defaults_of_a_pretrained_model(tokenizer):
    predictor = Predictor.load(PretrainingModel(tiny(vocab_size=tokenizer.vocab_size, num_layers=1)),
                               tokenizer=tokenizer, device="cpu")
    assert (resolve_setup(predictor).window_bp, resolve_setup(predictor).eval_length) == (4094, 4096)
    assert resolve_setup(predictor, window_bp=100).eval_length == 128  # 102 tokens at most, in blocks of 64
    assert resolve_setup(predictor, eval_length=256).window_bp == 254
    assert resolve_setup(predictor).method == "mlm_llr" and resolve_setup(predictor).rc
    with pytest.raises(ParameterError, match="eval_length"):
        resolve_setup(predictor, eval_length=100)
    with pytest.raises(ParameterError, match="method"):
        resolve_setup(predictor, method="head")
