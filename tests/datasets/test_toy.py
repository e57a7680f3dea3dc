"""The toy genome's files, each checked with an independent reader (pyfaidx, pysam, pyliftover, h5py,
scipy.io) or plain parsing, against hand-written expectations rather than the generator's own code."""

import hashlib
import json
import re
import shutil
from collections import Counter, defaultdict

import h5py
import numpy as np
import pyfaidx
import pysam
import pytest
import scipy.io
from pyliftover import LiftOver

from dnabird.datasets.toy import generate
from dnabird.errors import ParameterError

# consensus motifs as published (promoter orientation / motif orientation); the test's own copy
TATA, INR, GC_BOX = "TATAAAAG", "TCAGTCT", "GGGGCGGGGC"
TF_MOTIFS = {"CTCF": "TGGCCACCAGGGGGCGCTA", "GATA": "AGATAAGG", "FOXA": "TGTTTACTTA", "YY1": "AAGATGGCGGC"}
COMPLEMENT = str.maketrans("ACGTNacgtn", "TGCANtgcan")


def revcomp(text):
    return text.translate(COMPLEMENT)[::-1]


def read_table(path, header=False):
    lines = [line.rstrip("\n").split("\t") for line in open(path) if line.strip()]
    return lines[1:] if header else lines


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return generate(tmp_path_factory.mktemp("toy"), seed=0)


@pytest.fixture(scope="module")
def genome(toy):
    fasta = pyfaidx.Fasta(str(toy["fasta"]), as_raw=True)
    sequences = {name: fasta[name][:] for name in fasta.keys()}
    fasta.close()
    return sequences


def feature_group(name):
    target = name.split("|")[1]
    return "DNase" if target == "DNase" else "HM" if re.match(r"H\d", target) else "TF"


# --- FASTA -------------------------------------------------------------------------------------------

def test_fasta_contigs_line_width_and_index(toy, genome, tmp_path):
    assert list(genome)[:7] == ["chr1", "chr2", "chr3", "chr7", "chr8", "chr9", "chrX"]
    assert "chrM" in genome and any(name.startswith("chrUn_") for name in genome)
    assert 3_000_000 <= sum(map(len, genome.values())) <= 4_000_000
    for record in open(toy["fasta"]).read().split(">")[1:]:
        lines = record.splitlines()[1:]
        assert all(len(line) == 60 for line in lines[:-1]) and 0 < len(lines[-1]) <= 60
    copy = tmp_path / "copy.fa"  # pysam builds its own index from the bytes
    shutil.copy(toy["fasta"], copy)
    pysam.faidx(str(copy))
    assert (tmp_path / "copy.fa.fai").read_text() == toy["fai"].read_text()


def test_realism_gc_cpg_masking_and_gaps(genome):
    text = "".join(seq for name, seq in genome.items())
    upper = text.upper()
    called = len(upper) - upper.count("N")
    c, g = upper.count("C"), upper.count("G")
    assert 0.39 <= (c + g) / called <= 0.43
    cpg = sum(seq.upper().count("CG") for seq in genome.values())
    assert 0.2 <= cpg * called / (c * g) <= 0.3
    masked = sum(ch.islower() for ch in text)
    assert 0.30 <= masked / called <= 0.45
    assert genome["chr1"].startswith("N" * 1000) and genome["chr9"].endswith("N" * 1000)
    internal = [m for name in genome for m in re.finditer("N+", genome[name])
                if 0 < m.start() and m.end() < len(genome[name])]
    assert len(internal) >= 7


def test_cpg_islands_are_gc_and_cpg_rich(toy, genome):
    islands = read_table(toy["cpg_islands"])
    assert len(islands) >= 50
    for chrom, start, end, _ in islands:
        seq = genome[chrom][int(start):int(end)].upper()
        c, g = seq.count("C"), seq.count("G")
        assert (c + g) / len(seq) > 0.5
        assert seq.count("CG") * len(seq) / (c * g) > 0.6


