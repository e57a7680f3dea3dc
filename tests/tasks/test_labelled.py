"""The `labelled` task: data built from a user's files (skips listed, splits checked, long inputs refused or
cropped, leakage counted and dropped, regression targets transformed on train only), and fine-tuning the
fixture's pretrained model on planted-motif tables through `dnabird run` (binary) and `dnabird finetune`
(regression), beside the k-mer baseline."""

import json

import numpy as np
import pandas as pd
import pytest

from dnabird.data.tokenizer import load_tokenizer
from dnabird.datasets.planted_motifs import planted_table
from dnabird.errors import DnabirdError, InputFormatError, ParameterError
from dnabird.tasks.labelled import LabelledConfig, LabelledData, LeakageConfig, build

BLOCK = 16


@pytest.fixture(scope="module")
def tokenizer(embedded_default):
    return load_tokenizer(embedded_default.tokenizer)


def config(tmp_path, embedded_default, **data) -> LabelledConfig:
    leakage = data.pop("leakage", {})
    made = LabelledConfig(pretrained="none", model="tiny", tokenizer=str(embedded_default.tokenizer),
                          data=LabelledData(**data), leakage=LeakageConfig(**leakage))
    made.train.out_dir = str(tmp_path / "run")
    return made


def sequences(count: int, length: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return ["".join(rng.choice(list("ACGT"), length)) for _ in range(count)]


def test_regions_off_the_genome_are_counted_and_listed_not_dropped_silently(tmp_path, embedded_default, tokenizer):
    from dnabird.genome.reference import Genome

    with Genome(embedded_default.fasta) as genome:
        length = genome.length("chr1")
    rows = [("chr1", 20000 + 300 * i, 20100 + 300 * i, i % 2, split) for i, split in
            enumerate(["train"] * 8 + ["validation"] * 4 + ["test"] * 4)]
    rows += [("chrUn_x", 10, 100, 1, "train"), ("chr1", length - 50, length - 10, 0, "test")]
    rows += [("chr1", 1000, 1100, 1, "train")]        # the fixture's chr1 opens with 10 kb of N
    pd.DataFrame(rows, columns=["chrom", "start", "end", "label", "split"]).to_csv(tmp_path / "r.csv", index=False)
    made = config(tmp_path, embedded_default, path=str(tmp_path / "r.csv"), genome=str(embedded_default.fasta),
                  window_length=200)
    data = build(made, tokenizer, block_size=BLOCK, out_dir=tmp_path / "run")
    skipped = pd.read_csv(tmp_path / "run" / "skipped.tsv", sep="\t")
    assert skipped[["reason", "chrom", "line"]].values.tolist() == [["unknown_chromosome", "chrUn_x", 18],
                                                                    ["past_contig_end", "chr1", 19],
                                                                    ["all_n_bases", "chr1", 20]]
    assert data.summary["skipped"] == {"unknown_chromosome": 1, "past_contig_end": 1, "all_n_bases": 1}
    assert (len(data.train), len(data.validation), len(data.test)) == (8, 4, 4)
    assert data.spec.window_length == 200 and data.spec.anchor == "centre" and data.spec.problem == "binary"
    overlaps = data.summary["leakage"]["test"]["overlapping_train_region"]
    assert overlaps["count"] == 0   # windows of 200 bp centred 300 bp apart touch at most
    assert data.summary["leakage"]["pretraining"]["checked"] is False   # trained from scratch
    made.pretrained = str(embedded_default.checkpoint)
    pretrained = build(made, tokenizer, block_size=BLOCK, out_dir=tmp_path / "run")
    assert pretrained.summary["leakage"]["pretraining"]["test_chromosomes_pretrained_on"] == ["chr1"]
    assert "test chromosomes ['chr1'] were in the pretraining corpus" in \
        pretrained.summary["leakage"]["pretraining"]["warning"]


def test_test_chromosomes_seen_in_pretraining_are_reported(tmp_path, embedded_default):
    from dnabird.data.leakage import pretraining_chromosomes

    chromosomes, source = pretraining_chromosomes(embedded_default.checkpoint)
    corpus = json.loads((embedded_default.root / "corpus" / "report.json").read_text())
    assert chromosomes == sorted(corpus["splits"]["train"]["contigs"]) and "shards" in source
    assert pretraining_chromosomes(tmp_path) == (None, "the checkpoint records no pretraining corpus "
                                                       "(no pretraining run.json beside it)")


def test_a_split_without_a_class_is_an_error(tmp_path, embedded_default, tokenizer):
    texts = sequences(12, 40)
    splits = ["train"] * 6 + ["validation"] * 3 + ["test"] * 3
    labels = [0, 1] * 3 + [0, 1, 0] + [0, 0, 0]
    pd.DataFrame({"sequence": texts, "label": labels, "split": splits}).to_csv(tmp_path / "s.csv", index=False)
    with pytest.raises(DnabirdError, match=r"the test split holds no example of class\(es\) \['label'\]"):
        build(config(tmp_path, embedded_default, path=str(tmp_path / "s.csv")), tokenizer, block_size=BLOCK,
              out_dir=tmp_path / "run")


def test_regions_without_a_genome_are_an_error_naming_the_file_and_the_key(tmp_path, embedded_default, tokenizer):
    (tmp_path / "r.bed").write_text("chr1\t100\t200\t1\nchr1\t300\t400\t0\n")
    with pytest.raises(DnabirdError, match=r"r.bed holds regions \(chrom, start, end\), whose bases are read from a "
                                           r"genome: set data.genome to the FASTA"):
        build(config(tmp_path, embedded_default, path=str(tmp_path / "r.bed")), tokenizer, block_size=BLOCK,
              out_dir=tmp_path / "run")


def test_outputs_named_as_a_prediction_tables_column_are_refused_before_training(tmp_path, embedded_default,
                                                                                  tokenizer):
    frame = pd.DataFrame({"sequence": sequences(30, 40), "length": np.linspace(0.5, 9.5, 30)})
    frame.to_csv(tmp_path / "s.csv", index=False)
    with pytest.raises(DnabirdError, match=r"s.csv: the head's outputs \['length'\] \(label columns or classes\) are "
                                           r"named as columns of the tables `dnabird predict` writes \(.*\bstart\b"):
        build(config(tmp_path, embedded_default, path=str(tmp_path / "s.csv")), tokenizer, block_size=BLOCK,
              out_dir=tmp_path / "run")


def test_long_inputs_are_refused_naming_the_row_or_centre_cropped(tmp_path, embedded_default, tokenizer):
    texts = sequences(12, 40)
    texts[7] = sequences(1, 2000, seed=9)[0]
    splits = ["train"] * 6 + ["validation"] * 3 + ["test"] * 3
    pd.DataFrame({"sequence": texts, "label": [0, 1] * 6, "split": splits}).to_csv(tmp_path / "s.csv", index=False)
    refuse = config(tmp_path, embedded_default, path=str(tmp_path / "s.csv"), eval_length=64)
    with pytest.raises(InputFormatError, match=r"s.csv, line 9: input of 2000 bp is \d+ tokens .* longer than the "
                                               r"model's 64"):
        build(refuse, tokenizer, block_size=BLOCK, out_dir=tmp_path / "run")
    crop = config(tmp_path, embedded_default, path=str(tmp_path / "s.csv"), eval_length=64, long_inputs="centre_crop")
    data = build(crop, tokenizer, block_size=BLOCK, out_dir=tmp_path / "run")
    assert data.summary["long_inputs"]["cropped"] == 1 and data.spec.eval_length == 64
    ids = data.validation.ids[1]   # the long one: validation's second row
    assert (ids != tokenizer.pad_id).sum() >= 60    # the longest centre that fits: close to the 64 tokens
    kept = tokenizer.decode(ids[1:(ids != tokenizer.pad_id).sum() - 1].tolist()).replace(" ", "")
    middle = len(texts[7]) // 2
    assert len(kept) < 2000 and texts[7][middle - len(kept) // 2 + 2:middle + len(kept) // 2 - 2] in kept


def test_leaked_examples_are_counted_then_dropped_and_listed(tmp_path, embedded_default, tokenizer):
    complement = str.maketrans("ACGT", "TGCA")
    train, validation, test = sequences(20, 60, 1), sequences(6, 60, 2), sequences(8, 60, 3)
    test[0], test[1] = train[0], train[1].translate(complement)[::-1]        # a copy and a reverse complement
    test[2] = sequences(1, 20, 4)[0] + train[2][5:45]                       # shares 40 bp
    frame = pd.DataFrame({"sequence": train + validation + test,
                          "label": [i % 2 for i in range(20)] + [0, 1] * 3 + [0, 0, 1, 1, 0, 1, 0, 1],
                          "split": ["train"] * 20 + ["validation"] * 6 + ["test"] * 8})
    frame.to_csv(tmp_path / "s.csv", index=False)
    counted = build(config(tmp_path, embedded_default, path=str(tmp_path / "s.csv")), tokenizer, block_size=BLOCK,
                    out_dir=tmp_path / "run")
    leak = counted.summary["leakage"]["test"]
    assert leak["identical_to_train"] == {"count": 2, "fraction": 0.25}
    assert leak["identical_other_label"]["count"] == 1          # test[1] is labelled 0, train[1] 1
    assert leak["sharing_kmer_with_train"]["count"] == 3
    assert counted.summary["leakage"]["validation"]["any"]["count"] == 0
    assert any("test: 2 of 8 examples (25.0 %) identical to train" in w for w in counted.summary["leakage"]["warnings"])
    dropped = build(config(tmp_path, embedded_default, path=str(tmp_path / "s.csv"), leakage={"drop": True}),
                    tokenizer, block_size=BLOCK, out_dir=tmp_path / "run")
    assert len(dropped.test) == 5 and len(dropped.train) == 20
    listed = pd.read_csv(tmp_path / "run" / "leakage_dropped.tsv", sep="\t")
    assert listed["line"].tolist() == [28, 29, 30]
    assert listed["reason"].tolist()[0] == "identical_to_train,sharing_kmer_with_train"


def test_regression_targets_are_transformed_with_train_statistics_only(tmp_path, embedded_default, tokenizer):
    rng = np.random.default_rng(0)
    targets = rng.gamma(2.0, 3.0, size=(30, 2))
    splits = np.array(["train"] * 20 + ["validation"] * 5 + ["test"] * 5)
    pd.DataFrame({"sequence": sequences(30, 40), "dev": targets[:, 0], "hk": targets[:, 1], "split": splits}) \
        .to_csv(tmp_path / "t.csv", index=False)
    made = config(tmp_path, embedded_default, path=str(tmp_path / "t.csv"), log1p=True, standardise=True)
    data = build(made, tokenizer, block_size=BLOCK, out_dir=tmp_path / "run")
    logged = np.log1p(targets[splits == "train"])
    assert data.spec.problem == "regression" and data.spec.labels == ("dev", "hk")
    np.testing.assert_allclose(data.spec.target_transform["mean"], logged.mean(0))
    np.testing.assert_allclose(data.spec.target_transform["std"], logged.std(0))
    np.testing.assert_allclose(data.test.labels, (np.log1p(targets[splits == "test"]) - logged.mean(0)) / logged.std(0),
                               rtol=1e-5)
    np.testing.assert_allclose(data.spec.transform.inverse(data.test.labels), targets[splits == "test"], rtol=1e-5)
    assert data.baseline_features["4-mer"].model == "ridge" and data.loss.kind == "mse"
    poisson = config(tmp_path, embedded_default, path=str(tmp_path / "t.csv"), loss="poisson", standardise=True)
    with pytest.raises(ParameterError, match="data.standardise=True is invalid: expected false under a Poisson loss"):
        build(poisson, tokenizer, block_size=BLOCK, out_dir=tmp_path / "run")
    counts = build(config(tmp_path, embedded_default, path=str(tmp_path / "t.csv"), loss="poisson"), tokenizer,
                   block_size=BLOCK, out_dir=tmp_path / "run")
    assert counts.spec.transform.link == "exp" and counts.loss.kind == "poisson"


def test_class_weights_and_positive_weights_balanced_on_train(tmp_path, embedded_default, tokenizer):
    labels = ["a"] * 10 + ["b"] * 6 + ["c"] * 4 + ["a", "b", "c"] * 2
    splits = ["train"] * 20 + ["validation"] * 3 + ["test"] * 3
    pd.DataFrame({"sequence": sequences(26, 30), "label": labels, "split": splits}).to_csv(tmp_path / "m.csv",
                                                                                          index=False)
    data = build(config(tmp_path, embedded_default, path=str(tmp_path / "m.csv"), class_weights="balanced"),
                 tokenizer, block_size=BLOCK, out_dir=tmp_path / "run")
    assert data.spec.problem == "multiclass" and data.spec.labels == ("a", "b", "c")
    assert data.loss.class_weights == pytest.approx((20 / 30, 20 / 18, 20 / 12))
    assert data.train.labels.tolist() == [0] * 10 + [1] * 6 + [2] * 4


@pytest.fixture(scope="module")
def motif_pipeline(embedded_default, tmp_path_factory):
    """`dnabird run` of labelled_data (random DNA with a planted motif) -> labelled (binary, from the fixture's
    pretrained model) -> report."""
    from dnabird.pipeline import build_pipeline, run_pipeline
    from dnabird.stages import finetune, labelled_data
    from dnabird.stages.report import STAGE as REPORT

    out = tmp_path_factory.mktemp("labelled_pipeline")
    stages = [labelled_data.STAGE, finetune.stage("labelled"), REPORT]
    train = {"max_steps": 30, "global_batch_size": 16, "micro_batch_size": 16, "lr": 1e-3, "warmup_steps": 3,
             "eval_every": 15, "checkpoint_every": 30, "progress": False}
    sections = {"out_dir": str(out), "labelled_data": {"count": 300, "length": 150},
                "labelled": {"pretrained": str(embedded_default.checkpoint), "eval_batch_size": 64,
                             "bootstrap_resamples": 100, "train": train,
                             "data": {"path": "labelled_data:binary", "split_fractions": [0.6, 0.2, 0.2]}},
                "report": {"stages": ["labelled_data", "labelled"]}}
    run_pipeline(build_pipeline(sections, out / "p.yaml", stages), stages)
    return out


def test_fine_tuning_learns_a_planted_motif_beside_the_kmer_baseline(motif_pipeline):
    report = json.loads((motif_pipeline / "labelled" / "report.json").read_text())
    rows = report["test"]["rows"]
    model, baseline = rows["fine-tuned model"], rows["4-mer baseline"]
    print(f"\nbinary planted motif: model AUROC {model['auroc']:.3f} MCC {model['mcc']:.3f}; "
          f"4-mer baseline AUROC {baseline['auroc']:.3f} MCC {baseline['mcc']:.3f}")
    assert model["auroc"] > 0.75 and model["mcc"] > 0.3          # chance: 0.5 and 0
    assert 0 <= baseline["auroc"] <= 1 and report["data"]["examples"]["test"]["examples"] > 40
    assert report["data"]["leakage"]["test"]["identical_to_train"]["count"] == 0
    markdown = (motif_pipeline / "report.md").read_text()
    assert "| labelled |" in markdown and "Leakage against train" in markdown


def test_fine_tuning_learns_a_regression_target_beside_the_ridge_baseline(embedded_default, tmp_path):
    from dnabird.cli import main

    planted_table(300, 150, problem="regression", seed=1).to_csv(tmp_path / "motif.csv", index=False)
    out = tmp_path / "run"
    (tmp_path / "c.yaml").write_text(f"pretrained: {embedded_default.checkpoint}\n"
                                     f"data:\n  path: {tmp_path / 'motif.csv'}\n")
    main(["finetune", "labelled", "--config", str(tmp_path / "c.yaml"), "--out", str(out), "data.standardise=true",
          "data.split_fractions=[0.6,0.2,0.2]", "eval_batch_size=64", "bootstrap_resamples=100",
          "train.max_steps=30", "train.global_batch_size=16", "train.micro_batch_size=16", "train.lr=1e-3",
          "train.warmup_steps=3", "train.eval_every=15", "train.checkpoint_every=30", "train.progress=false"])
    report = json.loads((out / "report.json").read_text())
    model, baseline = report["test"]["rows"]["fine-tuned model"], report["test"]["rows"]["4-mer baseline"]
    print(f"\nregression planted motif: model Pearson {model['pearson']:.3f} R2 {model['r2']:.3f}; "
          f"4-mer ridge Pearson {baseline['pearson']:.3f} R2 {baseline['r2']:.3f}")
    assert model["pearson"] > 0.5 and baseline["pearson"] is not None
    assert json.loads((out / "model" / "task.json").read_text())["target_transform"]["mean"] is not None


def test_splits_not_given_are_drawn_from_train_keeping_copies_and_overlaps_together(tmp_path):
    from dnabird.data.labelled import read_labelled
    from dnabird.tasks.labelled import assign_splits, read_examples

    base = sequences(200, 30, 5)
    texts = base + base[:50] + [s.translate(str.maketrans("ACGT", "TGCA"))[::-1] for s in base[50:100]]
    frame = pd.DataFrame({"sequence": texts, "label": [0, 1] * 150, "split": ["train"] * 280 + ["test"] * 20})
    frame.to_csv(tmp_path / "s.csv", index=False)
    splits = assign_splits(read_labelled(tmp_path / "s.csv"), LabelledData(), seed=0)
    assert (splits[280:] == "test").all() and 10 < (splits == "validation").sum() < 60
    copies = [(i, 200 + i) for i in range(100) if 200 + i < 280]
    assert all(splits[i] == splits[j] for i, j in copies)        # a copy or reverse complement beside its original
    rng = np.random.default_rng(0)
    starts = rng.integers(0, 20000, 300)
    chroms = rng.choice(["chr1", "chr2", "chr8"], 300)
    pd.DataFrame({"chrom": chroms, "start": starts, "end": starts + 150, "label": [0, 1] * 150}) \
        .to_csv(tmp_path / "r.csv", index=False)
    regions = read_examples(LabelledData(path=str(tmp_path / "r.csv")))
    splits = assign_splits(regions, LabelledData(test_chromosomes=["chr8"]), seed=0)
    assert ((splits == "test") == (chroms == "chr8")).all() and (splits == "validation").sum() > 5
    splits = assign_splits(regions, LabelledData(), seed=0)
    for i in range(300):
        for j in range(300):
            if chroms[i] == chroms[j] and abs(int(starts[i]) - int(starts[j])) < 150:
                assert splits[i] == splits[j]
    assert {"train", "validation", "test"} == set(splits)
