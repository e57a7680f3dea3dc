"""DNA tokenizer: special ids, round trips, offsets, input checks, batches — checked against sentencepiece."""

import gzip
import hashlib
import pickle

import numpy as np
import pytest
import sentencepiece as spm

from dnabird.data.corpus import CorpusConfig, build_corpus
from dnabird.data.tokenizer import SPECIAL_TOKENS, Tokenizer, TokenizerConfig, reservoir_sample, train_on_corpus
from dnabird.errors import InputFormatError, ParameterError
from dnabird.genome.reference import Genome


def random_dna(rng, length, alphabet="ACGT"):
    return "".join(rng.choice(list(alphabet), size=length))


def structured_sentences(count, seed=0):
    """Sentences built from a few repeated motifs plus noise, so BPE has something to merge."""
    rng = np.random.default_rng(seed)
    motifs = [random_dna(rng, int(n)) for n in rng.integers(4, 12, size=20)]
    sentences = []
    for _ in range(count):
        parts, length = [], int(rng.integers(500, 1000))
        while sum(map(len, parts)) < length:
            parts.append(motifs[rng.integers(len(motifs))] if rng.random() < 0.6 else random_dna(rng, 3))
        sentences.append("".join(parts)[:length])
    return sentences


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    path = tmp_path_factory.mktemp("tok") / "dna.model"
    tokenizer = Tokenizer.train(structured_sentences(400), path, vocab_size=300, max_piece_length=12,
                                sample_size=300, seed=0, num_threads=1)
    return tokenizer, path


def test_special_ids_are_fixed_and_vocab_counts_them(trained):
    tokenizer, path = trained
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert [sp.piece_to_id(piece) for piece in SPECIAL_TOKENS] == [0, 1, 2, 3, 4]
    ids = (tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id, tokenizer.mask_id)
    assert ids == (0, 1, 2, 3, 4)
    assert sp.get_piece_size() == tokenizer.vocab_size == 300
    pieces = [sp.id_to_piece(i) for i in range(5, sp.get_piece_size())]
    assert set("".join(pieces)) == set("ACGTN")
    assert max(map(len, pieces)) <= 12


def test_round_trip_and_agreement_with_sentencepiece(trained):
    tokenizer, path = trained
    sp = spm.SentencePieceProcessor(model_file=str(path))
    rng = np.random.default_rng(1)
    for sequence in [*structured_sentences(5, seed=3), random_dna(rng, 700, "ACGTN"), "N" * 40, "A"]:
        ids = tokenizer.encode(sequence)
        assert ids == sp.encode(sequence)
        assert tokenizer.unk_id not in ids
        assert tokenizer.decode(ids) == sequence
    batch = structured_sentences(3, seed=4)
    assert tokenizer.encode(batch) == [sp.encode(s) for s in batch]
    copy = pickle.loads(pickle.dumps(tokenizer))   # as DataLoader workers receive it
    assert copy.encode(batch) == [sp.encode(s) for s in batch] and (copy.hash, copy.path) == (tokenizer.hash, path)


def test_offsets_tile_the_sentence(trained):
    tokenizer, _ = trained
    sequence = structured_sentences(1, seed=5)[0] + "NNNACGT"
    spans = tokenizer.offsets(sequence)
    ids = tokenizer.encode(sequence)
    assert len(spans) == len(ids)
    assert spans[0][0] == 0 and spans[-1][1] == len(sequence)
    for (_, end), (next_start, _) in zip(spans[:-1], spans[1:], strict=True):
        assert end == next_start
    for (start, end), token in zip(spans, ids, strict=True):
        assert sequence[start:end] == tokenizer.decode([token])


@pytest.mark.parametrize("bad", ["ACGTr", "ACGTR", "ACG T", "ACGU"])
def test_non_acgtn_input_names_the_record(trained, bad):
    tokenizer, _ = trained
    with pytest.raises(InputFormatError, match="chr7:100-105"):
        tokenizer.encode(bad, record="chr7:100-105")
    with pytest.raises(InputFormatError, match="doc9 1"):
        tokenizer.encode(["ACGT", bad], record="doc9")


