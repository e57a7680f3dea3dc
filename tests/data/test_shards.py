"""Token shards: contents equal an independent sentencepiece + h5py path; O(1) reads; atomic writes."""

import json
import pickle

import h5py
import numpy as np
import pytest
import sentencepiece as spm

from dnabird.data import shards
from dnabird.data.corpus import Document, Sentence
from dnabird.data.shards import ShardReader, ids_dtype, write_shard
from dnabird.data.tokenizer import Tokenizer
from dnabird.errors import InputFormatError


def make_documents(seed, count, chroms=("chr1", "chr2")):
    """Documents of contiguous random sentences, in the corpus's shape."""
    rng = np.random.default_rng(seed)
    motifs = ["".join(rng.choice(list("ACGT"), size=int(n))) for n in rng.integers(3, 9, size=12)]
    documents = []
    for index in range(count):
        position, sentences = int(rng.integers(0, 10_000)), []
        for _ in range(int(rng.integers(2, 7))):
            length = int(rng.integers(30, 120))
            sequence = "".join(motifs[i] for i in rng.integers(len(motifs), size=length))[:length]
            sentences.append(Sentence(position, position + length, sequence))
            position += length
        documents.append(Document(f"p0-{index}", chroms[index % len(chroms)], sentences))
    return documents


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    path = tmp_path_factory.mktemp("tok") / "dna.model"
    sentences = [s.sequence for d in make_documents(99, 200) for s in d.sentences]
    return Tokenizer.train(sentences, path, vocab_size=120, sample_size=1000, seed=0)


@pytest.mark.parametrize("batch_sentences", [7, 4096])  # several encode batches, and one
def test_shard_matches_direct_sentencepiece_encoding(tmp_path, tokenizer, monkeypatch, batch_sentences):
    monkeypatch.setattr(shards, "_ENCODE_BATCH_SENTENCES", batch_sentences)
    documents = make_documents(1, 30)
    path = write_shard(tmp_path / "part-00-chr1.h5", documents, tokenizer, corpus_config={"passes": 1},
                       attrs={"source": "part-00-chr1.tsv.gz"})
    sp = spm.SentencePieceProcessor(model_file=str(tokenizer.path))
    sentences = [s for d in documents for s in d.sentences]
    expected_ids = [sp.encode(s.sequence) for s in sentences]
    with h5py.File(path, "r") as shard:
        assert shard["ids"].dtype == np.uint16
        assert shard["ids"][:].tolist() == [t for ids in expected_ids for t in ids]
        sentence_offsets = np.cumsum([0] + [len(x) for x in expected_ids])
        assert shard["sentence_offsets"][:].tolist() == sentence_offsets.tolist()
        document_offsets = np.cumsum([0] + [len(d.sentences) for d in documents])
        assert shard["document_offsets"][:].tolist() == document_offsets.tolist()
        chroms = json.loads(shard.attrs["chroms"])
        expected_coords = [[chroms.index(d.chrom), s.start, s.end] for d in documents for s in d.sentences]
        assert shard["coords"][:].tolist() == expected_coords
        assert shard["document_ids"].asstr()[:].tolist() == [d.id for d in documents]
        assert shard.attrs["tokenizer_hash"] == tokenizer.hash
        assert json.loads(shard.attrs["corpus_config"]) == {"passes": 1}
        assert shard.attrs["source"] == "part-00-chr1.tsv.gz"
        assert shard.attrs["num_documents"] == 30 and shard.attrs["num_sentences"] == len(sentences)


def test_ids_dtype_widens_for_large_vocabularies():
    assert ids_dtype(32000) == np.uint16 and ids_dtype(65536) == np.uint16
    assert ids_dtype(65537) == np.uint32


def test_reader_returns_any_document_across_shards(tmp_path, tokenizer):
    first, second = make_documents(2, 25), make_documents(3, 17, chroms=("chrX",))
    write_shard(tmp_path / "train" / "part-00-chr1.h5", first, tokenizer)
    write_shard(tmp_path / "train" / "part-01-chrX.h5", second, tokenizer)
    sp = spm.SentencePieceProcessor(model_file=str(tokenizer.path))
    everything = first + second
    with ShardReader(tmp_path / "train") as reader:
        assert len(reader) == 42
        assert reader.tokenizer_hash == tokenizer.hash
        for index in np.random.default_rng(0).permutation(42).tolist() + [-1]:
            document, expected = reader[index], everything[index]
            assert document.id == expected.id and document.chrom == expected.chrom
            expected_ids = [sp.encode(s.sequence) for s in expected.sentences]
            assert [ids.tolist() for ids in document.sentences] == expected_ids
            assert document.coords.tolist() == [[s.start, s.end] for s in expected.sentences]
            assert (document.start, document.end) == (expected.sentences[0].start, expected.sentences[-1].end)
        with pytest.raises(IndexError):
            reader[42]
    assert len(ShardReader(tmp_path / "train" / "part-01-chrX.h5")) == 17
    reader = ShardReader(tmp_path / "train")
    reader[0]  # opens a file
    copy = pickle.loads(pickle.dumps(reader))
    assert copy[30].id == everything[30].id and copy[30].coords.tolist() == reader[30].coords.tolist()


def test_reading_a_document_touches_only_that_document(tmp_path, tokenizer, monkeypatch):
    documents = make_documents(4, 300)
    path = write_shard(tmp_path / "big.h5", documents, tokenizer)
    reader = ShardReader(path)
    reads = []
    original = h5py.Dataset.__getitem__

    def spy(self, selection):
        out = original(self, selection)
        reads.append((self.name, np.asarray(out).size))
        return out

    monkeypatch.setattr(h5py.Dataset, "__getitem__", spy)
    document = reader[250]
    tokens = sum(len(s) for s in document.sentences)
    sizes = dict(reads)
    assert sizes["/ids"] == tokens
    assert sizes["/document_offsets"] == 2
    assert sizes["/sentence_offsets"] == len(document.sentences) + 1
    assert sizes["/coords"] == 3 * len(document.sentences)
    assert sum(size for _, size in reads) < 4 * tokens + 50


def test_failed_write_leaves_no_file(tmp_path, tokenizer):
    def exploding():
        yield from make_documents(5, 10)
        raise RuntimeError("corpus read failed")

    with pytest.raises(RuntimeError, match="corpus read failed"):
        write_shard(tmp_path / "part.h5", exploding(), tokenizer)
    bad = make_documents(6, 3)
    bad[2].sentences[1].sequence = "ACGTXACGT"
    where = f"p0-2 {bad[2].chrom}:{bad[2].sentences[1].start}-{bad[2].sentences[1].end}"
    with pytest.raises(InputFormatError, match=where):
        write_shard(tmp_path / "part.h5", bad, tokenizer)
    assert list(tmp_path.iterdir()) == []


def test_reader_refuses_mixed_tokenizers_and_missing_paths(tmp_path, tokenizer):
    other = Tokenizer.train([s.sequence for d in make_documents(7, 50) for s in d.sentences],
                            tmp_path / "other.model", vocab_size=60, seed=0)
    write_shard(tmp_path / "shards" / "a.h5", make_documents(8, 3), tokenizer)
    write_shard(tmp_path / "shards" / "b.h5", make_documents(9, 3), other)
    with pytest.raises(InputFormatError, match="different tokenizers"):
        ShardReader(tmp_path / "shards")
    with pytest.raises(InputFormatError, match="nowhere"):
        ShardReader(tmp_path / "nowhere")
