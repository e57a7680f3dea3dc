"""The promoter data set: TSSs from EPDnew BED8, liftover, windows on both strands, splits and negatives —
on a hand-written genome and on the toy genome's truth files."""

import csv
from collections import Counter

import numpy as np
import pyfaidx
import pytest

from dnabird.errors import DnabirdError, InputFormatError
from dnabird.genome.bed import read_tss
from dnabird.genome.reference import Genome
from dnabird.tasks.promoter import PromoterConfig, PromoterData, build, positive_windows
from dnabird.tasks.tss import lift_sites
from tests.tasks.test_negatives import CharTokenizer

BASES = "ACGT"
COMPLEMENT = str.maketrans("ACGT", "TGCA")


def revcomp(text):
    return text.translate(COMPLEMENT)[::-1]


def read_epdnew_tss(path):
    return read_tss(path, require_thick=True)


class HashedCharTokenizer(CharTokenizer):
    hash = "0" * 64


@pytest.fixture
def tiny(tmp_path):
    """Three 60-bp chromosomes, one + and one − promoter on each, an identity chain."""
    rng = np.random.default_rng(5)
    genome = {c: "".join(rng.choice(list(BASES), 60)) for c in ("chr1", "chr7", "chr8")}
    (tmp_path / "g.fa").write_text("".join(f">{c}\n{s}\n" for c, s in genome.items()))
    lines = []
    for c in genome:   # EPDnew items: + TSS = thickStart = start + 49; − TSS = thickEnd − 1 = start + 10
        lines.append(f"{c}\t{20 - 49}\t{20 + 11}\t{c}_plus\t900\t+\t20\t31")
        lines.append(f"{c}\t{30 - 10}\t{30 + 50}\t{c}_minus\t900\t-\t20\t31")
    (tmp_path / "p.bed").write_text("\n".join(lines).replace("\t-29\t", "\t0\t") + "\n")
    (tmp_path / "id.chain").write_text("".join(f"chain 60 {c} 60 + 0 60 {c} 60 + 0 60 {i}\n60\n\n"
                                               for i, c in enumerate(genome, 1)))
    return tmp_path, genome


def test_epdnew_tss_is_thick_start_on_plus_and_thick_end_minus_one_on_minus(tmp_path):
    path = tmp_path / "epd.bed"   # the first two rows of the real Hs_EPDnew_006_hg38.bed
    path.write_text("chr1\t959207\t959267\tNOC2L_1\t900\t-\t959207\t959218\n"
                    "chr1\t1000088\t1000148\tHES4_1\t900\t+\t1000137\t1000148\n")
    minus, plus = read_epdnew_tss(path)
    assert (minus.name, minus.position, minus.strand) == ("NOC2L_1", 959217, "-")   # chromStart + 10
    assert (plus.name, plus.position, plus.strand) == ("HES4_1", 1000137, "+")      # chromStart + 49


def test_windows_on_both_strands_by_hand(tiny):
    root, genome = tiny
    config = PromoterConfig(data=PromoterData(genome=str(root / "g.fa"), promoters=str(root / "p.bed"),
                                              chain=str(root / "id.chain"), anchor="tss:-5:+3", max_n_fraction=0.0))
    sites = lift_sites(read_epdnew_tss(root / "p.bed"), root / "id.chain").kept
    windows = {w[0].name: w for w in positive_windows(config.data, sites, Genome(root / "g.fa"), Counter())}
    site, start, end, _, sequence = windows["chr1_plus"]
    assert (start, end) == (15, 23) and sequence.tobytes().decode() == genome["chr1"][15:23]
    site, start, end, _, sequence = windows["chr1_minus"]
    # − strand: the reverse complement of [t − 2, t + 6) = [28, 36); the TSS base is at index 5 of it
    assert (start, end) == (28, 36) and sequence.tobytes().decode() == revcomp(genome["chr1"][28:36])
    assert sequence.tobytes().decode()[5] == genome["chr1"][30].translate(COMPLEMENT)