def test_soft_mask_is_exactly_the_repeats_and_copies_are_diverged(toy, genome):
    repeats = read_table(toy["repeats"])
    consensus = pyfaidx.Fasta(str(toy["repeat_consensus"]), as_raw=True)
    assert len({family for *_, family, _, _ in repeats}) >= 4
    mask = {name: np.zeros(len(seq), bool) for name, seq in genome.items()}
    divergence = []
    for chrom, start, end, family, _, strand in repeats:
        start, end = int(start), int(end)
        mask[chrom][start:end] = True
        copy = genome[chrom][start:end].upper()
        copy = copy if strand == "+" else revcomp(copy)
        reference = consensus[family][:].upper()[-len(copy):]  # copies are 3'-end fragments
        divergence.append(sum(a != b for a, b in zip(copy, reference, strict=True)) / len(copy))
    for name, seq in genome.items():
        lower = np.frombuffer(seq.encode(), np.uint8) >= ord("a")
        assert np.array_equal(lower, mask[name]), name
    assert 0.03 <= np.median(divergence) <= 0.3 and max(divergence) < 0.5  # unrelated DNA: 0.75


# --- long-range pairs --------------------------------------------------------------------------------

def test_long_range_pairs_couple_b_to_a(toy, genome):
    pairs = []
    for chrom, start, _, _, _, _, _, _, _, count, sizes, starts in read_table(toy["long_range_pairs"]):
        assert count == "2"
        (a_size, b_size), (a_off, b_off) = map(int, sizes.split(",")), map(int, starts.split(","))
        a = int(start) + a_off
        b = int(start) + b_off
        assert 2_000 <= b - a <= 6_000
        pairs.append((chrom, a, genome[chrom][a:a + a_size], b, genome[chrom][b:b + b_size]))
    assert len(pairs) >= 150
    rule = defaultdict(Counter)
    for chrom, _, a_seq, _, b_seq in pairs:
        if chrom not in ("chr8", "chr9"):
            rule[a_seq][b_seq] += 1
    assert all(len(outcomes) == 1 for outcomes in rule.values())  # B is a function of A
    held_out = [(a_seq, b_seq) for chrom, _, a_seq, _, b_seq in pairs if chrom in ("chr8", "chr9")]
    assert held_out and all(rule[a_seq].most_common(1)[0][0] == b_seq for a_seq, b_seq in held_out)
    b_counts = Counter(b_seq for *_, b_seq in pairs)
    assert len(b_counts) >= 6 and max(b_counts.values()) / len(pairs) < 0.3  # no context → poor guess
    whole = "\n".join(seq.upper() for seq in genome.values())
    for b_seq, count in b_counts.items():  # B's word appears nowhere else to give it away
        assert whole.count(b_seq) + whole.count(revcomp(b_seq)) == count
    a_words = {a_seq for _, _, a_seq, _, _ in pairs}
    for chrom, _, _, b, b_seq in pairs:
        assert not any(word in genome[chrom][b - 500:b + 500] for word in a_words)  # 1 kb: no A
        upstream = genome[chrom][b - 6_000:b]  # the rule on the FASTA: nearest A upstream names B
        nearest = max(a_words, key=upstream.rfind)
        assert upstream.rfind(nearest) >= 0 and rule[nearest].most_common(1)[0][0] == b_seq


# --- tandem duplications -----------------------------------------------------------------------------

def test_duplications_are_near_identical_tandem_copies_covering_about_15_percent(toy, genome):
    clusters = read_table(toy["duplications"])
    spans = {name: np.zeros(len(seq), bool) for name, seq in genome.items()}
    for chrom, start, end, name, _, _, _, _, _, count, sizes, starts in clusters:
        start, end, count = int(start), int(end), int(count)
        divergence = float(name.split(":d")[1])
        assert 0.01 <= divergence <= 0.03
        sizes, starts = list(map(int, sizes.split(","))), list(map(int, starts.split(",")))
        assert 2 <= count == len(sizes) == len(starts) <= 4 and len(set(sizes)) == 1
        unit = sizes[0]
        assert 300 <= unit <= 900 and starts[0] == 0 and start + starts[-1] + unit == end
        assert all(0 <= b - a - unit <= 100 for a, b in zip(starts, starts[1:], strict=False))  # near-tandem
        assert not spans[chrom][start:end].any()  # clusters never overlap
        spans[chrom][start:end] = True
        seq = genome[chrom]
        first = seq[start:start + unit]
        assert "N" not in first.upper()
        for offset in starts[1:]:
            copy = seq[start + offset:start + offset + unit]
            assert [c.islower() for c in copy] == [c.islower() for c in first]  # repeats copied with the unit
            mismatches = sum(a != b for a, b in zip(first.upper(), copy.upper(), strict=True))
            assert abs(mismatches - divergence * unit) <= 0.5 + 1e-9  # exactly the stated share
    called = {name: len(seq) - seq.upper().count("N") for name, seq in genome.items() if name != "chrM"}
    assert not spans["chrM"].any()
    assert 0.12 <= sum(spans[name].sum() for name in called) / sum(called.values()) <= 0.18
    for held_out in ("chr8", "chr9"):  # the held-out chromosomes have them too
        assert 0.08 <= spans[held_out].sum() / called[held_out] <= 0.25
    planted = read_table(toy["elements"]) + read_table(toy["cpg_islands"])
    assert not any(spans[chrom][int(start):int(end)].any() for chrom, start, end, *_ in planted)


