"""The variant benchmark: its metrics against scikit-learn and hand counts, its labels-table checks, and one run of
`dnabird benchmark-variants` on the embedded default."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from dnabird.cli import main
from dnabird.errors import InputFormatError, ParameterError
from dnabird.genome.reference import Genome, reverse_complement
from dnabird.variants import embed
from dnabird.variants.benchmark import read_labels
from dnabird.variants.benchmark_metrics import ranking_metrics, top_count


def test_metrics_equal_scikit_learn_and_pair_counts_on_a_synthetic_set():
    rng = np.random.default_rng(3)
    n = 300
    labels = rng.random(n) < 0.3
    scores = np.round(rng.normal(size=n) + labels, 1)  # rounded: ties across classes
    chroms = rng.choice(["chr1", "chr2", "chr3"], n)
    groups = np.arange(n) // 10
    out = ranking_metrics(labels.astype(int), scores, chroms, groups=groups, top_k=30, resamples=300)
    assert out["auroc"] == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    assert out["auprc"] == pytest.approx(average_precision_score(labels, scores), abs=1e-12)
    per_chrom = {c: (average_precision_score(labels[chroms == c], scores[chroms == c]), (chroms == c).sum())
                 for c in ("chr1", "chr2", "chr3")}
    weighted = sum(a * k for a, k in per_chrom.values()) / n
    assert out["auprc_by_chrom"] == pytest.approx(weighted, abs=1e-12)
    assert out["chromosomes"]["chr2"]["auprc"] == pytest.approx(per_chrom["chr2"][0], abs=1e-12)
    wins = pairs = 0
    for g in np.unique(groups):
        pos, neg = scores[(groups == g) & labels], scores[(groups == g) & ~labels]
        wins += sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
        pairs += len(pos) * len(neg)
    assert out["matched_auroc"] == pytest.approx(wins / pairs, abs=1e-12)
    for name in ("auroc", "auprc", "auprc_by_chrom", "odds_ratio", "matched_auroc"):
        low, high = out[f"{name}_interval"]
        assert low <= out[name] <= high and low < high, name
    assert (out["variants"], out["positives"]) == (n, labels.sum())


def test_chromosome_weighted_auprc_by_hand():
    # chr1: the positive on top -> AUPRC 1; chr2: 0.8 (-), 0.6 (+), 0.2 (+), 0.1 (-) -> (1/2 + 2/3) / 2 = 7/12;
    # chr3: no positive -> left out. Weighted by variants: (3 * 1 + 4 * 7/12) / 7 = 16/21.
    labels = [1, 0, 0, 1, 0, 1, 0, 0, 0]
    scores = [0.9, 0.5, 0.1, 0.2, 0.8, 0.6, 0.1, 0.3, 0.4]
    chroms = ["chr1"] * 3 + ["chr2"] * 4 + ["chr3"] * 2
    out = ranking_metrics(labels, scores, chroms, resamples=20)
    assert out["auprc_by_chrom"] == pytest.approx(16 / 21)
    assert out["chromosomes"]["chr3"] == {"variants": 2, "positives": 0, "auprc": None}


def test_top_k_odds_ratio_by_hand_counts():
    labels = [1, 1, 0, 1, 0, 0, 0, 0, 0, 0]
    scores = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
    out = ranking_metrics(labels, scores, ["c"] * 10, top_k=3, resamples=20)
    # top 3: 2 positives, 1 negative; rest: 1 positive, 6 negatives -> (2 * 6) / (1 * 1)
    assert out["top_counts"] == {"top_positives": 2, "top_negatives": 1, "rest_positives": 1, "rest_negatives": 6}
    assert out["odds_ratio"] == pytest.approx(12.0)
    # a tie at the cut joins the top: scores 8 and 7 tie -> top 4 (3 positives, 1 negative), rest 0 positives:
    # a zero cell, so 0.5 is added to each: (3.5 * 6.5) / (1.5 * 0.5)
    tied = ranking_metrics(labels, [10, 9, 8, 8, 6, 5, 4, 3, 2, 1], ["c"] * 10, top_k=3, resamples=20)
    assert tied["top_counts"]["top_positives"] == 3 and tied["top_counts"]["top_negatives"] == 1
    assert tied["odds_ratio"] == pytest.approx(3.5 * 6.5 / (1.5 * 0.5))
    assert top_count(0.01, 1000) == 10 and top_count(0.01, 50) == 1 and top_count(30, 1000) == 30
    with pytest.raises(ParameterError, match="top_k"):
        top_count(2.5, 100)


def write(path, text):
    path.write_text(text)
    return path


def test_labels_accept_every_spelling_and_reject_bad_tables(tmp_path):
    good = write(tmp_path / "ok.csv", "chrom,pos,ref,alt,label,match_group\nchr1,5,A,G,Pathogenic,g1\n"
                 "chr1,6,A,G,benign,g1\nchr1,7,A,G,TRUE,g2\nchr1,8,A,G,false,g2\nchr1,9,A,G,1,g3\n"
                 "chr1,10,A,G,Negative,g3\nchr1,11,A,G,positive,g3\nchr1,12,A,G,0,g3\n")
    table = read_labels(good)
    assert table["label"].tolist() == [1, 0, 1, 0, 1, 0, 1, 0] and table["line"].tolist() == list(range(2, 10))
    assert table["match_key"].tolist() == ["g1", "g1", "g2", "g2", "g3", "g3", "g3", "g3"]
    assert read_labels(good, match_on=None)["match_key"].isna().all()
    missing = write(tmp_path / "missing.tsv", "chrom\tpos\tref\tlabel\nchr1\t5\tA\t1\n")
    with pytest.raises(InputFormatError, match=r"missing.tsv: missing column\(s\) alt \(it has chrom, pos, ref, label"):
        read_labels(missing)
    with pytest.raises(InputFormatError, match=r"ok.csv: missing column\(s\) trait"):
        read_labels(good, match_on="trait")
    unknown = write(tmp_path / "unknown.tsv", "chrom\tpos\tref\talt\tlabel\nchr1\t5\tA\tG\t1\nchr1\t6\tA\tG\tVUS\n")
    with pytest.raises(InputFormatError, match="unknown.tsv, line 3: label 'VUS' is not one of"):
        read_labels(unknown)
    twice = write(tmp_path / "twice.tsv", "chrom\tpos\tref\talt\tlabel\nchr1\t5\tA\tG\t1\nchr1\t6\tA\tG\t0\n"
                  "chr1\t5\tA\tG\t0\n")
    with pytest.raises(InputFormatError, match=r"twice.tsv: variant chr1:5 A>G is listed 2 times \(lines 2, 4"):
        read_labels(twice)
    clash = write(tmp_path / "clash.tsv", "chrom\tpos\tref\talt\tlabel\tmlm_llr\nchr1\t5\tA\tG\t1\t0.3\n")
    with pytest.raises(InputFormatError, match="clash.tsv: column.s. mlm_llr would be overwritten"):
        read_labels(clash)
    position = write(tmp_path / "pos.tsv", "chrom\tpos\tref\talt\tlabel\nchr1\tfive\tA\tG\t1\n")
    with pytest.raises(InputFormatError, match="pos.tsv, line 2: pos 'five'"):
        read_labels(position)


def test_parquet_labels_read_as_the_same_table_in_tsv_with_the_same_checks(tmp_path):
    """TraitGym's layout (chrom without "chr", pos int64, label bool, an integer match_group, extra columns)
    as parquet and as TSV: the same table, row numbers in place of line numbers, and the same errors."""
    frame = pd.DataFrame({"chrom": ["1", "1", "2", "X"], "pos": [5, 6, 17, 9], "ref": ["A", "C", "G", "T"],
                          "alt": ["G", "T", "A", "C"], "label": [True, False, True, False],
                          "match_group": [0, 0, 1, 1], "consequence": ["PLS", "dELS", "intron", "PLS"],
                          "tss_dist": [12.5, 300.0, 4000.0, 0.0]})
    frame.to_parquet(tmp_path / "labels.parquet")
    frame.to_csv(tmp_path / "labels.tsv", sep="\t", index=False)
    parquet, tsv = read_labels(tmp_path / "labels.parquet"), read_labels(tmp_path / "labels.tsv")
    assert parquet["line"].tolist() == [1, 2, 3, 4] and tsv["line"].tolist() == [2, 3, 4, 5]
    pd.testing.assert_frame_equal(parquet.drop(columns="line"), tsv.drop(columns="line"))
    assert parquet["label"].tolist() == [1, 0, 1, 0] and parquet["pos"].tolist() == [5, 6, 17, 9]
    assert parquet["match_key"].tolist() == ["0", "0", "1", "1"]
    for column, values, message in (("label", [True, False, None, False], "'row 3': label '' is not one of"),
                                    ("label", ["pathogenic", "VUS", "benign", "benign"], "'row 2': label 'VUS'"),
                                    ("pos", [5, 6, 17, 0], "'row 4': pos '0' is not a 1-based position")):
        frame.assign(**{column: values}).to_parquet(tmp_path / "bad.parquet")
        with pytest.raises(InputFormatError, match=f"bad.parquet, record {message}"):
            read_labels(tmp_path / "bad.parquet")
    frame.drop(columns="alt").to_parquet(tmp_path / "no_alt.parquet")
    with pytest.raises(InputFormatError, match=r"no_alt.parquet: missing column\(s\) alt"):
        read_labels(tmp_path / "no_alt.parquet")
    pd.concat([frame, frame.iloc[[0]]]).to_parquet(tmp_path / "twice.parquet")
    with pytest.raises(InputFormatError, match=r"twice.parquet: variant 1:5 A>G is listed 2 times \(rows 1, 5"):
        read_labels(tmp_path / "twice.parquet")
    with pytest.raises(InputFormatError, match="broken.parquet: not a readable parquet table"):
        read_labels(write(tmp_path / "broken.parquet", "chrom\tpos\n"))


def test_command_benchmarks_the_embedded_default_and_loses_no_variant(embedded_default, tmp_path, capsys):
    """A labels table from the toy's truth table (labels) and VCF (coordinates), with a REF-mismatch decoy."""
    truth = pd.read_csv(embedded_default.fasta.parent / "variant_truth.tsv", sep="\t")
    vcf = pd.read_csv(embedded_default.fasta.parent / "variants.vcf", sep="\t", comment="#", header=None,
                      usecols=range(5), names=["chrom", "pos", "id", "ref", "alt"])
    labels = vcf.merge(truth[["id", "label"]], on="id")
    labels = labels[(labels.index % 3 == 0) | (labels["label"] == "ref_mismatch")]  # a third, for time
    labels["label"] = np.where(labels["label"] == "disruptive", "pathogenic", "benign")
    labels["match_group"] = labels["chrom"]  # matched within chromosomes
    labels.to_csv(tmp_path / "labels.tsv", sep="\t", index=False)
    out = tmp_path / "bench"
    assert main(["benchmark-variants", "--model", str(embedded_default.checkpoint), "--genome",
                 str(embedded_default.fasta), "--labels", str(tmp_path / "labels.tsv"), "--out", str(out),
                 "--window-bp", "101", "--resamples", "50", "--top-k", "10", "--device", "cpu"]) == 0
    assert "| mlm_llr | −LLR |" in capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    scores = pd.read_csv(out / "scores.tsv", sep="\t")
    skipped = pd.read_csv(out / "skipped.tsv", sep="\t")
    assert set(report["methods"]) == {"mlm_llr", "llr_per_bp", "embed_dist", "markov"}
    assert len(scores) == len(labels) and scores["id"].tolist() == labels["id"].tolist()
    decoys = set(truth.loc[truth["label"] == "ref_mismatch", "id"])
    for method, entry in report["methods"].items():
        missing = scores.loc[scores[method].isna(), "id"]
        rows = skipped[skipped["method"] == method]
        assert set(missing) == decoys
        assert len(rows) == entry["unscored"] == len(decoys) and (rows["reason"] == "REF mismatch").all()
        kept = scores[scores[method].notna()]
        assert entry["auroc"] == pytest.approx(roc_auc_score(kept["label"], kept[method]), abs=1e-12)
        assert entry["auprc"] == pytest.approx(average_precision_score(kept["label"], kept[method]), abs=1e-12)
        with_pairs = (kept.groupby("chrom")["label"].nunique() == 2).sum()  # groups holding both classes
        assert entry["matched_groups"] == with_pairs > 0 and entry["matched_auroc"] is not None
    assert report["match_on"] == "match_group" and report["skipped"] == 4 * len(decoys)
    assert (out / "roc.png").stat().st_size > 1000 and (out / "pr.png").stat().st_size > 1000
    assert "AUPRC by chrom" in (out / "report.md").read_text()
    assert "| markov | −ΔlogL, order-6 Markov chain |" in (out / "report.md").read_text()
    assert_markov_by_hand(embedded_default, scores, report["settings"]["markov"])
    # the embedding distance of one SNV by hand: `embed` of its windows, mean over DNA tokens, both strands
    settings = report["settings"]["embed_dist"]
    row = scores[scores["embed_dist"].notna()].iloc[0]
    window = settings["window_bp"]
    start = row["pos"] - 1 - window // 2
    ref = Genome(embedded_default.fasta).fetch(row["chrom"], start, start + window).sequence.upper()
    alt = ref[:window // 2] + row["alt"] + ref[window // 2 + 1:]
    vectors = embed(embedded_default.checkpoint, [ref, alt, reverse_complement(ref), reverse_complement(alt)],
                    pooling="mean_sequence", eval_length=settings["eval_length"], device="cpu", progress=False)
    expected = (np.linalg.norm(vectors[0] - vectors[1]) + np.linalg.norm(vectors[2] - vectors[3])) / 2
    assert row["embed_dist"] == pytest.approx(expected, rel=1e-5)


def assert_markov_by_hand(embedded_default, scores, settings):
    """The baseline of SNVs whose REF and ALT tokens share their bounds: Σ over the bases of the token holding
    the SNV of log p(base | the 6 before it, fewer near the window's start), ALT − REF, on both strands, read
    from the chain's own tables (`genome_chain`, fitted on the genome)."""
    from dnabird.model.checkpoint import read_tokenizer
    from dnabird.pretraining.markov import ALPHABET
    from dnabird.variants.baseline import genome_chain

    genome, tokenizer = Genome(embedded_default.fasta), read_tokenizer(embedded_default.checkpoint)
    chain, window, checked = genome_chain(genome, tokenizer), settings["window_bp"], 0
    for row in scores[scores["markov"].notna() & (scores["ref"].str.len() == 1)
                      & (scores["alt"].str.len() == 1)].itertuples():
        start = row.pos - 1 - window // 2
        ref = genome.fetch(row.chrom, start, start + window).sequence.upper()
        alt = ref[:window // 2] + row.alt + ref[window // 2 + 1:]
        llr = []
        for r, a in ((ref, alt), (reverse_complement(ref), reverse_complement(alt))):
            spans = [next(s for s in tokenizer.offsets(x) if s[0] <= window // 2 < s[1]) for x in (r, a)]
            if spans[0] != spans[1] or tokenizer.offsets(r) != tokenizer.offsets(a):
                break

            def log_p(x, first, stop):
                total = 0.0
                for i in range(first, stop):
                    k = min(6, i)
                    context = sum(ALPHABET.index(x[i - lag]) * 5 ** (lag - 1) for lag in range(1, k + 1))
                    total += chain.log2[k][context, ALPHABET.index(x[i])] * np.log(2)
                return total

            llr.append(log_p(a, *spans[0]) - log_p(r, *spans[0]))
        else:
            assert row.markov == pytest.approx(-np.mean(llr), abs=1e-9)
            checked += 1
    assert checked >= 5
