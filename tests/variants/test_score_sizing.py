"""`mlm_llr` scores depend on the variant and the model only: not on the strand the FASTA is written on, the
other contigs of the FASTA (a decoy, a line of digits), the eval_length a window is padded under, the batch
size or the windows sharing a batch. On the embedded default's tiny pretrained checkpoint at its defaults."""

import json

import numpy as np
import pytest

from dnabird.cli import main
from dnabird.genome.reference import Genome
from dnabird.inference.predictor import Predictor
from dnabird.model.bp_per_token import read_bp_per_token
from dnabird.variants import Variant, score_variants
from dnabird.variants.score import resolve_setup
from tests.variants.conftest import write_fasta

COMPLEMENT = str.maketrans("ACGTN", "TGCAN")


def rc(sequence: str) -> str:
    return sequence.translate(COMPLEMENT)[::-1]


def snv(chrom: str, contigs: dict[str, str], pos: int, name: str) -> Variant:
    ref = contigs[chrom][pos - 1]
    return Variant(chrom, pos, ref, "ACGT"[("ACGT".index(ref) + 1) % 4], name)


def on_reverse_strand(variant: Variant, contigs: dict[str, str]) -> Variant:
    """The same SNV on the reverse-complemented contig."""
    return Variant(variant.chrom, len(contigs[variant.chrom]) - variant.pos + 1, rc(variant.ref), rc(variant.alt),
                   variant.id)


def by_id(scores) -> dict[str, np.ndarray]:
    """Per variant id: REF and ALT log-likelihoods and llr_per_bp."""
    assert scores.skipped.empty, scores.skipped
    return {name: np.concatenate([ref, alt]) for name, ref, alt in zip(scores.units["id"], scores.ref, scores.alt,
                                                                        strict=True)}


def assert_same(one: dict, other: dict, names=None):
    for name in names or one:
        np.testing.assert_allclose(one[name], other[name], rtol=0, atol=1e-5, err_msg=name)


@pytest.fixture(scope="module")
def model(embedded_default):
    return embedded_default.checkpoint


@pytest.fixture(scope="module")
def toy(embedded_default):
    """An N-free stretch of the toy genome and the default setup of the checkpoint."""
    with Genome(embedded_default.fasta) as genome:
        chrom = genome.fetch("chr1", 220_000, 320_000).sequence.upper()
    assert "N" not in chrom
    return chrom, resolve_setup(Predictor.load(embedded_default.checkpoint, device="cpu"),
                                checkpoint=embedded_default.checkpoint)


def test_pretraining_stores_the_bp_per_token_of_its_held_out_data(embedded_default):
    stored = read_bp_per_token(embedded_default.checkpoint)
    report = json.loads((embedded_default.tokenizer.parent / "report.json").read_text())
    # the tokenizer stage encodes a sample of the held-out corpus sentences; pretraining reads the shards
    assert stored.value == pytest.approx(report["heldout_bp_per_token"], rel=0.01)
    assert stored.source == "pretraining: held-out shards"