def test_build_splits_by_chromosome_and_encodes_windows_in_transcript_orientation(tiny):
    root, genome = tiny
    config = PromoterConfig(seed=1, data=PromoterData(
        genome=str(root / "g.fa"), promoters=str(root / "p.bed"), chain=str(root / "id.chain"),
        anchor="tss:-5:+3", deepromoter_parts=4, deepromoter_keep=2, test_chromosomes=["chr8"],
        validation_chromosomes=["chr7"], kmer=2))
    task = build(config, HashedCharTokenizer(), block_size=4, out_dir=root / "out")
    assert task.spec.eval_length == 12 and task.spec.anchor == "tss:-5:+3" and task.spec.strand_rule == "feature"
    decoded = ["".join("ACGTN"[i - 5] for i in task.test.example(k, 0)["input_ids"][1:9]) for k in range(4)]
    assert decoded[0] == genome["chr8"][15:23] and decoded[2] == revcomp(genome["chr8"][28:36])
    for positive, negative in ((decoded[0], decoded[1]), (decoded[2], decoded[3])):
        assert sum(positive[i:i + 2] == negative[i:i + 2] for i in range(0, 8, 2)) >= 2  # 2 of 4 parts kept
    rows = list(csv.DictReader(open(root / "out" / "windows.tsv"), delimiter="\t"))
    assert {(r["split"], r["chrom"]) for r in rows} == {("train", "chr1"), ("validation", "chr7"), ("test", "chr8")}
    assert task.train.labels.tolist() == [1, 0, 1, 0] and task.baseline_features["2-mer"][0].shape == (4, 16)


def test_bad_promoter_inputs_name_the_file_and_line(tiny):
    root, _ = tiny
    bad = root / "bad.bed"
    bad.write_text("chr1\t0\t60\tA_1\t900\t+\t49\t60\nchr1\t0\t60\tB_1\t900\t.\t49\t60\n")
    with pytest.raises(InputFormatError, match=r"bad.bed, line 2: strand '\.'"):
        read_epdnew_tss(bad)
    bad.write_text("chr1\t0\t60\tA_1\t900\t+\n")
    with pytest.raises(InputFormatError, match="line 1: expected BED8"):
        read_epdnew_tss(bad)
    bad.write_text("chr1\t0\tsixty\tA_1\t900\t+\t49\t60\n")
    with pytest.raises(InputFormatError, match="line 1: end 'sixty'"):
        read_epdnew_tss(bad)


def test_wrong_chain_absent_chromosome_and_empty_result_are_clear_errors(tiny):
    root, _ = tiny
    (root / "other.chain").write_text("chain 60 chrZ 60 + 0 60 chrZ 60 + 0 60 1\n60\n\n")
    with pytest.raises(DnabirdError, match=r"only 0 of 6 sites lift cleanly \(absent_chromosome 6\)"):
        lift_sites(read_epdnew_tss(root / "p.bed"), root / "other.chain")
    (root / "small.fa").write_text(">chr1\n" + "A" * 60 + "\n")
    sites = lift_sites(read_epdnew_tss(root / "p.bed"), root / "id.chain").kept
    data = PromoterData(anchor="tss:-5:+3")
    with pytest.raises(DnabirdError, match=r"absent from the genome: chr7 \(2\), chr8 \(2\)"):
        list(positive_windows(data, sites, Genome(root / "small.fa"), Counter()))
    counts = Counter()
    kept = list(positive_windows(PromoterData(anchor="tss:-5:+3", chromosomes=["chr1"]), sites,
                                 Genome(root / "small.fa"), counts))
    assert len(kept) == 2 and counts == {"outside_chromosomes": 4}
    config = PromoterConfig(data=PromoterData(genome=str(root / "g.fa"), promoters=str(root / "p.bed"),
                                              chain=str(root / "id.chain"), anchor="tss:-50:+30"))
    with pytest.raises(DnabirdError, match="no promoter window is left.*off_chromosome_end': 6"):
        build(config, HashedCharTokenizer(), block_size=4, out_dir=root / "out")