# --- promoters, chain and truth ----------------------------------------------------------------------

def test_promoter_bed_is_epdnew_bed8(toy):
    truth = {row[0]: row for row in read_table(toy["promoter_truth"], header=True)}
    rows = read_table(toy["promoters_bed"])
    assert len(rows) == len(truth) >= 100
    names = [row[3] for row in rows]
    assert len(set(names)) == len(names) and any(name.endswith("_2") for name in names)
    for chrom, start, end, name, score, strand, thick_start, thick_end in rows:
        start, end, thick_start, thick_end = map(int, (start, end, thick_start, thick_end))
        assert end - start == 60 and score == "900" and re.fullmatch(r"TG\d{4}_\d+", name)
        tss = thick_start if strand == "+" else thick_end - 1
        assert tss == (start + 49 if strand == "+" else start + 10)
        assert thick_end - thick_start == 11
        assert (chrom, str(tss), strand) == tuple(truth[name][1:4])


def test_chain_lifts_tss_to_truth_and_promoters_are_planted(toy, genome):
    lift = LiftOver(str(toy["chain"]))
    statuses = Counter()
    for name, chrom, tss, strand, hg19_chrom, hg19_tss, hg19_strand, status, island, tata in read_table(
            toy["promoter_truth"], header=True):
        hits = lift.convert_coordinate(chrom, int(tss), strand)
        statuses[status] += 1
        if status == "unmapped":
            assert hits == [], name
            continue
        assert [hit[:3] for hit in hits] == [(hg19_chrom, int(hg19_tss), hg19_strand)], name
        assert (status == "other_chromosome") == (hg19_chrom != chrom)
        assert (status == "strand_flip") == (hg19_strand != strand)
        t = int(hg19_tss)  # read the promoter on its own strand in the FASTA
        region = genome[hg19_chrom][t - 150:t + 150].upper()
        region = region if hg19_strand == "+" else revcomp(genome[hg19_chrom][t - 149:t + 151].upper())
        assert region[148:155] == INR, name  # A of the Inr at the TSS (index 150)
        assert (region[119:127] == TATA) == (tata == "1"), name
        assert (region[40:50] == GC_BOX) == (island == "1"), name
    assert statuses["ok"] >= 50 and statuses["unmapped"] >= 2
    assert statuses["other_chromosome"] >= 2 and statuses["strand_flip"] >= 2
    assert lift.convert_coordinate("chrM", 100) is None


def test_chain_blocks_add_up(toy):
    chains = open(toy["chain"]).read().strip().split("\n\n")
    assert len(chains) >= 9
    for chain in chains:
        header, *blocks = chain.splitlines()
        fields = header.split()
        assert fields[0] == "chain" and fields[4] == "+" and fields[9] in "+-"
        t_start, t_end, q_start, q_end = int(fields[5]), int(fields[6]), int(fields[10]), int(fields[11])
        t, q = t_start, q_start
        for block in blocks[:-1]:
            size, dt, dq = map(int, block.split("\t"))
            t, q = t + size + dt, q + size + dq
        assert (t + int(blocks[-1]), q + int(blocks[-1])) == (t_end, q_end)
        assert t_end <= int(fields[3]) and q_end <= int(fields[8])


# --- chromatin features and the DeepSEA bundle -------------------------------------------------------

