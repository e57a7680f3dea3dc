import gzip
import json

import numpy as np
import pytest
from Bio import SeqIO

from dnabird.data import corpus as corpus_module
from dnabird.data.corpus import (
    CorpusConfig,
    Document,
    Sentence,
    build_corpus,
    corpus_parts,
    iter_documents,
    iter_part_documents,
)
from dnabird.errors import ConfigError, InputFormatError, ParameterError

LENGTHS = {"chr1": 180_000, "chr2": 120_000, "chr8": 70_000, "chrUn_gl000220": 9_000, "chrM": 16_571,
           "chr6_apd_hap1": 20_000}


def write_fasta(path, lengths, n_runs=(), rename=None):
    """Random soft-masked sequence per contig; `n_runs` = (contig, start, end) blocks of N."""
    rng = np.random.default_rng(123)
    sequences = {}
    for name, length in lengths.items():
        bases = bytearray(rng.choice(np.frombuffer(b"ACGTacgt", dtype=np.uint8), size=length).tobytes())
        for contig, start, end in n_runs:
            if contig == name:
                bases[start:end] = b"N" * (end - start)
        sequences[(rename or {}).get(name, name)] = bases.decode()
    with open(path, "w") as handle:
        for name, sequence in sequences.items():
            lines = (sequence[i:i + 70] for i in range(0, len(sequence), 70))
            handle.write(f">{name}\n" + "\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    fasta = write_fasta(root / "genome.fa", LENGTHS)
    report = build_corpus(fasta, root / "out", CorpusConfig(passes=2, seed=5), progress=False)
    return fasta, root / "out", report


def sentences_by_part(out_dir, split):
    """{(pass, chrom): [(doc_id, start, end, sequence)]} read straight from the gzip text."""
    parts = {}
    for part in sorted((out_dir / split).glob("part-*.tsv.gz")):
        rows = [line.rstrip("\n").split("\t") for line in gzip.open(part, "rt")]
        pass_index, chrom = part.name[len("part-"):-len(".tsv.gz")].split("-", 1)
        parts[(int(pass_index), chrom)] = [(doc, int(start), int(end), seq)
                                           for doc, _, start, end, seq in rows]
    return parts


def test_default_contigs_and_split_by_chromosome(built):
    _, out, report = built
    assert report["splits"]["train"]["contigs"] == ["chr1", "chr2"]
    assert report["splits"]["heldout"]["contigs"] == ["chr8"]
    assert sorted(p.name for p in corpus_parts(out, "train")) == [
        "part-00-chr1.tsv.gz", "part-00-chr2.tsv.gz", "part-01-chr1.tsv.gz", "part-01-chr2.tsv.gz"]
    assert {doc.chrom for doc in iter_documents(out, "heldout")} == {"chr8"}
    assert {doc.chrom for doc in iter_documents(out, "train")} == {"chr1", "chr2"}


def test_sentences_match_the_genome_uppercased(built):
    fasta, out, _ = built
    genome = {record.id: str(record.seq).upper() for record in SeqIO.parse(fasta, "fasta")}
    for split in ("train", "heldout"):
        for (_, chrom), rows in sentences_by_part(out, split).items():
            for _, start, end, sequence in rows:
                assert 500 <= end - start <= 1000
                assert sequence == genome[chrom][start:end]


def test_each_pass_tiles_the_chromosome(built):
    _, out, report = built
    covered = 0
    for split in ("train", "heldout"):
        for (_, chrom), rows in sentences_by_part(out, split).items():
            starts = [start for _, start, _, _ in rows]
            ends = [end for _, _, end, _ in rows]
            assert 0 <= starts[0] <= 5000
            assert starts[1:] == ends[:-1]  # contiguous: no overlap, no hole (no N here)
            assert LENGTHS[chrom] - 1000 < ends[-1] <= LENGTHS[chrom]
            covered += ends[-1] - starts[0]
    assert covered == sum(report["splits"][split]["bp"] for split in ("train", "heldout"))
    assert report["skipped"]["too_many_n"] == {"sentences": 0, "bp": 0}


def test_passes_cut_at_different_points(built):
    _, out, _ = built
    parts = sentences_by_part(out, "train")
    assert {end for _, _, end, _ in parts[(0, "chr1")]} != {end for _, _, end, _ in parts[(1, "chr1")]}


def test_documents_have_50_to_100_sentences_except_the_last(built):
    _, out, report = built
    for split in ("train", "heldout"):
        documents = list(iter_documents(out, split))
        assert len(documents) == report["splits"][split]["documents"]
        assert sum(len(doc.sentences) for doc in documents) == report["splits"][split]["sentences"]
        by_part = {}
        for doc in documents:
            by_part.setdefault(doc.id.rsplit(":", 1)[0], []).append(doc)
        for docs in by_part.values():
            assert all(50 <= len(doc.sentences) <= 100 for doc in docs[:-1])
            assert 1 <= len(docs[-1].sentences) <= 100
            assert [doc.id for doc in docs] == sorted({doc.id for doc in docs})
    ids = [doc.id for split in ("train", "heldout") for doc in iter_documents(out, split)]
    assert len(ids) == len(set(ids)) and ids[0].startswith("p00:")


def test_reproducible_and_each_part_recomputable_alone(built, tmp_path):
    fasta, out, _ = built
    again = tmp_path / "again"
    build_corpus(fasta, again, CorpusConfig(passes=2, seed=5, contigs=("chr2",), held_out=()), progress=False)
    for part in corpus_parts(again, "train"):
        assert part.read_bytes() == (out / "train" / part.name).read_bytes()
    full = sentences_by_part(out, "train")
    assert sentences_by_part(again, "train") == {key: rows for key, rows in full.items() if key[1] == "chr2"}
    other = tmp_path / "other"
    build_corpus(fasta, other, CorpusConfig(passes=1, seed=6, contigs=("chr2",)), progress=False)
    assert sentences_by_part(other, "train")[(0, "chr2")] != sentences_by_part(out, "train")[(0, "chr2")]


def test_ensembl_names_resolve_and_cut_identically(built, tmp_path):
    _, out, _ = built
    fasta = write_fasta(tmp_path / "ensembl.fa", LENGTHS, rename={"chr1": "1", "chr2": "2", "chr8": "8"})
    build_corpus(fasta, tmp_path / "out", CorpusConfig(passes=1, seed=5), progress=False)
    ensembl = sentences_by_part(tmp_path / "out", "heldout")[(0, "8")]
    ucsc = sentences_by_part(out, "heldout")[(0, "chr8")]
    assert [row[1:] for row in ensembl] == [row[1:] for row in ucsc]


N_RUNS = (("chr1", 30_000, 52_000), ("chr1", 100_000, 100_150), ("chr1", 120_000, 120_040))


def test_n_rich_sentences_are_skipped_counted_and_end_their_document(tmp_path):
    fasta = write_fasta(tmp_path / "gaps.fa", {"chr1": 180_000}, n_runs=N_RUNS)
    config = {"passes": 1, "seed": 3, "min_document_sentences": 10, "max_document_sentences": 20}
    everything = build_corpus(fasta, tmp_path / "all", CorpusConfig(max_n_fraction=1.0, **config),
                              progress=False)
    report = build_corpus(fasta, tmp_path / "kept", CorpusConfig(max_n_fraction=0.1, **config),
                          progress=False)
    all_rows = sentences_by_part(tmp_path / "all", "train")[(0, "chr1")]
    kept_rows = sentences_by_part(tmp_path / "kept", "train")[(0, "chr1")]
    # The cut points do not depend on the threshold; count by hand which sentences exceed it.
    too_many = [(s, e) for _, s, e, seq in all_rows if seq.count("N") > 0.1 * (e - s)]
    assert everything["skipped"]["too_many_n"]["sentences"] == 0
    skipped_bp = sum(e - s for s, e in too_many)
    assert report["skipped"]["too_many_n"] == {"sentences": len(too_many), "bp": skipped_bp}
    assert 22 <= len(too_many) <= 48  # the 22 kb gap, plus one for the 150 bp run; not the 40 bp run
    kept = [(s, e) for _, s, e, _ in all_rows if (s, e) not in too_many]
    assert [(s, e) for _, s, e, _ in kept_rows] == kept
    documents = list(iter_documents(tmp_path / "kept", "train"))
    for doc in documents:  # a skip ends the document: no document spans a skipped sentence
        assert all(a.end == b.start for a, b in zip(doc.sentences, doc.sentences[1:], strict=False))
    for doc, following in zip(documents, documents[1:], strict=False):
        if not 10 <= len(doc.sentences) <= 20:
            assert following.sentences[0].start > doc.sentences[-1].end  # cut short only by a skip
        elif following.sentences[0].start > doc.sentences[-1].end:
            assert any(doc.sentences[-1].end == s for s, _ in too_many)


def test_resume_after_an_interrupted_part(tmp_path, monkeypatch):
    fasta = write_fasta(tmp_path / "genome.fa", {"chr1": 60_000, "chr2": 50_000})
    config = CorpusConfig(passes=2, seed=1, held_out=())
    reference = build_corpus(fasta, tmp_path / "reference", config, progress=False)

    calls = []
    original = corpus_module._write_part

    def interrupt_on_third(*args):
        calls.append(args[1:3])
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(*args)

    monkeypatch.setattr(corpus_module, "_write_part", interrupt_on_third)
    with pytest.raises(KeyboardInterrupt):
        build_corpus(fasta, tmp_path / "out", config, progress=False)
    assert len(corpus_parts(tmp_path / "out", "train")) == 2
    calls.clear()
    def record(*args):
        calls.append(args[1:3])
        return original(*args)

    monkeypatch.setattr(corpus_module, "_write_part", record)
    (tmp_path / "out" / "train" / "part-01-chr1.tsv.gz.tmp").write_text("half-written")
    report = build_corpus(fasta, tmp_path / "out", config, progress=False)
    assert calls == [("chr1", 1), ("chr2", 1)]  # only the parts not completed before
    assert report["splits"] == reference["splits"]
    assert sentences_by_part(tmp_path / "out", "train") == sentences_by_part(tmp_path / "reference", "train")
    assert json.loads((tmp_path / "out" / "report.json").read_text())["seed"] == 1


def test_output_made_with_another_config_is_refused(tmp_path):
    fasta = write_fasta(tmp_path / "genome.fa", {"chr1": 20_000})
    build_corpus(fasta, tmp_path / "out", CorpusConfig(passes=1), progress=False)
    with pytest.raises(ConfigError, match="differs in seed"):
        build_corpus(fasta, tmp_path / "out", CorpusConfig(passes=1, seed=9), progress=False)


def test_output_cut_from_another_genome_is_refused(tmp_path):
    fasta = write_fasta(tmp_path / "genome.fa", {"chr1": 20_000})
    build_corpus(fasta, tmp_path / "out", CorpusConfig(passes=1), progress=False)
    write_fasta(fasta, {"chr1": 25_000})
    with pytest.raises(ConfigError, match="cut from a 20000 bp chr1"):
        build_corpus(fasta, tmp_path / "out", CorpusConfig(passes=1), progress=False)


def test_requested_contig_missing_names_it_and_the_fasta(tmp_path):
    fasta = write_fasta(tmp_path / "genome.fa", {"chr1": 20_000})
    with pytest.raises(InputFormatError, match=r"genome\.fa.*'chr5'"):
        build_corpus(fasta, tmp_path / "out", CorpusConfig(contigs=("chr1", "chr5")), progress=False)
    unplaced = write_fasta(tmp_path / "unplaced.fa", {"chrUn_gl000220": 20_000})
    with pytest.raises(InputFormatError, match=r"unplaced\.fa.*no chr1"):
        build_corpus(unplaced, tmp_path / "out2", progress=False)


@pytest.mark.parametrize("field, value", [
    ("passes", 0), ("max_sentence_bp", 400), ("max_document_sentences", 10), ("max_n_fraction", 1.5),
    ("seed", -1), ("contigs", "chr1"), ("contigs", ()),
])
def test_config_validation(field, value):
    with pytest.raises(ParameterError, match=field if field != "seed" else "seed"):
        CorpusConfig(**{field: value})


def test_config_round_trips_through_a_plain_mapping():
    config = CorpusConfig(passes=3, contigs=["chr1", "2"], held_out=["chr2"])
    assert config.to_dict()["contigs"] == ["chr1", "2"]
    assert CorpusConfig(**json.loads(json.dumps(config.to_dict()))) == config


def write_part(tmp_path, lines):
    path = tmp_path / "part-00-chr1.tsv.gz"
    with gzip.open(path, "wt") as handle:
        handle.write("".join(line + "\n" for line in lines))
    return path


def test_reader_groups_contiguous_lines(tmp_path):
    path = write_part(tmp_path, ["d1\tchr1\t0\t3\tACG", "d1\tchr1\t3\t5\tTN", "d2\tchr1\t5\t6\tA"])
    assert list(iter_part_documents(path)) == [
        Document("d1", "chr1", [Sentence(0, 3, "ACG"), Sentence(3, 5, "TN")]),
        Document("d2", "chr1", [Sentence(5, 6, "A")])]


@pytest.mark.parametrize("bad, message", [
    ("d2\tchr1\t5\tA", "expected 5 tab-separated fields"),
    ("d2\tchr1\tfive\t6\tA", "integers"),
    ("d2\tchr1\t5\t7\tA", "expected 2 bases"),
    ("d2\tchr1\t5\t6\ta", "A/C/G/T/N"),
    ("d1\tchr1\t5\t6\tA", "not contiguous"),
    ("d3\tchr1\t4\t5\tA", "starts before the previous one ends"),
])
def test_reader_errors_name_file_and_line(tmp_path, bad, message):
    path = write_part(tmp_path, ["d1\tchr1\t0\t3\tACG", "d3\tchr1\t3\t5\tTN", bad])
    with pytest.raises(InputFormatError, match=rf"part-00-chr1\.tsv\.gz, line 3: .*{message}"):
        list(iter_part_documents(path))


def test_corpus_parts_checks_split(tmp_path):
    with pytest.raises(ParameterError, match="split"):
        corpus_parts(tmp_path, "valid")
    with pytest.raises(InputFormatError, match="no 'train' split"):
        corpus_parts(tmp_path, "train")


UNSAFE_NAMES = ["gi|9626243|ref|NC_001416.1|", "chr13:19000000-19100000", "a/b", "a_b", "NC_001416.1",
                "NC_001416.2", "x" * 150, "x" * 151]


def test_any_contig_name_gets_its_own_safe_part_file_and_shard(tmp_path):
    from dnabird.data.shards import ShardReader, build_shards
    from dnabird.data.tokenizer import Tokenizer

    fasta = write_fasta(tmp_path / "genome.fa", {f"c{i}": 3_000 for i in range(len(UNSAFE_NAMES))},
                        rename={f"c{i}": name for i, name in enumerate(UNSAFE_NAMES)})
    config = CorpusConfig(passes=1, contigs=UNSAFE_NAMES, held_out=(), min_document_sentences=2,
                          max_document_sentences=3, max_offset_bp=0)
    build_corpus(fasta, tmp_path / "corpus", config, progress=False)
    parts = corpus_parts(tmp_path / "corpus", "train")
    assert len(parts) == len(UNSAFE_NAMES)
    for part in parts:
        assert all(c.isalnum() or c in "._-" for c in part.name) and len(part.name) < 140, part.name
    names = {document.chrom for part in parts for document in iter_part_documents(part)}
    assert names == set(UNSAFE_NAMES)  # the names themselves are kept inside the files
    assert corpus_module.part_stem(0, "NC_001416.1") == "part-00-NC_001416.1"  # safe names are unchanged
    tokenizer = Tokenizer.train(iter_sentences(tmp_path / "corpus"), tmp_path / "dna.model", vocab_size=40)
    shards = build_shards(tmp_path / "corpus", tokenizer, tmp_path / "shards", ["train"])
    assert len(list(shards["train"].glob("*.h5"))) == len(UNSAFE_NAMES)
    assert {document.chrom for document in ShardReader(shards["train"])} == set(UNSAFE_NAMES)


def iter_sentences(corpus_dir):
    return (s.sequence for d in iter_documents(corpus_dir, "train") for s in d.sentences)


def test_contigs_whose_file_names_would_collide_are_refused(tmp_path):
    fasta = write_fasta(tmp_path / "genome.fa", {"chrA": 2_000, "chra": 2_000})
    with pytest.raises(InputFormatError, match="contigs 'chrA' and 'chra' would share the part file"):
        build_corpus(fasta, tmp_path / "out", CorpusConfig(passes=1, contigs=("chrA", "chra")), progress=False)
