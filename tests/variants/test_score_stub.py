"""`score_variants` plumbing with a stand-in classifier whose logits are [GATA count, index of the first
GATA, centre base is A] of the window it reads: every expected value below is worked out by hand on CHR1.

    0         1         2         3
    0123456789012345678901234567890123456789
    ACGTGATAACCTTGATACGGTTATCGCCGATACGTTTAAC     GATA at 4, 13, 28; TATC (minus-strand GATA) at 21
"""

import math

import numpy as np
import pysam
import pytest

from dnabird.errors import ParameterError
from dnabird.inference.predictor import Predictor
from dnabird.model.bp_per_token import BpPerToken, write_bp_per_token
from dnabird.model.checkpoint import save_checkpoint
from dnabird.model.config import tiny
from dnabird.model.heads import PretrainingModel
from dnabird.model.task_spec import TaskSpec
from dnabird.variants import Variant, saturation_mutagenesis, score_variants
from dnabird.variants.score import TOKEN_HEADROOM, resolve_setup
from tests.variants.conftest import CHR1, STUB_LABELS, MotifCounter, stub_outputs, stub_task, write_fasta

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
    assert scores.summary() == {"scored_alleles": 3, "scored_windows": 3, "clipped_windows": 0, "skipped_alleles": 10,
                                "ref_mismatches": 1, "skipped_by_reason": {
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


def test_window_and_length_defaults_of_a_pretrained_model(tokenizer, tmp_path):
    model = PretrainingModel(tiny(vocab_size=tokenizer.vocab_size, num_layers=1))
    predictor = Predictor.load(model, tokenizer=tokenizer, device="cpu")
    contig = "".join(np.random.default_rng(2).choice(list("ACGT"), size=64_000))
    bp_per_token = len(contig) / len(tokenizer.encode(contig))  # random DNA, as the reference sequence
    default = resolve_setup(predictor)  # a loaded model: the tokenizer's figure on the reference sequence
    assert default.bp_per_token == pytest.approx(bp_per_token, rel=0.02)
    assert default.bp_per_token_source.startswith("reference")
    # the model's full length, filled by an odd window at that bp per token (with the headroom)
    assert default.eval_length == 4096 and default.window_bp % 2 == 1
    assert default.window_bp == pytest.approx(4094 * bp_per_token / TOKEN_HEADROOM, rel=0.02)
    sized = resolve_setup(predictor, window_bp=1001)  # the smallest block multiple it needs
    needed = 1001 / bp_per_token * TOKEN_HEADROOM + 2
    assert sized.eval_length % 64 == 0 and needed * 0.98 <= sized.eval_length < needed * 1.02 + 64
    assert max(len(tokenizer.encode(contig[i:i + 1001])) for i in range(0, 63_000, 250)) + 2 <= sized.eval_length
    assert resolve_setup(predictor, eval_length=256).window_bp % 2 == 1
    # a given figure: one bp per token, the most any window can need
    given = resolve_setup(predictor, window_bp=100, bp_per_token=1.0)
    assert (given.eval_length, given.bp_per_token_source) == (128, "given")  # 100 * 1.25 + 2 tokens, in 64s
    assert resolve_setup(predictor, bp_per_token=1).window_bp == 3275  # the odd length below 4094 / 1.25
    # the figure stored with a checkpoint
    directory = save_checkpoint(model, tmp_path / "model", tokenizer_files=(tokenizer.path,))
    write_bp_per_token(directory, BpPerToken(2.5, "measured by hand"))
    stored = resolve_setup(Predictor.load(directory, device="cpu"), checkpoint=directory)
    assert (stored.bp_per_token, stored.bp_per_token_source, stored.window_bp) == (2.5, "measured by hand", 8187)
    assert resolve_setup(predictor).method == "mlm_llr" and resolve_setup(predictor).rc
    with pytest.raises(ParameterError, match="eval_length"):
        resolve_setup(predictor, eval_length=100)
    with pytest.raises(ParameterError, match="method"):
        resolve_setup(predictor, method="head")
    with pytest.raises(ParameterError, match="bp_per_token"):
        resolve_setup(predictor, bp_per_token=0)
    with pytest.raises(ParameterError, match="bp_per_token=2.0 is invalid: expected None: the model's task.json"):
        resolve_setup(Predictor.load(MotifCounter(tokenizer), tokenizer=tokenizer, task=stub_task()), bp_per_token=2.0)


def test_windows_near_contig_ends_and_a_10_kb_gap_are_clipped_to_fit_a_head(tokenizer, tmp_path):
    rng = np.random.default_rng(11)
    random = lambda n: "".join(rng.choice(list("ACGT"), n))  # noqa: E731
    chroms = {"edge": random(5000), "gap": random(3000) + "N" * 10_000 + random(3000)}
    genome = write_fasta(tmp_path / "g.fa", chroms)
    # a 2,001-bp window of random DNA is ~815 tokens; N padding is one token per N, so most windows that reach
    # 100 bp or more past an end or into the gap exceed 960 tokens
    task = TaskSpec(task="stub", problem="multilabel", labels=STUB_LABELS, eval_length=960, window_length=2001,
                    anchor="centre", strand_rule="both")
    starts = {"edge": [0, 100, 1000, 4999, 4899, 3999], "gap": [2999, 2899, 1999, 13_000, 13_100, 14_000]}
    variants = [Variant(chrom, v + 1, chroms[chrom][v], "ACGT"[("ACGT".index(chroms[chrom][v]) + 1) % 4], f"{chrom}{v}")
                for chrom, positions in starts.items() for v in positions]
    scores, _ = score(tokenizer, genome, variants, task=task, rc="forward")
    assert scores.skipped.empty and scores.units["id"].tolist() == [v.id for v in variants]
    for row, variant in zip(scores.units.itertuples(), variants, strict=True):
        sequence, v = chroms[variant.chrom], variant.start
        low = sequence.rfind("N", 0, v) + 1   # the N-free stretch around the variant, clipped to the window
        high = sequence.find("N", v) if "N" in sequence[v:] else len(sequence)
        start, end = max(low, v - 1000), min(high, v + 1001)
        assert (row.window_start, row.window_end) == (start, end), variant
        assert (row.clip_left, row.clip_right) == (start - (v - 1000), v + 1001 - end), variant
        ref = sequence[start:end]
        alt = ref[:v - start] + variant.alt + ref[v - start + 1:]
        assert scores.logit_diff[row.Index] == pytest.approx(stub_outputs(alt) - stub_outputs(ref)), variant
    assert scores.summary()["clipped_windows"] == 8  # the windows 1 bp and 100 bp from an end or the gap
    assert not scores.units[["pad_left", "pad_right"]].to_numpy().any()  # the padding is clipped away


def test_a_window_with_a_base_other_than_acgtn_is_that_variants_skip_reason(tokenizer, tmp_path):
    genome = write_fasta(tmp_path / "ancestral.fa", {"chr1": "ACGTGATAAC" "CTTGA.ACGG" "TTATCGCCGA" "TACGTTTAAC"})
    variants = [Variant("chr1", 11, "C", "A", "near"), Variant("chr1", 30, "A", "G", "far")]
    scores, _ = score(tokenizer, genome, variants, rc="forward")  # 11-bp windows: [5, 16) holds the '.'
    assert scores.units["id"].tolist() == ["far"]
    assert scores.skipped[["id", "reason"]].values.tolist() == [["near", "invalid base in window"]]
    assert "invalid base '.' at 0-based position 15" in scores.skipped["detail"][0]


def test_annotated_vcf_flags_ref_mismatches_and_clipped_windows(tokenizer, hand_genome, tmp_path):
    path = vcf(tmp_path / "v.vcf", ("chr1", 15, "wrong", "T", "C"), ("chr1", 2, "edge", "C", "T"),
               ("chr1", 20, "plain", "G", "A"))
    kept, _ = score(tokenizer, hand_genome, path, rc="forward", on_ref_mismatch="genome")  # 11 bp: nothing clipped
    kept.to_vcf(tmp_path / "kept.vcf", path)
    records = {r.id: r for r in pysam.VariantFile(str(tmp_path / "kept.vcf"))}
    assert [name for name, r in records.items() if "DNABIRD_REF_MISMATCH" in r.info] == ["wrong"]
    assert not any("DNABIRD_CLIPPED" in r.info for r in records.values())
    clipped = kept.units.copy()
    clipped.loc[clipped["id"] == "edge", "clip_left"] = 4  # as if the padding had been clipped
    kept.units = clipped
    kept.to_vcf(tmp_path / "clipped.vcf", path)
    records = {r.id: r for r in pysam.VariantFile(str(tmp_path / "clipped.vcf"))}
    assert [name for name, r in records.items() if "DNABIRD_CLIPPED" in r.info] == ["edge"]


class RecordingBar:
    """A stand-in progress bar (over an iterable, or updated by hand): its count, and the count at each model
    call."""

    def __init__(self, iterable=None, **options):
        self.iterable, self.n, self.total, self.at_calls = iterable, 0, options.get("total"), []

    def __iter__(self):
        for item in self.iterable:
            yield item
            self.n += 1

    def update(self, count=1):
        self.n += count

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_progress_advances_with_the_model_calls(tokenizer, hand_genome, monkeypatch):
    from dnabird.variants import ism
    from dnabird.variants import score as score_module

    bars = []
    monkeypatch.setattr(score_module, "progress_bar", lambda *a, **k: bars.append(RecordingBar(*a, **k)) or bars[-1])
    monkeypatch.setattr(ism, "progress_bar", lambda *a, **k: bars.append(RecordingBar(*a, **k)) or bars[-1])
    model = MotifCounter(tokenizer)
    original = model.forward
    model.forward = lambda *a, **k: (bars[-1].at_calls.append(bars[-1].n), original(*a, **k))[1]
    variants = [Variant("chr1", p, CHR1[p - 1], "ACGT"[("ACGT".index(CHR1[p - 1]) + 1) % 4]) for p in range(10, 30)]
    score_variants(model, hand_genome, variants, tokenizer=tokenizer, task=stub_task(), device="cpu", rc="forward",
                   batch_size=4)
    # 20 windows of 2 rows each, 4 rows per call: each call starts where the previous calls' windows end
    assert bars[-1].at_calls == list(range(0, 20, 2)) and bars[-1].n == 20
    saturation_mutagenesis(model, hand_genome, "chr1:13-16", tokenizer=tokenizer, task=stub_task(), rc="forward",
                           batch_size=6)
    assert bars[-1].total == 12 and bars[-1].at_calls == [0, 3, 6, 9] and bars[-1].n == 12