def test_features_bed_names_and_motif_driven_peaks(toy, genome):
    names = [line.rstrip("\n") for line in open(toy["feature_names"])]
    assert 10 <= len(names) <= 20 and all(name.count("|") == 2 for name in names)
    groups = [feature_group(name) for name in names]
    assert groups == sorted(groups, key=["DNase", "TF", "HM"].index) and set(groups) == {
        "DNase", "TF", "HM"}
    peaks = read_table(toy["features_bed"])
    order = list(genome)
    assert peaks == sorted(peaks, key=lambda p: (order.index(p[0]), int(p[1]), int(p[2]), names.index(p[3])))
    by_feature = defaultdict(list)
    for chrom, start, end, name in peaks:
        assert name in names and 0 <= int(start) < int(end) <= len(genome[chrom])
        by_feature[name].append(genome[chrom][int(start):int(end)].upper())
    for feature, motif in (("K562|GATA-1|None", "AGATAAGG"), ("GM12878|CTCF|None", TF_MOTIFS["CTCF"]),
                           ("HepG2|FOXA1|None", TF_MOTIFS["FOXA"])):
        assert all(motif in seq or revcomp(motif) in seq for seq in by_feature[feature]), feature
    sites = [row for row in read_table(toy["elements"]) if row[3].startswith("CTCF:")]
    covered = sum(any(chrom == p[0] and int(p[1]) <= int(start) and int(end) <= int(p[2])
                      for p in peaks if p[3] == "GM12878|CTCF|None") for chrom, start, end, *_ in sites)
    assert covered / len(sites) > 0.8
    h3k4me3 = [seq for seq in by_feature["K562|H3K4me3|None"]]
    assert np.mean([(s.count("C") + s.count("G")) / len(s) for s in h3k4me3]) > 0.55  # over islands


def test_tbp_follows_the_tata_box(toy, genome):
    """Read each TSS's TATA box from the FASTA: TBP peaks cover most TSSs with one and none without."""
    peaks = [(c, int(s), int(e)) for c, s, e, name in read_table(toy["features_bed"]) if name == "K562|TBP|None"]
    counts = Counter()
    for row in read_table(toy["promoter_truth"], header=True):
        chrom, tss, strand = row[4], row[5], row[6]
        if tss == ".":
            continue
        t = int(tss)
        region = genome[chrom][t - 150:t + 150].upper() if strand == "+" else \
            revcomp(genome[chrom][t - 149:t + 151].upper())
        counts[region[119:127] == TATA, any(c == chrom and s <= t < e for c, s, e in peaks)] += 1
    assert counts[False, True] == 0 and counts[False, False] > 10
    assert counts[True, True] > 0.8 * (counts[True, True] + counts[True, False])


def test_background_peaks_lie_far_from_every_planted_element(toy, genome):
    """K562 MAX peaks: low-affinity background, >= 1 kb (less the peak's half-width) from every planted
    element, island and long-range element; their bins join the bundle with no
    promoter or DNase label (DeepSEA keeps TF-bound bins only: this is its plain background)."""
    loci = defaultdict(list)
    for chrom, start, end, *_ in read_table(toy["elements"]) + read_table(toy["cpg_islands"]):
        loci[chrom].append((int(start), int(end)))
    for row in read_table(toy["long_range_truth"], header=True):
        loci[row[1]] += [(int(row[2]), int(row[3])), (int(row[4]), int(row[5]))]
    peaks = [(c, int(s), int(e)) for c, s, e, name in read_table(toy["features_bed"]) if name == "K562|MAX|None"]
    assert 200 < len(peaks)
    for chrom, start, end in peaks:
        centre = (start + end) // 2
        assert all(centre < s - 1000 + 250 or centre >= e + 1000 - 250 for s, e in loci[chrom]), (chrom, start)
        assert "N" not in genome[chrom][start:end].upper()
    names = [line.rstrip("\n") for line in open(toy["feature_names"])]
    with h5py.File(toy["train_mat"], "r") as handle:
        y = handle["traindata"][:].T
    only_max = y[:, names.index("K562|MAX|None")].astype(bool) & (y.sum(axis=1) == 1)
    assert only_max.sum() > 0.05 * len(y)   # background rows whose every other label (Pol2, DNase …) is 0


def onehot_to_text(columns):
    """(4, L) one-hot in DeepSEA's A, G, C, T order → text, all-zero columns → N."""
    text = np.array(list("AGCT"))[columns.argmax(axis=0)]
    text[columns.sum(axis=0) == 0] = "N"
    return "".join(text)


