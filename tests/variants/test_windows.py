"""REF/ALT windows on a hand-made chromosome, each expected window written out by hand (see CHR1's map)."""

import pytest

from dnabird.errors import UnscorableVariantError
from dnabird.genome.reference import Genome
from dnabird.variants.records import Variant
from dnabird.variants.windows import anchored_windows, centred_windows, n_run_clips
from tests.variants.conftest import CHR1, write_fasta

#          0         1         2         3
#          0123456789012345678901234567890123456789
assert CHR1 == "ACGTGATAACCTTGATACGGTTATCGCCGATACGTTTAAC"


@pytest.fixture
def genome(hand_genome):
    return Genome(hand_genome)


def test_snv_sits_at_the_centre(genome):
    w = centred_windows(genome, Variant("chr1", 15, "A", "C"), 11)  # 0-based 14, window [9, 20)
    assert (w.ref, w.alt, w.start, w.end) == ("CCTTGATACGG", "CCTTGCTACGG", 9, 20)
    assert (w.ref_at, w.alt_at, w.pad_left, w.pad_right) == (5, 5, False, False)
    even = centred_windows(genome, Variant("chr1", 15, "A", "C"), 10)  # centre at index 10 // 2 = 5
    assert (even.ref, even.start) == ("CCTTGATACG", 9)


def test_insertion_and_deletion_keep_each_allele_centred(genome):
    # insertion G>GGATA at 0-based 19: REF window [14, 25); ALT = 3 bp before, the 5-bp allele, 3 bp after
    ins = centred_windows(genome, Variant("chr1", 20, "G", "GGATA"), 11)
    assert (ins.ref, ins.alt, ins.ref_at, ins.alt_at) == ("ATACGGTTATC", "ACGGGATATTA", 5, 3)
    # deletion GATAC>G at 0-based 13: REF centre 13 + 5 // 2 = 15, window [10, 21); ALT = 5 bp + G + 5 bp
    dele = centred_windows(genome, Variant("chr1", 14, "GATAC", "G"), 11)
    assert (dele.ref, dele.alt, dele.ref_at, dele.alt_at) == ("CTTGATACGGT", "ACCTTGGGTTA", 3, 5)
    assert len(ins.alt) == len(dele.alt) == 11
    with pytest.raises(UnscorableVariantError, match="does not fit"):
        centred_windows(genome, Variant("chr1", 20, "G", "G" + "A" * 11), 11)


def test_chromosome_ends_are_padded_and_flagged(genome):
    start = centred_windows(genome, Variant("chr1", 2, "C", "T"), 11)  # window [-4, 7)
    assert (start.ref, start.alt, start.pad_left, start.pad_right) == ("NNNNACGTGAT", "NNNNATGTGAT", True, False)
    end = centred_windows(genome, Variant("chr1", 40, "C", "G"), 11)  # window [34, 45)
    assert (end.ref, end.alt, end.pad_left, end.pad_right) == ("TTTAACNNNNN", "TTTAAGNNNNN", False, True)
    rc = end.reverse_complement()
    assert (rc.ref, rc.alt, rc.ref_at, rc.pad_left, rc.pad_right) == ("NNNNNGTTAAA", "NNNNNCTTAAA", 5, True, False)


def test_tss_windows_keep_the_anchor_and_trim_or_extend_the_far_end(genome):
    # TSS at 18 on +, anchor tss:-6:+5 -> window [12, 23); a deletion downstream keeps [12, 20) in place
    plus = anchored_windows(genome, Variant("chr1", 21, "TTA", "T"), 12, 23, 18)
    assert (plus.ref, plus.alt, plus.ref_at, plus.alt_at) == ("TGATACGGTTA", "TGATACGGTTC", 8, 8)
    # a deletion upstream of the TSS keeps the TSS side [17, 23) in place and extends the far (left) end
    up = anchored_windows(genome, Variant("chr1", 14, "GAT", "G"), 12, 23, 18)
    assert (up.ref, up.alt, up.ref_at, up.alt_at) == ("TGATACGGTTA", "CTTGACGGTTA", 1, 3)
    # TSS at 25 on -, window [21, 32) read on the minus strand: TSS at index 31 - 25 = 6
    minus = anchored_windows(genome, Variant("chr1", 23, "A", "G"), 21, 32, 25, "-")
    assert (minus.ref, minus.alt, minus.ref_at, minus.strand) == ("TATCGGCGATA", "TATCGGCGACA", 9, "-")
    # an insertion upstream on the minus strand (genomic right of the TSS) trims the window's 5' end
    ins = anchored_windows(genome, Variant("chr1", 29, "G", "GTT"), 21, 32, 25, "-")
    assert (ins.ref, ins.alt, ins.alt_at) == ("TATCGGCGATA", "TAACGGCGATA", 1)  # genomic TATCGCC+GTT+A


def test_n_runs_are_clipped_outermost_first(tmp_path):
    #          0123456789012345 6
    sequence = "ACNNGTACGTTNACGGA"
    genome = Genome(write_fasta(tmp_path / "n.fa", {"chrN": sequence}))
    w = centred_windows(genome, Variant("chrN", 9, "G", "C"), 21)  # 0-based 8, window [-2, 19): 2 N each side
    assert (w.ref, w.ref_at, w.pad_left, w.pad_right) == ("NNACNNGTACGTTNACGGANN", 10, True, True)
    # N runs at 8 and 4 bp left of the allele, 2 and 8 bp right of it: cut the farthest first, ties together
    clips = list(n_run_clips(w))
    assert [(c.ref, c.alt, c.ref_at, c.start, c.end, c.clip_left, c.clip_right, c.pad_left, c.pad_right)
            for c in clips] == [
        ("ACNNGTACGTTNACGGA", "ACNNGTACCTTNACGGA", 8, 0, 17, 2, 2, False, False),
        ("GTACGTTNACGGA", "GTACCTTNACGGA", 4, 4, 17, 6, 2, False, False),
        ("GTACGTT", "GTACCTT", 4, 4, 11, 6, 8, False, False)]
    # on the other strand the same genome is cut at each step: the counts swap ends
    rc = list(n_run_clips(w.reverse_complement()))
    assert [(c.start, c.end, c.clip_left, c.clip_right, c.ref) for c in rc] == [
        (0, 17, 2, 2, "TCCGTNAACGTACNNGT"), (4, 17, 2, 6, "TCCGTNAACGTAC"), (4, 11, 8, 6, "AACGTAC")]
    # an insertion: both windows keep the same genome on each side of the allele
    ins = centred_windows(genome, Variant("chrN", 9, "G", "GAAA"), 21)
    cut = list(n_run_clips(ins))[0]
    assert (cut.ref, cut.alt, cut.ref_at, cut.alt_at) == ("ACNNGTACGTTNACGGA", "ACNNGTACGAAATTNACGGA", 8, 8)