def test_gc_rich_cpg_island_promoters_keep_genomic_negatives_by_widening_the_gc_match(tmp_path):
    """Promoters whose windows are CpG islands (GC ~0.7) on a genome whose GC-richest stretches away from
    TSSs reach ~0.55: no negative lies within the 0.02 tolerance, one within the widened tolerance does."""
    rng = np.random.default_rng(3)

    def bases(n, gc):
        return "".join(rng.choice(list("ACGT"), n, p=[(1 - gc) / 2, gc / 2, gc / 2, (1 - gc) / 2]))

    genome, lines = {}, []
    for c in ("chr1", "chr7", "chr8"):  # promoters at 3,000 (+) and 8,000 (-), CpG islands of 1 kb around each
        genome[c] = (bases(2500, 0.45) + bases(1000, 0.72) + bases(4000, 0.45) + bases(1000, 0.72)
                     + bases(11500, 0.45) + bases(18000, 0.55) + bases(2000, 0.45))
        lines += [f"{c}\t{3000 - 49}\t{3000 + 11}\t{c}_plus\t900\t+\t{3000}\t{3011}",
                  f"{c}\t{8000 - 10}\t{8000 + 50}\t{c}_minus\t900\t-\t{7990}\t{8001}"]
    (tmp_path / "g.fa").write_text("".join(f">{c}\n{s}\n" for c, s in genome.items()))
    (tmp_path / "p.bed").write_text("\n".join(lines) + "\n")
    (tmp_path / "id.chain").write_text("".join(f"chain 1 {c} {len(s)} + 0 {len(s)} {c} {len(s)} + 0 {len(s)} {i}\n"
                                               f"{len(s)}\n\n" for i, (c, s) in enumerate(genome.items(), 1)))
    data = dict(genome=str(tmp_path / "g.fa"), promoters=str(tmp_path / "p.bed"), chain=str(tmp_path / "id.chain"),
                anchor="tss:-400:+400", negatives="genomic", gc_tolerance=0.02, test_chromosomes=["chr8"],
                validation_chromosomes=["chr7"], kmer=2)
    task = build(PromoterConfig(data=PromoterData(**data)), HashedCharTokenizer(), block_size=4, out_dir=tmp_path)
    rows = list(csv.DictReader(open(tmp_path / "windows.tsv"), delimiter="\t"))
    assert [r["name"] for r in rows if r["label"] == "1"] == [f"{c}_{s}" for c in ("chr1", "chr7", "chr8")
                                                                for s in ("plus", "minus")]  # every promoter kept
    for positive, negative in zip(rows[0::2], rows[1::2], strict=True):
        assert float(positive["gc"]) > 0.65 and 0.02 < float(positive["gc"]) - float(negative["gc"]) <= 0.2
        assert int(negative["start"]) >= 10_000  # from the GC-rich stretch, away from the TSSs
    assert task.summary["negatives_by_cpg_class"] == {
        "CpG island": {"positives": 6, "matched": 0, "widened": 6, "dropped": 0},
        "non-CpG": {"positives": 0, "matched": 0, "widened": 0, "dropped": 0}}
    strict = PromoterConfig(data=PromoterData(**data, gc_tolerance_max=0.02))  # no widening: all of them dropped
    with pytest.raises(DnabirdError, match="hold no promoter window .*'no_gc_matched_negative': 6"):
        build(strict, HashedCharTokenizer(), block_size=4, out_dir=tmp_path / "strict")


# --- the toy genome --------------------------------------------------------------------------------

def toy_config(embedded_default, **data) -> PromoterConfig:
    folder = embedded_default.fasta.parent
    return PromoterConfig(data=PromoterData(genome=str(embedded_default.fasta),
                                            promoters=str(folder / "promoters_hg38.bed"),
                                            chain=str(folder / "hg38ToHg19.over.chain"), **data))


def truth_rows(embedded_default):
    return list(csv.DictReader(open(embedded_default.fasta.parent / "promoters_truth.tsv"), delimiter="\t"))


