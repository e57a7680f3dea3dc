"""Stage `shards`: one shard per corpus part, equal to direct sentencepiece encoding; resumes per part."""

import gzip
import json

import h5py
import numpy as np
import pytest
import sentencepiece as spm

import dnabird.data.shards as shards_library
import dnabird.stages.shards as shards_stage
from dnabird.data.tokenizer import Tokenizer
from dnabird.pipeline import RunContext


def write_corpus(corpus_dir, seed=0):
    """A corpus written by hand in the corpus format: {split}/part-{pass}-{chrom}.tsv.gz."""
    rng = np.random.default_rng(seed)
    motifs = ["".join(rng.choice(list("ACGT"), size=int(n))) for n in rng.integers(3, 9, size=10)]
    for split, chroms in (("train", ["chr1", "chr2", "chr3"]), ("heldout", ["chr8"])):
        (corpus_dir / split).mkdir(parents=True)
        for chrom in chroms:
            lines, position = [], int(rng.integers(0, 100))
            for number in range(int(rng.integers(2, 5))):
                for _ in range(int(rng.integers(2, 6))):
                    length = int(rng.integers(40, 90))
                    sequence = "".join(motifs[i] for i in rng.integers(10, size=length))[:length]
                    fields = (f"p00:{chrom}:{number:06d}", chrom, position, position + length, sequence)
                    lines.append("\t".join(map(str, fields)))
                    position += length
            with gzip.open(corpus_dir / split / f"part-00-{chrom}.tsv.gz", "wt") as out:
                out.write("\n".join(lines) + "\n")


def read_tsv(path):
    with gzip.open(path, "rt") as handle:
        return [line.rstrip("\n").split("\t") for line in handle]


@pytest.fixture
def context(tmp_path):
    write_corpus(tmp_path / "corpus")
    sentences = [row[4] for p in (tmp_path / "corpus" / "train").glob("*.gz") for row in read_tsv(p)]
    Tokenizer.train(sentences, tmp_path / "dna.model", vocab_size=60, seed=0)
    return RunContext(tmp_path / "run", {"corpus": {"corpus": str(tmp_path / "corpus")},
                                            "tokenizer": {"model": str(tmp_path / "dna.model")}})


def test_each_part_becomes_a_shard_equal_to_direct_encoding(context, tmp_path):
    outputs = shards_stage.run(shards_stage.ShardsConfig(), context, tmp_path / "shards")
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "dna.model"))
    for split in ("train", "heldout"):
        parts = sorted((tmp_path / "corpus" / split).glob("*.tsv.gz"))
        assert sorted(p.name for p in outputs[split].glob("*.h5")) == \
            sorted(p.name.replace(".tsv.gz", ".h5") for p in parts)
        for part in parts:
            rows = read_tsv(part)
            with h5py.File(outputs[split] / part.name.replace(".tsv.gz", ".h5"), "r") as shard:
                assert shard["ids"][:].tolist() == [t for row in rows for t in sp.encode(row[4])]
                assert shard["coords"][:, 1:].tolist() == [[int(row[2]), int(row[3])] for row in rows]
                assert shard["document_ids"].asstr()[:].tolist() == list(dict.fromkeys(r[0] for r in rows))
                assert shard.attrs["source"] == part.name and shard.attrs["split"] == split


def test_interrupted_run_resumes_per_part_and_redoes_changed_parts(context, tmp_path, monkeypatch):
    written, real_write = [], shards_library.write_shard

    def write_then_fail(path, *args, **kwargs):
        if len(written) == 2:
            raise KeyboardInterrupt
        written.append(path.name)
        return real_write(path, *args, **kwargs)

    monkeypatch.setattr(shards_library, "write_shard", write_then_fail)
    config, stage_dir = shards_stage.ShardsConfig(splits=["train"]), tmp_path / "shards"
    with pytest.raises(KeyboardInterrupt):
        shards_stage.run(config, context, stage_dir)
    assert written == ["part-00-chr1.h5", "part-00-chr2.h5"]
    first = (stage_dir / "train" / "part-00-chr1.h5").stat().st_mtime_ns
    written.clear()
    monkeypatch.setattr(shards_library, "write_shard", lambda path, *a, **k: written.append(path.name) or
                        real_write(path, *a, **k))
    shards_stage.run(config, context, stage_dir)
    assert written == ["part-00-chr3.h5"]
    assert (stage_dir / "train" / "part-00-chr1.h5").stat().st_mtime_ns == first
    part = tmp_path / "corpus" / "train" / "part-00-chr2.tsv.gz"
    rows = read_tsv(part)
    rows[0][4] = rows[0][4][::-1]
    with gzip.open(part, "wt") as out:
        out.write("\n".join("\t".join(row) for row in rows) + "\n")
    written.clear()
    shards_stage.run(config, context, stage_dir)
    assert written == ["part-00-chr2.h5"]
    (tmp_path / "corpus" / "train" / "part-00-chr3.tsv.gz").unlink()
    shards_stage.run(config, context, stage_dir)
    assert sorted(p.name for p in (stage_dir / "train").iterdir()) == ["part-00-chr1.h5", "part-00-chr2.h5"]
    with h5py.File(stage_dir / "train" / "part-00-chr1.h5", "r") as shard:
        assert json.loads(shard.attrs["corpus_config"]) == {}
