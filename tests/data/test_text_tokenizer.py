"""Text tokenizer: fixed special ids, Unicode round trips, character offsets, imported models keeping their
own special ids — checked against sentencepiece itself and hand-made strings."""

import io
import json

import numpy as np
import pytest
import sentencepiece as spm

from dnabird.data.text import read_documents
from dnabird.data.text_tokenizer import TextTokenizer, TextTokenizerConfig, train_on_files
from dnabird.errors import InputFormatError, ParameterError

WORDS = "the quick brown fox jumps over lazy dog naïve café über straße 東京 ümlaut".split()
ROUND_TRIP = [
    "The naïve café — über straße!",
    "  two leading spaces, a\ttab,\na newline and trailing spaces   ",
    "emoji 🎉🧬 and CJK 東京都, Greek αβγ, Hindi हिन्दी, combining e\u0301",
    "\u00a0non-breaking\u2003em space\u200bzero width",
    "x",
]


def corpus_lines(count=300, seed=0):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(5, 30)))) for _ in range(count)]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    path = tmp_path_factory.mktemp("text_tok") / "text.model"
    return TextTokenizer.train(corpus_lines(), path, vocab_size=300, sample_size=250, seed=0, num_threads=1), path


def test_trained_model_has_dnabird_special_ids(trained):
    tokenizer, path = trained
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert [sp.piece_to_id(p) for p in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [0, 1, 2, 3, 4]
    ids = (tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id, tokenizer.mask_id)
    assert ids == (0, 1, 2, 3, 4)
    assert tokenizer.vocab_size == sp.get_piece_size() == 300
    assert TextTokenizer.load(path).hash == tokenizer.hash


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_unicode_round_trip_and_agreement_with_sentencepiece(trained, text):
    tokenizer, path = trained
    sp = spm.SentencePieceProcessor(model_file=str(path))
    ids = tokenizer.encode(text)
    assert ids == sp.encode(text)
    assert tokenizer.unk_id not in ids
    assert tokenizer.decode(ids) == text
    assert tokenizer.decode([tokenizer.cls_id, *ids, tokenizer.sep_id, tokenizer.pad_id]) == text


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_offsets_cover_the_text_in_order(trained, text):
    tokenizer, _ = trained
    ids, spans = tokenizer.encode(text), tokenizer.offsets(text)
    assert len(spans) == len(ids)
    covered = []
    for token, (start, end) in zip(ids, spans, strict=True):
        piece = tokenizer.id_to_piece(token)
        if not piece.startswith("<0x"):
            # the characters a (non-byte) piece stands for, a leading ▁ being the space before a word
            expected = piece.replace("\u2581", " ")
            assert text[start:end] == expected or (expected == " " and start == end == 0)
        if not covered or covered[-1] != (start, end):
            covered.append((start, end))
    assert "".join(text[s:e] for s, e in covered) == text


def test_char_lengths_count_each_character_once(trained):
    tokenizer, _ = trained
    lengths = tokenizer.char_lengths()
    for text in ROUND_TRIP:
        # + 1: sentencepiece's dummy prefix ▁ spells a space before the first word
        assert lengths[tokenizer.encode(text)].sum() == len(text) + 1
    assert lengths[[tokenizer.pad_id, tokenizer.cls_id, tokenizer.mask_id]].sum() == 0


def test_encode_batch_pads_truncates_and_keeps_the_final_sep(trained):
    tokenizer, _ = trained
    texts = ["the fox", "the quick brown fox jumps over the lazy dog " * 5]
    ids, mask = tokenizer.encode_batch(texts, block_size=16, length=32, truncate=True)
    first = tokenizer.encode(texts[0])
    assert ids.shape == mask.shape == (2, 32)
    assert ids[0, : len(first) + 2].tolist() == [tokenizer.cls_id, *first, tokenizer.sep_id]
    assert mask[0].sum() == len(first) + 2 and (ids[0][~mask[0]] == tokenizer.pad_id).all()
    assert ids[1, 0] == tokenizer.cls_id and ids[1, 31] == tokenizer.sep_id and mask[1].all()
    assert ids[1, 1:31].tolist() == tokenizer.encode(texts[1])[:30]
    with pytest.raises(ParameterError, match="or truncate"):
        tokenizer.encode_batch(texts, block_size=16, length=32)
    with pytest.raises(ParameterError, match="multiple of block_size"):
        tokenizer.encode_batch(texts, block_size=16, length=40)
    auto, _ = tokenizer.encode_batch(texts[:1], block_size=16)
    assert auto.shape == (1, 16)


def bigbird_like_model(with_mask=True) -> bytes:
    """A model laid out like BigBird's spiece.model: <pad>=0 <s>=1 </s>=2 <unk>=3, [CLS] [SEP] [MASK] further on."""
    fillers = [f"<extra_{i}>" for i in range(57)]
    specials = ["[CLS]", "[SEP]", *(["[MASK]"] if with_mask else [])]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus_lines(200, seed=1)), model_writer=model, model_type="unigram",
        vocab_size=100, pad_id=0, bos_id=1, eos_id=2, unk_id=3, pad_piece="<pad>", bos_piece="<s>",
        eos_piece="</s>", unk_piece="<unk>", user_defined_symbols=[*fillers, *specials],
        normalization_rule_name="nmt_nfkc", minloglevel=2, num_threads=1)
    return model.getvalue()


