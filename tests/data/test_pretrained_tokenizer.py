"""A checkpoint's own tokenizer (LED byte-level BPE, Pegasus sentencepiece) against transformers' tokenizers."""

import pytest
import sentencepiece as spm

from dnabird.data.pretrained_tokenizer import PretrainedTokenizer
from dnabird.errors import InputFormatError

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

TEXTS = ["The quick brown fox, jumping over 12 lazy dogs!", "  Ünïcode   and spaces\nnew line", "summaries"]


def byte_level_files(directory):
    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator([t * 3 for t in TEXTS] * 20, vocab_size=300,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(str(directory))


@pytest.mark.parametrize("layout", ["vocab_and_merges", "tokenizer_json"])
def test_led_byte_level_bpe_equals_transformers(tmp_path, layout):
    byte_level_files(tmp_path)
    reference = transformers.LEDTokenizer.from_pretrained(str(tmp_path))
    source = tmp_path
    if layout == "tokenizer_json":
        reference.save_pretrained(tmp_path / "hf")
        source = tmp_path / "hf"
    ours = PretrainedTokenizer.load(source)
    prefix, suffix = ours.template()
    for text in TEXTS:
        assert prefix + ours.encode(text) + suffix == reference(text)["input_ids"]
        assert ours.decode(prefix + ours.encode(text) + suffix) == reference.decode(
            reference(text)["input_ids"], skip_special_tokens=True)
    assert (ours.pad_id, ours.sep_id, ours.cls_id, ours.mask_id) == (
        reference.pad_token_id, reference.eos_token_id, reference.bos_token_id, reference.mask_token_id)


@pytest.mark.parametrize("layout", ["spiece_only", "tokenizer_json"])
def test_pegasus_sentencepiece_equals_transformers(tmp_path, layout):
    spm.SentencePieceTrainer.train(sentence_iterator=iter(TEXTS * 30), model_prefix=str(tmp_path / "spiece"),
                                   vocab_size=60, pad_id=0, eos_id=1, unk_id=2, bos_id=-1, pad_piece="<pad>",
                                   eos_piece="</s>", unk_piece="<unk>", minloglevel=2, hard_vocab_limit=False)
    reference = transformers.PegasusTokenizer.from_pretrained(str(tmp_path))
    source = tmp_path
    if layout == "tokenizer_json":
        reference.save_pretrained(tmp_path / "hf")
        source = tmp_path / "hf"
    ours = PretrainedTokenizer.load(source)
    processor = spm.SentencePieceProcessor(model_file=str(tmp_path / "spiece.model"))
    for text in TEXTS:
        assert ours.encode(text) + [1] == reference(text)["input_ids"]
        assert ours.encode(text) == [i + 103 for i in processor.encode(text)]  # Pegasus's id offset
    assert ours.template() == ([], [1]) and ours.cls_id is None
    assert (ours.pad_id, ours.sep_id, ours.unk_id) == (0, 1, reference.unk_token_id)


def test_a_directory_without_a_tokenizer_is_named(tmp_path):
    with pytest.raises(InputFormatError, match="no tokenizer found"):
        PretrainedTokenizer.load(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{not json")
    with pytest.raises(InputFormatError, match="tokenizer.json"):
        PretrainedTokenizer.load(tmp_path)