def test_mat_bundle_matches_fasta_and_peaks(toy, genome):
    with pytest.raises(NotImplementedError):  # a real v7.3 file: scipy refuses, h5py reads
        scipy.io.loadmat(toy["train_mat"])
    with h5py.File(toy["train_mat"], "r") as handle:
        train_x, train_y = handle["trainxdata"][:], handle["traindata"][:]
    assert train_x.shape[:2] == (1000, 4) and train_y.shape[1] == train_x.shape[2]
    arrays = {"train": (train_x.transpose(2, 1, 0), train_y.T)}
    for split in ("valid", "test"):
        mat = scipy.io.loadmat(toy[f"{split}_mat"])
        arrays[split] = (mat[f"{split}xdata"], mat[f"{split}data"])
    names = [line.rstrip("\n") for line in open(toy["feature_names"])]
    tf_columns = [i for i, name in enumerate(names) if feature_group(name) == "TF"]
    coverage = {chrom: np.zeros((len(names), len(seq)), bool) for chrom, seq in genome.items()}
    for chrom, start, end, name in read_table(toy["features_bed"]):
        coverage[chrom][names.index(name), int(start):int(end)] = True
    bins = defaultdict(list)
    for chrom, start, end, split in read_table(toy["deepsea_bins"]):
        bins[split].append((chrom, int(start), int(end)))
    for split, (x, y) in arrays.items():
        n = len(bins[split])
        assert x.dtype == y.dtype == np.uint8
        assert x.shape == (2 * n, 4, 1000) and y.shape == (2 * n, len(names))
        assert set(np.unique(x)) <= {0, 1} and x.sum(axis=1).max() == 1
        chroms = {chrom for chrom, *_ in bins[split]}
        assert chroms == {"train": chroms - {"chr8", "chr9", "chrM"}, "valid": {"chr7"},
                          "test": {"chr8", "chr9"}}[split] and chroms
        for i, (chrom, start, end) in enumerate(bins[split]):
            assert end - start == 200
            window = genome[chrom][start - 400:end + 400].upper()
            assert onehot_to_text(x[i]) == window
            assert onehot_to_text(x[i + n]) == revcomp(window)
            assert np.array_equal(y[i], y[i + n])
            assert np.array_equal(y[i], coverage[chrom][:, start:end].sum(axis=1) > 100)
            assert y[i, tf_columns].any()
    assert len(bins["train"]) > len(bins["test"]) > len(bins["valid"]) > 0


LONG_RANGE = ("HepG2|EP300|None", "K562|H3K4me1|None")   # the features the partner decides (test's own copy)