def test_toy_tss_lift_to_their_truth_and_every_failure_class_is_counted(embedded_default):
    config = toy_config(embedded_default).data
    lifted = lift_sites(read_epdnew_tss(config.promoters), config.chain)
    truth = truth_rows(embedded_default)
    expected = {r["name"]: (r["hg19_chrom"], int(r["hg19_tss"]), r["hg19_strand"])
                for r in truth if r["status"] == "ok"}
    assert {s.name: (s.chrom, s.position, s.strand) for s in lifted.kept} == expected
    # the promoter stage's TSS BED, read back by the BED reader `dnabird score --tss` uses
    written = read_tss(embedded_default.promoter / "tss_lifted.bed")
    assert {t.name: (t.chrom, t.position, t.strand) for t in written} == expected
    statuses = Counter(r["status"] for r in truth)
    assert {k: v for k, v in lifted.counts.items() if v} == statuses
    assert {"unmapped", "strand_flip", "other_chromosome"} <= set(statuses)
    assert Counter(status for _, status, _ in lifted.dropped) == statuses - Counter({"ok": statuses["ok"]})
    # the test chromosomes hold > 100 usable 8-kb windows: > 200 test examples with their negatives
    counts = Counter()
    windows = list(positive_windows(config, lifted.kept, Genome(config.genome, soft_mask="upper"), counts))
    assert sum(w[0].chrom in ("chr8", "chr9") for w in windows) >= 100


def test_toy_genomic_negatives_are_gc_matched_far_from_tsss_and_splits_are_disjoint(embedded_default, tmp_path):
    tolerance = 0.02
    config = toy_config(embedded_default, anchor="tss:-1000:+600", negatives="genomic", gc_tolerance=tolerance,
                        gc_tolerance_max=tolerance)
    task = build(config, HashedCharTokenizer(), block_size=64, out_dir=tmp_path)
    rows = list(csv.DictReader(open(tmp_path / "windows.tsv"), delimiter="\t"))
    fasta = pyfaidx.Fasta(str(embedded_default.fasta), as_raw=True)
    tss = {}
    for r in truth_rows(embedded_default):
        if r["hg19_tss"] != ".":
            tss.setdefault(r["hg19_chrom"], []).append(int(r["hg19_tss"]))

    def gc(r):
        seq = fasta[r["chrom"]][int(r["start"]):int(r["end"])].upper()
        return (seq.count("G") + seq.count("C")) / (len(seq) - seq.count("N"))

    for positive, negative in zip(rows[0::2], rows[1::2], strict=True):
        assert (positive["label"], negative["label"], positive["split"]) == ("1", "0", negative["split"])
        assert abs(gc(positive) - gc(negative)) <= tolerance + 1e-9
        assert min(abs(int(negative["position"]) - t) for t in tss[negative["chrom"]]) >= 2000
        assert (negative["chrom"] in ("chr8", "chr9")) == (negative["split"] == "test")
    # no window of one split overlaps a window of another
    for a in rows:
        for b in rows:
            if a["split"] != b["split"] and a["chrom"] == b["chrom"]:
                assert int(a["end"]) <= int(b["start"]) or int(b["end"]) <= int(a["start"])
    assert len(task.test) == 2 * sum(r["split"] == "test" and r["label"] == "1" for r in rows)


def test_toy_random_split_keeps_overlapping_windows_together(embedded_default, tmp_path):
    config = toy_config(embedded_default, anchor="tss:-3000:+1000", negatives="genomic", split="random")
    build(config, HashedCharTokenizer(), block_size=64, out_dir=tmp_path)
    rows = list(csv.DictReader(open(tmp_path / "windows.tsv"), delimiter="\t"))
    positives = [r for r in rows if r["label"] == "1"]
    overlapping = 0
    for a in positives:
        for b in positives:
            if a is not b and a["chrom"] == b["chrom"] and int(a["start"]) < int(b["end"]) \
                    and int(b["start"]) < int(a["end"]):
                overlapping += 1
                assert a["group"] == b["group"] and a["split"] == b["split"]
    assert overlapping > 50 and {r["split"] for r in rows} == {"train", "validation", "test"}
    for a in rows:
        for b in rows:
            if a["split"] != b["split"] and a["chrom"] == b["chrom"]:
                assert int(a["end"]) <= int(b["start"]) or int(b["end"]) <= int(a["start"])
