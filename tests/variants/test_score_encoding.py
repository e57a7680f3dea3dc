"""Windows a tokenizer reads with unk tokens are scored and flagged; a window it refuses is that allele's skip
reason, and the run goes on (the stand-in classifier of conftest.py reads each window back as DNA).

    0         1         2         3
    0123456789012345678901234567890123456789
    ACGTGATNACCTTGATACGGTTATCGCCGATACGTTTAAC     CHR1 with its base 7 made an N
"""

import pysam
import pytest

from dnabird.data.hf_tokenizer import HFTokenizer
from dnabird.data.tokenizer import Tokenizer
from dnabird.variants import Variant, score_variants
from dnabird.variants.writers import write_vcf
from tests.data.gena_without_n import without_n_piece
from tests.gena_reference import GENA_TOKENIZER
from tests.variants.conftest import CHR1, MotifCounter, stub_task, write_fasta

GAPPED = CHR1[:7] + "N" + CHR1[8:]
# 11-bp windows: "near" reads [5, 16), which holds the N at 7 (offset 2); "far" reads [24, 35)
VARIANTS = [Variant("chr1", 11, "C", "A", "near"), Variant("chr1", 30, "A", "G", "far")]


class RefusesN(Tokenizer):
    """dnabird's DNA tokenizer made to refuse N, as a tokenizer with neither an N piece nor an unk fallback."""

    alphabet = "ACGT"


def score(tokenizer, genome, variants=VARIANTS, **options):
    return score_variants(MotifCounter(tokenizer), genome, variants, tokenizer=tokenizer, task=stub_task(),
                          progress=False, device="cpu", **options)


def test_a_window_the_tokenizer_refuses_is_skipped_naming_the_character_and_the_run_goes_on(tokenizer, tmp_path):
    genome = write_fasta(tmp_path / "gapped.fa", {"chr1": GAPPED})
    scores = score(RefusesN.load(tokenizer.path), genome)
    assert scores.units["id"].tolist() == ["far"]
    assert scores.skipped[["id", "reason"]].values.tolist() == [["near", "invalid base in window"]]
    detail = scores.skipped["detail"][0]
    assert "window chr1:5-16 (+)" in detail and "character 'N' at offset 2" in detail


@pytest.mark.parametrize("normalizer", [True, False])
def test_a_tokenizer_without_an_n_piece_scores_windows_with_n_and_flags_them(normalizer, tmp_path):
    no_n = HFTokenizer.load(without_n_piece(tmp_path / "no_n", normalizer=normalizer))
    genome = write_fasta(tmp_path / "gapped.fa", {"chr1": GAPPED})
    scores = score(no_n, genome)
    assert scores.skipped.empty
    assert scores.units[["id", "unk_tokens"]].values.tolist() == [["near", 1], ["far", 0]]  # the one N
    with_n = score(HFTokenizer.load(GENA_TOKENIZER), genome)  # GENA-LM's own file has an N piece
    assert with_n.units["unk_tokens"].tolist() == [0, 0]
    vcf = tmp_path / "v.vcf"
    vcf.write_text("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
                   + "".join(f"chr1\t{v.pos}\t{v.id}\t{v.ref}\t{v.alt}\t.\t.\t.\n" for v in VARIANTS))
    write_vcf(score(no_n, genome, vcf), tmp_path / "out.vcf", vcf)
    with pysam.VariantFile(str(tmp_path / "out.vcf")) as annotated:
        assert [r.id for r in annotated if "DNABIRD_UNK" in r.info] == ["near"]