def test_soft_masked_genome_windows_encode_as_their_upper_case(trained, tmp_path):
    """`tok.encode(genome.fetch(...).sequence)` on a window with soft-masked (lower-case) repeats."""
    tokenizer, path = trained
    sp = spm.SentencePieceProcessor(model_file=str(path))
    rng = np.random.default_rng(6)
    bases = "".join(c.lower() if rng.random() < 0.4 else c for c in structured_sentences(1, seed=6)[0])
    (tmp_path / "g.fa").write_text(f">chr1\n{bases}\n")
    window = Genome(tmp_path / "g.fa").fetch("chr1", 10, 400)
    assert any(c.islower() for c in window.sequence) and any(c.isupper() for c in window.sequence)
    expected = sp.encode(bases[10:400].upper())
    assert tokenizer.encode(window.sequence) == expected
    assert tokenizer.encode([window.sequence, window.sequence.lower()]) == [expected, expected]
    assert tokenizer.decode(tokenizer.encode(window.sequence)) == bases[10:400].upper()
    assert len(tokenizer.offsets(window.sequence)) == len(expected)


def test_training_rejects_bad_sentences_and_sizes(tmp_path):
    with pytest.raises(InputFormatError, match="training sentence 1"):
        Tokenizer.train(["ACGT", "acgu"], tmp_path / "x.model", vocab_size=20)
    with pytest.raises(ParameterError, match="vocab_size"):
        Tokenizer.train(["ACGT"], tmp_path / "x.model", vocab_size=8)
    with pytest.raises(ParameterError, match="vocab_size=5000 .* 2-sentence sample"):
        Tokenizer.train(["ACGT" * 10, "GATTACA"], tmp_path / "x.model", vocab_size=5000)
    assert not (tmp_path / "x.model").exists()


def test_loading_something_else_names_the_file(tmp_path):
    (tmp_path / "junk.model").write_bytes(b"not a model")
    with pytest.raises(InputFormatError, match="junk.model: not a sentencepiece model"):
        Tokenizer.load(tmp_path / "junk.model")
    with pytest.raises(InputFormatError, match="missing.model: tokenizer model file not found"):
        Tokenizer.load(tmp_path / "missing.model")
    text_model = spm.SentencePieceTrainer.train  # a sentencepiece model without dnabird's special ids
    text_model(sentence_iterator=iter(["hello world"] * 50), model_prefix=str(tmp_path / "text"), vocab_size=12,
               minloglevel=2)
    with pytest.raises(InputFormatError, match="text.model: not a dnabird DNA tokenizer"):
        Tokenizer.load(tmp_path / "text.model")


def test_training_is_reproducible_from_the_seed(tmp_path):
    sentences = structured_sentences(200, seed=7)
    first = Tokenizer.train(sentences, tmp_path / "a.model", vocab_size=100, sample_size=50, seed=1)
    second = Tokenizer.train(sentences, tmp_path / "b.model", vocab_size=100, sample_size=50, seed=1)
    assert (tmp_path / "a.model").read_bytes() == (tmp_path / "b.model").read_bytes()
    assert first.hash == second.hash == hashlib.sha256((tmp_path / "a.model").read_bytes()).hexdigest()
    assert Tokenizer.load(tmp_path / "a.model").hash == first.hash


