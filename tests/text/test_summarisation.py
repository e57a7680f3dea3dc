"""Summarisation: ROUGE (hand-computed values), lead-k, the generated task (read back by its solver), data
errors, truncation, and the command on a small checkpoint."""

import json
import logging

import pytest

from dnabird.cli import main
from dnabird.data.text_tokenizer import TextTokenizer
from dnabird.datasets.synthetic_summaries import HIDDEN_FROM, solve_summary, write_summaries
from dnabird.errors import InputFormatError
from dnabird.model import save_checkpoint
from dnabird.model.config import tiny
from dnabird.model.seq2seq import EncoderDecoder, Seq2SeqConfig
from dnabird.text.rouge import lead, rouge_report
from dnabird.text.summarisation import encode_documents, read_documents
from dnabird.text.summarise_task import read_pairs


def test_rouge_hand_computed():
    """'a b c' against 'a b d': unigrams 2 of 3 each way, bigrams 1 of 2, longest common subsequence 2."""
    report = rouge_report(["cats sat here", "x"], ["cats sat there", "x"], resamples=50)
    assert report["rouge1"] == pytest.approx((2 / 3 + 1) / 2)
    assert report["rouge2"] == pytest.approx((1 / 2 + 0) / 2)  # a one-word pair has no bigram
    assert report["rougeL"] == pytest.approx((2 / 3 + 1) / 2)
    low, high = report["ci95"]["rouge1"]
    assert 2 / 3 <= low <= report["rouge1"] <= high <= 1


def test_lead_keeps_the_first_sentences():
    assert lead("One two. Three four! Five? Six.", 2) == "One two. Three four!"


def test_generated_task_hides_every_finding_past_token_512(tmp_path):
    paths = write_summaries(tmp_path, sizes={"train": 30}, seed=3)
    rows = [json.loads(line) for line in paths["train"].read_text().splitlines()]
    for row in rows:
        words = row["document"].split()
        assert 1500 <= len(words) <= 2998
        assert solve_summary(row["document"]) == row["summary"]
        entities = row["summary"].split()[:-1]
        assert len(entities) == 4
        for entity in entities:  # stated as a finding past word HIDDEN_FROM (token 512 + [CLS]) only
            finding = next(i for i in range(len(words) - 3) if words[i] == "finding" and words[i + 3] == entity)
            assert finding >= HIDDEN_FROM
        assert not set(entities) & set(" ".join(lead(row["document"], 3).split()).split())
    assert write_summaries(tmp_path / "again", sizes={"train": 30}, seed=3)["train"].read_bytes() == \
        paths["train"].read_bytes()


def test_bad_records_are_named(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"document": "a b .", "summary": "a"}\n{"document": "  ", "summary": "b"}\n')
    with pytest.raises(InputFormatError, match="line 2.*empty"):
        read_pairs(path, "document", "summary")
    path.write_text('{"document": "a b .", "summary": "a"}\nnot json\n')
    with pytest.raises(InputFormatError, match="line 2"):
        read_pairs(path, "document", "summary")
    path.write_text('{"document": "a b .", "summary": "a"}\n{"document": "c d ."}\n')
    with pytest.raises(InputFormatError, match="line 2.*'summary'"):
        read_pairs(path, "document", "summary")
    path.write_text('{"document": "a b ."}\n{"text": "c d ."}\n')
    with pytest.raises(InputFormatError, match="line 2.*string 'document' field"):
        read_documents(path, "document")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A small untrained encoder-decoder with a word tokenizer, saved as a checkpoint."""
    directory = tmp_path_factory.mktemp("summariser")
    words = [f"w{i}" for i in range(40)]
    tokenizer = TextTokenizer.train([" ".join(words[i:] + words[:i]) for i in range(40)], directory / "t.model",
                                    vocab_size=60, model_type="word", byte_fallback=False)
    encoder = tiny(vocab_size=tokenizer.vocab_size, hidden_size=32, num_heads=2, intermediate_size=64,
                   max_positions=256, pooling="mean", attention={"type": "bigbird_itc", "block_size": 16})
    model = EncoderDecoder(Seq2SeqConfig(encoder=encoder, decoder_layers=1, decoder_heads=2, max_decoder_positions=16,
                                         decoder_start_token_id=tokenizer.pad_id, eos_token_id=tokenizer.sep_id))
    save_checkpoint(model, directory / "model", tokenizer_files=(directory / "t.model",))
    return directory / "model", tokenizer


def test_long_documents_are_cut_with_a_count_or_refused(checkpoint, caplog):
    _, tokenizer = checkpoint
    documents = [" ".join(["w1"] * 300), "w2 w3"]
    with caplog.at_level(logging.WARNING):
        encoded = encode_documents(tokenizer, documents, max_length=256)
    assert encoded.cut == [300 + 2 - 256, 0] and [len(ids) for ids in encoded.ids] == [256, 4]
    assert "1 of 2 documents" in caplog.text and "cut 46 tokens" in caplog.text
    with pytest.raises(InputFormatError, match="document 0.*302 tokens"):
        encode_documents(tokenizer, documents, max_length=256, on_long="error")
    with pytest.raises(InputFormatError, match="document 1.*empty"):
        encode_documents(tokenizer, ["w1", " "], max_length=256)


def test_command_writes_summaries_beside_inputs(checkpoint, tmp_path):
    model_dir, _ = checkpoint
    (tmp_path / "doc.txt").write_text("w1 w2 w3 w4 " * 10)
    (tmp_path / "docs.jsonl").write_text('{"id": 7, "document": "w5 w6"}\n{"id": 8, "document": "w7"}\n')
    assert main(["-q", "text", "summarise", "--model", str(model_dir), "--max-summary-tokens", "5",
                 str(tmp_path / "doc.txt"), str(tmp_path / "docs.jsonl")]) == 0
    assert (tmp_path / "doc.summary.txt").is_file()
    records = [json.loads(line) for line in (tmp_path / "docs.summaries.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == [7, 8] and all(isinstance(r["summary"], str) for r in records)
    (tmp_path / "bad.jsonl").write_text('{"text": "w1"}\n')
    assert main(["-q", "text", "summarise", "--model", str(model_dir), str(tmp_path / "bad.jsonl")]) == 1


def test_an_encoder_only_checkpoint_is_refused(tmp_path, capsys):
    from dnabird.model import PretrainingModel

    save_checkpoint(PretrainingModel(tiny(vocab_size=60, hidden_size=32, num_heads=2)), tmp_path / "encoder")
    (tmp_path / "doc.txt").write_text("w1 w2")
    assert main(["-q", "text", "summarise", "--model", str(tmp_path / "encoder"), str(tmp_path / "doc.txt")]) == 1
    assert "encoder-only" in capsys.readouterr().err