def test_long_range_truth_against_fasta_and_bundle(toy, genome):
    """Each planted target/partner read from the FASTA (pyfaidx), the 1 kb / 8 kb visibility rules and
    the bundle's labels of the long-range features, from the truth file alone."""
    rows = read_table(toy["long_range_truth"])
    header, rows = rows[0], rows[1:]
    assert header[:10] == ["name", "chrom", "target_start", "target_end", "partner_start", "partner_end",
                           "partner_sequence", "word", "region_start", "region_end"]
    assert sorted(header[10:]) == sorted(LONG_RANGE)
    target_seq = {genome[r[1]][int(r[2]):int(r[3])].upper() for r in rows}
    assert len(target_seq) == 1 and len(next(iter(target_seq))) == 12
    labels_of_word, partners = {}, defaultdict(list)
    for _, chrom, t0, t1, p0, p1, partner, _, r0, r1, *labels in rows:
        t0, t1, p0, p1, r0, r1 = map(int, (t0, t1, p0, p1, r0, r1))
        assert genome[chrom][p0:p1].upper() == partner and not genome[chrom][t0:t1].islower()
        assert 1_500 <= abs(p0 - t0) < 3_500 and r0 <= t0 < t1 <= r1 and r1 - r0 <= 1_000
        assert labels_of_word.setdefault(partner, labels) == labels   # the word alone decides the labels
        partners[chrom].append(p0)
    assert len(labels_of_word) == 4 and sorted(map(tuple, labels_of_word.values())) == [
        ("0", "0"), ("0", "1"), ("1", "0"), ("1", "1")]
    # a partner is an 8-bp anchor, then six tandem copies of its 12-bp word
    units = {partner[8:20] for partner in labels_of_word}
    assert len(units) == 4 and all(partner[8:] == partner[8:20] * 6 for partner in labels_of_word)
    assert len({partner[:8] for partner in labels_of_word}) == 1
    for _, chrom, t0, _, p0, *_ in rows:
        t0, p0 = int(t0), int(p0)
        # not one copy of a partner word within the 1 kb a bin over the target sees; only its own
        # partner within 4.1 kb
        near = genome[chrom][max(0, t0 - 1_100):t0 + 1_100].upper()
        assert not any(w in near or revcomp(w) in near for w in units)
        wide = genome[chrom][max(0, t0 - 4_100):t0 + 4_100].upper()
        assert sum(wide.count(w) + wide.count(revcomp(w)) for w in labels_of_word) == 1
        assert [p for p in partners[chrom] if abs(p - t0) < 4_100] == [p0]
    names = [line.rstrip("\n") for line in open(toy["feature_names"])]
    columns = [names.index(f) for f in header[10:]]
    mat = scipy.io.loadmat(toy["test_mat"])
    y = mat["testdata"][: len(mat["testdata"]) // 2]
    bins = [(c, int(s), int(e)) for c, s, e, split in read_table(toy["deepsea_bins"]) if split == "test"]
    regions = [(r[1], int(r[8]), int(r[9]), [int(v) for v in r[10:]]) for r in rows]
    candidates = 0
    for (chrom, start, end), labels in zip(bins, y[:, columns], strict=True):
        # DeepSEA's rule on the truth alone: > 100 bp of the bin in an active region
        over = [flags for c, r0, r1, flags in regions if c == chrom and min(end, r1) - max(start, r0) > 100]
        candidates += bool(over)
        expected = np.array(over[0] if over else [0] * len(columns))
        assert np.array_equal(labels, expected), (chrom, start)
    assert y[:, columns].sum(axis=0).sum() >= 150 and candidates >= 200


# --- variants ----------------------------------------------------------------------------------------

def test_vcf_reads_with_pysam_and_matches_fasta(toy, genome):
    truth = {row[2]: row for row in read_table(toy["variant_truth"], header=True)}
    vcf = pysam.VariantFile(str(toy["vcf"]))
    assert {name: vcf.header.contigs[name].length for name in vcf.header.contigs} == {
        name: len(seq) for name, seq in genome.items()}
    assert "KIND" in vcf.header.info
    records = list(vcf)
    assert [(list(genome).index(r.chrom), r.pos) for r in records] == sorted(
        (list(genome).index(r.chrom), r.pos) for r in records)
    mismatches = [r.id for r in records
                  if genome[r.chrom][r.pos - 1:r.pos - 1 + len(r.ref)].upper() != r.ref]
    assert len(mismatches) == 1 and truth[mismatches[0]][6] == "ref_mismatch"
    assert any(len(r.alts) >= 2 for r in records)
    assert any(len(r.ref) > 1 and len(r.alts[0]) == 1 for r in records)  # deletion
    assert any(len(r.ref) == 1 and len(r.alts[0]) > 1 for r in records)  # insertion
    assert any(r.pos == len(genome[r.chrom]) for r in records)  # last base of a chromosome
    assert set(truth) == {r.id for r in records}


def test_variant_truth_labels_break_elements_or_stay_far(toy, genome):
    rows = read_table(toy["variant_truth"], header=True)
    elements = {}
    for chrom, start, end, name, _, strand in read_table(toy["elements"]):
        elements.setdefault(name, []).append((chrom, int(start), int(end), strand))
    labels = Counter(row[6] for row in rows)
    assert labels["disruptive"] >= 20 and labels["neutral"] >= 20
    snv_kinds = Counter(row[7].split(":")[0] for row in rows if row[6] == "disruptive" and row[5] == "snv")
    assert len(set(snv_kinds.values())) == 1 and len(snv_kinds) == 7  # as many of each element kind
    consensus = {"TATA": TATA, "Inr": INR, "GCbox": GC_BOX, **TF_MOTIFS}
    loci = defaultdict(list)  # everything a neutral variant must stay away from
    for chrom, start, end, *_ in read_table(toy["elements"]) + read_table(toy["cpg_islands"]) + read_table(
            toy["features_bed"]):
        loci[chrom].append((int(start), int(end)))
    for chrom, pos, _, ref, alt, kind, label, element in rows:
        at = int(pos) - 1
        if label == "disruptive":
            hits = [e for e in elements[element] if e[0] == chrom and e[1] <= at < e[2] or
                    kind == "deletion" and e[0] == chrom and e[1] == at + 1]
            assert len(hits) == 1, element
            _, start, end, strand = hits[0]
            whole = genome[chrom].upper()
            seq, mutated = whole[start:end], whole[start:at] + alt + whole[at + len(ref):end]
            oriented = (lambda s: s) if strand == "+" else revcomp
            assert oriented(seq) == consensus[element.split(":")[0]]
            assert consensus[element.split(":")[0]] not in (oriented(mutated), mutated)
        elif label == "neutral" and element == ".":
            distance = min(max(a - at, at - b, 0) for a, b in loci[chrom])
            assert distance >= 1_000


def test_in_element_controls_sit_beside_a_disrupted_element_and_touch_no_motif(toy, genome):
    rows = read_table(toy["variant_truth"], header=True)
    beds = read_table(toy["elements"])
    words = [TATA, INR, GC_BOX, *TF_MOTIFS.values()]
    words += [revcomp(w) for w in words]
    controls = [row for row in rows if row[6] == "neutral" and row[7] != "."]
    disrupted = Counter(row[7] for row in rows if row[6] == "disruptive")
    assert Counter(row[7] for row in controls) == disrupted and len(controls) >= 20  # one per disrupted element
    for chrom, pos, _, ref, alt, kind, _, element in controls:
        at = int(pos) - 1
        whole = genome[chrom].upper()
        assert kind == "snv" and len(ref) == len(alt) == 1 and ref != alt and whole[at] == ref
        named = [(int(s), int(e)) for c, s, e, name, *_ in beds if c == chrom and name == element]
        assert min(max(s - at, at - (e - 1)) for s, e in named) in range(3, 31)  # 3-30 bp beside it
        assert all(at < int(s) - 1 or at > int(e) for c, s, e, *_ in beds if c == chrom)  # no element base
        before, after = whole[at - 30:at + 31], whole[at - 30:at] + alt + whole[at + 1:at + 31]
        assert [before.count(w) for w in words] == [after.count(w) for w in words]


# --- determinism, manifest, resume, parameters -------------------------------------------------------

def test_same_seed_gives_identical_bytes_other_seed_differs(tmp_path):
    first = generate(tmp_path / "a", seed=3, scale=0.15)
    second = generate(tmp_path / "b", seed=3, scale=0.15)
    other = generate(tmp_path / "c", seed=4, scale=0.15)
    for key in first:
        assert first[key].read_bytes() == second[key].read_bytes(), key
    assert first["fasta"].read_bytes() != other["fasta"].read_bytes()


def test_manifest_lists_every_file_with_its_sha256(toy):
    manifest = json.loads(toy["manifest"].read_text())
    assert (manifest["seed"], manifest["scale"]) == (0, 1.0) and manifest["version"] >= 1
    assert set(manifest["files"]) == set(toy) - {"manifest"}
    for key, entry in manifest["files"].items():
        assert entry["sha256"] == hashlib.sha256(toy[key].read_bytes()).hexdigest()
        assert (toy[key].parent / entry["path"]) == toy[key]


def test_second_call_reuses_files_and_repairs_a_damaged_one(tmp_path):
    paths = generate(tmp_path, seed=1, scale=0.15)
    stamp = paths["fasta"].stat().st_mtime_ns
    original = paths["vcf"].read_bytes()
    assert generate(tmp_path, seed=1, scale=0.15)["fasta"].stat().st_mtime_ns == stamp
    paths["vcf"].write_text("damaged")
    generate(tmp_path, seed=1, scale=0.15)
    assert paths["vcf"].read_bytes() == original
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_an_edited_module_of_the_package_writes_the_files_anew(tmp_path, monkeypatch):
    """Editing any generator module (here a stand-in for toy_chromatin.py) without a VERSION bump must not
    leave the old files in place."""
    import dnabird.datasets.toy as toy_module

    module = tmp_path / "toy_chromatin.py"
    module.write_text("# version one\n")
    monkeypatch.setattr(toy_module, "generator_sources", lambda generator: [module])
    paths = generate(tmp_path / "out", seed=1, scale=0.1)
    stamp = paths["fasta"].stat().st_mtime_ns
    assert generate(tmp_path / "out", seed=1, scale=0.1)["fasta"].stat().st_mtime_ns == stamp
    module.write_text("# version two\n")
    assert generate(tmp_path / "out", seed=1, scale=0.1)["fasta"].stat().st_mtime_ns != stamp


@pytest.mark.parametrize(("kwargs", "name"), [({"scale": 0.0}, "scale"), ({"seed": -1}, "seed"),
                                              ({"seed": 1.5}, "seed")])
def test_bad_parameters_are_named(tmp_path, kwargs, name):
    with pytest.raises(ParameterError, match=name):
        generate(tmp_path, **kwargs)