def tie_contig(sequence: str, setup, tokenizer) -> str:
    """An odd-length contig shorter than the window whose centre SNV's window, N-padded on both ends, is too
    long for eval_length, but fits once one end's padding is cut: the N-run clipping has to choose a side."""
    window = setup.window_bp
    for length in range(window // 2 | 1, window, 2 * (window // 100) | 2):
        tokens = len(tokenizer.encode(sequence[:length])) + 2
        pad = (window - length) // 2
        if tokens + 2 * pad > setup.eval_length >= tokens + pad:
            return sequence[:length]
    raise AssertionError("no contig length needs exactly one cut")


def test_scores_are_the_same_on_a_fasta_and_its_reverse_complement(model, toy, tmp_path):
    sequence, setup = toy
    tokenizer = Predictor.load(model, device="cpu").tokenizer
    window = setup.window_bp
    contigs = {"long": sequence[:2 * window + 1001], "short": tie_contig(sequence[60_000:], setup, tokenizer)}
    long, short = len(contigs["long"]), len(contigs["short"])
    variants = [snv("long", contigs, long // 2, "middle"), snv("long", contigs, 40, "left_end"),
                snv("long", contigs, long - 300, "right_end"), snv("short", contigs, short // 2 + 1, "tie")]
    forward = score_variants(model, write_fasta(tmp_path / "f.fa", contigs), variants, progress=False,
                             device="cpu")
    reverse_contigs = {name: rc(seq) for name, seq in contigs.items()}
    reverse = score_variants(model, write_fasta(tmp_path / "r.fa", reverse_contigs),
                             [on_reverse_strand(v, contigs) for v in variants], progress=False, device="cpu")
    assert forward.settings["window_bp"] == window and forward.settings["bp_per_token"] > 1
    assert_same(by_id(forward), by_id(reverse))
    # the windows near the ends were N-padded and clipped, the tie on both sides; mirrored on the other strand
    clips = {r.id: (r.clip_left, r.clip_right) for r in forward.units.itertuples()}
    mirrored = {r.id: (r.clip_right, r.clip_left) for r in reverse.units.itertuples()}
    assert clips == mirrored and clips["middle"] == (0, 0)
    assert clips["left_end"][0] > 0 and clips["right_end"][1] > 0 and min(clips["tie"]) > 0


def test_a_window_scores_the_same_at_any_eval_length_batch_size_and_company(model, toy, tmp_path):
    sequence, _ = toy
    contigs = {"chr": sequence[:20_000]}
    fasta = write_fasta(tmp_path / "g.fa", contigs)
    variants = [snv("chr", contigs, pos, f"v{pos}") for pos in (5_000, 9_000, 13_000)]
    options = dict(window_bp=1001, rc="forward", progress=False, device="cpu")  # about 250 tokens: 16 blocks
    short = by_id(score_variants(model, fasta, variants, eval_length=512, **options))
    full = by_id(score_variants(model, fasta, variants, eval_length=2048, batch_size=1, **options))
    alone = by_id(score_variants(model, fasta, variants[1:2], eval_length=1024, **options))
    assert_same(short, full)
    assert_same(alone, short)


@pytest.mark.parametrize("other", ["decoy", "digits"])
def test_other_contigs_change_no_score(model, toy, tmp_path, other):
    sequence, _ = toy
    contigs = {"chr": sequence[:20_000]}
    variants = [snv("chr", contigs, pos, f"v{pos}") for pos in (500, 10_000)]
    options = dict(eval_length=512, progress=False, device="cpu")  # window_bp: the default for 512 tokens
    alone = score_variants(model, write_fasta(tmp_path / "alone.fa", contigs), variants, **options)
    extra = "CA" * 50_000 if other == "decoy" else "0123456789" * 10_000  # longer than the rest
    more = score_variants(model, write_fasta(tmp_path / "more.fa", {"extra": extra, **contigs}), variants, **options)
    assert more.settings["window_bp"] == alone.settings["window_bp"] > 1001
    assert_same(by_id(alone), by_id(more))


def test_score_command_takes_a_bp_per_token_and_records_it(model, toy, tmp_path):
    sequence, _ = toy
    fasta = write_fasta(tmp_path / "g.fa", {"chr": sequence[:5_000]})
    vcf = tmp_path / "v.vcf"
    vcf.write_text("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
                   f"chr\t2500\tv\t{sequence[2499]}\t{'C' if sequence[2499] != 'C' else 'G'}\t.\t.\t.\n")
    assert main(["-q", "score", "--model", str(model), "--genome", str(fasta), "--vcf", str(vcf), "--rc", "forward",
                 "--eval-length", "256", "--bp-per-token", "2", "--out", str(tmp_path / "s.tsv")]) == 0
    settings = json.loads((tmp_path / "s.tsv.json").read_text())["settings"]
    # the odd window below (256 - 2) tokens × 2 bp / 1.25 headroom = 406.4 bp
    assert (settings["bp_per_token"], settings["bp_per_token_source"], settings["window_bp"]) == (2.0, "given", 405)