def test_imported_model_keeps_its_own_special_ids(tmp_path):
    path = tmp_path / "spiece.model"
    path.write_bytes(bigbird_like_model())
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tokenizer = TextTokenizer.load(path)
    expected = {"pad": sp.piece_to_id("<pad>"), "unk": sp.piece_to_id("<unk>"), "cls": sp.piece_to_id("[CLS]"),
                "sep": sp.piece_to_id("[SEP]"), "mask": sp.piece_to_id("[MASK]")}
    assert expected == {"pad": 0, "unk": 3, "cls": 61, "sep": 62, "mask": 63}
    assert {name: getattr(tokenizer, f"{name}_id") for name in expected} == expected
    ids, mask = tokenizer.encode_batch(["the fox"], block_size=8)
    assert ids[0, 0] == 61 and ids[0, mask[0].sum() - 1] == 62 and (ids[0][~mask[0]] == 0).all()
    assert tokenizer.decode(ids[0]) == "the fox"
    spans = tokenizer.offsets("the ｆｏｘ")  # full-width letters: NFKC changes them, offsets stay in the input
    assert spans[-1][1] == len("the ｆｏｘ")
    # an explicit choice wins over the name search
    assert TextTokenizer.load(path, special_pieces={"cls": "<s>", "sep": "</s>"}).cls_id == 1


def test_missing_special_piece_is_named(tmp_path):
    path = tmp_path / "spiece.model"
    path.write_bytes(bigbird_like_model(with_mask=False))
    with pytest.raises(InputFormatError, match=r"mask \(tried \[MASK\], <mask>\)"):
        TextTokenizer.load(path)
    assert TextTokenizer.load(path, special_pieces={"mask": "<extra_0>"}).mask_id == 4
    with pytest.raises(ParameterError, match="special_pieces"):
        TextTokenizer.load(path, special_pieces={"bos": "<s>"})
    with pytest.raises(InputFormatError, match="not a sentencepiece model"):
        TextTokenizer(b"garbage")


def test_train_on_plain_text_and_jsonl_files(tmp_path):
    lines = corpus_lines(120, seed=2)
    (tmp_path / "a.txt").write_text("\n".join(lines[:40]) + "\n\n" + "\n".join(lines[40:60]) + "\n")
    (tmp_path / "b.jsonl").write_text("".join(json.dumps({"text": line, "id": i}) + "\n"
                                              for i, line in enumerate(lines[60:])))
    documents = list(read_documents(tmp_path))
    assert documents[0] == "\n".join(lines[:40]) and documents[1] == "\n".join(lines[40:60])
    assert documents[2:] == lines[60:]
    tokenizer = train_on_files(tmp_path, tmp_path / "t.model",
                               TextTokenizerConfig(vocab_size=320, model_type="bpe", sample_lines=500))
    assert tokenizer.decode(tokenizer.encode(lines[0])) == lines[0]
    (tmp_path / "c.jsonl").write_text('{"text": "ok"}\n{"txt": "typo"}\n')
    with pytest.raises(InputFormatError, match=r"c.jsonl, line 2: expected a string field 'text'"):
        list(read_documents(tmp_path / "c.jsonl"))
    (tmp_path / "d.txt").write_bytes(b"fine\n\xff\xfe bad\n")
    with pytest.raises(InputFormatError, match=r"d.txt, line 2: not UTF-8"):
        list(read_documents(tmp_path / "d.txt"))


def test_word_model_gives_one_token_per_word(tmp_path):
    tokenizer = TextTokenizer.train(corpus_lines(), tmp_path / "w.model", vocab_size=19, model_type="word",
                                    byte_fallback=False, num_threads=1)
    text = "the quick brown fox über 東京"
    assert len(tokenizer.encode(text)) == len(text.split())
    assert tokenizer.decode(tokenizer.encode(text)) == text