def test_batch_is_padded_to_a_block_multiple(trained):
    tokenizer, _ = trained
    sequences = ["ACGTACGTAC" * 30, "GATTACA"]
    ids, mask = tokenizer.encode_batch(sequences, block_size=16)
    lengths = [len(tokenizer.encode(s)) + 2 for s in sequences]
    assert ids.shape == (2, -(-max(lengths) // 16) * 16)
    for row, length in enumerate(lengths):
        assert ids[row, 0] == 2 and ids[row, length - 1] == 3
        assert mask[row].sum() == length and mask[row, :length].all()
        assert (ids[row, length:] == 0).all()
        assert tokenizer.decode(ids[row]) == sequences[row]
    fixed, _ = tokenizer.encode_batch(sequences, block_size=16, length=ids.shape[1] + 16)
    assert fixed.shape[1] == ids.shape[1] + 16
    with pytest.raises(ParameterError, match="length"):
        tokenizer.encode_batch(sequences, block_size=16, length=17)


def test_batch_truncates_only_when_asked_and_keeps_the_final_sep(trained):
    tokenizer, _ = trained
    sequences = ["ACGTACGTAC" * 30, "GATTACA"]
    ids, mask = tokenizer.encode_batch(sequences, block_size=16, length=16, truncate=True)
    first = tokenizer.encode(sequences[0])
    assert ids[0].tolist() == [2, *first[:14], 3] and mask[0].all()
    assert ids[1, : len(tokenizer.encode("GATTACA")) + 2].tolist() == [2, *tokenizer.encode("GATTACA"), 3]
    with pytest.raises(ParameterError, match="or truncate"):
        tokenizer.encode_batch(sequences, block_size=16, length=16)


def test_an_unsaved_tokenizer_has_no_files(trained):
    tokenizer, path = trained
    with pytest.raises(ParameterError, match="unsaved Tokenizer"):
        tuple(Tokenizer(path.read_bytes()).files)


def test_bp_per_token_is_total_bases_over_total_tokens(trained):
    tokenizer, path = trained
    sp = spm.SentencePieceProcessor(model_file=str(path))
    sentences = structured_sentences(20, seed=9)
    expected = sum(map(len, sentences)) / sum(len(sp.encode(s)) for s in sentences)
    assert tokenizer.bp_per_token(sentences) == pytest.approx(expected)
    assert tokenizer.bp_per_token(sentences) > 2


def test_reservoir_sample_is_uniform_and_seeded():
    items = [str(i) for i in range(50)]
    assert reservoir_sample(items, 10, seed=3) == reservoir_sample(items, 10, seed=3)
    assert reservoir_sample(items, 100, seed=0) == items
    counts = np.zeros(50)
    for seed in range(2000):
        sample = reservoir_sample(iter(items), 10, seed=seed)
        assert len(set(sample)) == 10
        counts[[int(x) for x in sample]] += 1
    # each item is kept with probability 10/50; 2000 draws give sd = sqrt(2000*0.2*0.8) ~ 18
    assert np.abs(counts - 400).max() < 80


def test_train_on_corpus_reports_heldout_bp_per_token(tmp_path):
    rng = np.random.default_rng(11)
    motifs = [random_dna(rng, int(n)) for n in rng.integers(4, 10, size=15)]
    with (tmp_path / "g.fa").open("w") as fasta:
        for chrom in ("chr1", "chr2", "chr8"):
            sequence = "".join(motifs[i] for i in rng.integers(15, size=4000))[:20_000]
            fasta.write(f">{chrom}\n" + "\n".join(sequence[i:i + 60] for i in range(0, len(sequence), 60)) + "\n")
    build_corpus(tmp_path / "g.fa", tmp_path / "corpus", CorpusConfig(passes=1, held_out=("chr8",)), progress=False)
    config = TokenizerConfig(vocab_size=200, heldout_sentences=10_000)
    tokenizer, report = train_on_corpus(tmp_path / "corpus", tmp_path / "dna.model", config)
    heldout = [line.split("\t")[4].strip() for part in (tmp_path / "corpus" / "heldout").glob("*.tsv.gz")
               for line in gzip.open(part, "rt")]
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "dna.model"))
    assert report["heldout_sentences"] == len(heldout) > 10
    expected = sum(map(len, heldout)) / sum(len(sp.encode(s)) for s in heldout)
    assert report["heldout_bp_per_token"] == pytest.approx(expected, abs=1e-4)
    assert report["tokenizer_hash"] == tokenizer.hash and report["vocab_size"] == 200
