"""`HFTokenizer` on GENA-LM's published tokenizer: ids against transformers', special ids from the files,
decode, offsets and errors."""

import json
import pickle
import shutil

import pytest

from dnabird.data.hf_tokenizer import HFTokenizer
from dnabird.data.tokenizer import load_tokenizer
from dnabird.errors import InputFormatError
from tests.gena_reference import GENA_TOKENIZER, lambda_dna, moved_specials

transformers = pytest.importorskip("transformers")

DNA = lambda_dna()


def cases() -> dict[str, str]:
    """Real DNA and the cases GENA-LM's normalizer and vocabulary treat specially."""
    window = DNA[1000:1600]
    return {
        "lambda 6 kb": DNA,
        "soft-masked": window[:200] + window[200:400].lower() + window[400:],
        "single N": window[:300] + "N" + window[301:],
        "9 N": window[:300] + "N" * 9 + window[309:],
        "10 N": window[:300] + "N" * 10 + window[310:],
        "40 N": window[:300] + "N" * 40 + window[340:],
        "leading and trailing N runs": "N" * 25 + window + "N" * 12,
        "IUPAC": window[:100] + "RYKMSWB" + window[107:200] + "nnnnnnnnnnnn" + window[200:],
    }


@pytest.fixture(scope="module")
def gena():
    return HFTokenizer.load(GENA_TOKENIZER)


@pytest.fixture(scope="module")
def reference():
    """transformers' tokenizer of the same file, which names no special token and does not upper-case."""
    return transformers.PreTrainedTokenizerFast(tokenizer_file=str(GENA_TOKENIZER / "tokenizer.json"))


@pytest.mark.parametrize("name", list(cases()))
def test_ids_equal_transformers_on_the_upper_cased_sequence(gena, reference, name):
    sequence = cases()[name]
    expected = reference(sequence.upper(), add_special_tokens=False)["input_ids"]
    assert gena.encode(sequence) == expected
    with_specials = reference(sequence.upper())["input_ids"]  # the file's post-processor adds [CLS] … [SEP]
    ids, mask = gena.encode_batch([sequence], block_size=64)
    assert ids[0, mask[0]].tolist() == with_specials
    assert (ids[0, ~mask[0]] == gena.pad_id).all()


def test_batch_encoding_equals_one_by_one(gena):
    sequences = list(cases().values())
    assert gena.encode(sequences) == [gena.encode(s) for s in sequences]


def test_special_ids_are_those_the_files_state_not_dnabirds(gena, reference):
    auto = transformers.AutoTokenizer.from_pretrained(GENA_TOKENIZER)  # reads special_tokens_map.json
    for name in ("pad", "unk", "cls", "sep", "mask"):
        assert getattr(gena, f"{name}_id") == getattr(auto, f"{name}_token_id")
    assert (gena.unk_id, gena.cls_id, gena.sep_id, gena.pad_id, gena.mask_id) == (0, 1, 2, 3, 4)
    assert reference.pad_token_id is None and reference.mask_token_id is None  # tokenizer.json alone names none
    assert gena.special_ids == {0, 1, 2, 3, 4, gena.encode("N" * 10)[0]}
    assert gena.vocab_size == 32000 and set(gena.alphabet) == set("ACGTNBKMRSWY")


def test_transformers_turns_soft_masked_bases_into_unk_where_dnabird_upper_cases(gena, reference):
    soft = DNA[:300].lower()
    raw = reference(soft, add_special_tokens=False)["input_ids"]
    assert set(raw) == {gena.unk_id} and len(raw) == 300
    assert gena.encode(soft) == gena.encode(DNA[:300]) and gena.unk_id not in gena.encode(soft)


def test_decode_round_trips_on_acgt_windows(gena):
    for start in range(0, 5000, 500):
        window = DNA[start:start + 1000]
        assert gena.decode(gena.encode(window)) == window
        ids, _ = gena.encode_batch([window], block_size=64)
        assert gena.decode(ids[0]) == window  # [CLS], [SEP] and [PAD] decode to nothing


def test_a_run_of_ten_or_more_n_is_one_token_whose_length_the_ids_lose(gena):
    short, long = (DNA[:50] + "N" * n + DNA[50:100] for n in (10, 40))
    assert gena.encode(short) == gena.encode(long)
    assert gena.decode(gena.encode(long)) == DNA[:100]  # the run decodes to nothing
    assert "N" * 9 in gena.decode(gena.encode(DNA[:50] + "N" * 9 + DNA[50:100]))


@pytest.mark.parametrize("name", list(cases()))
def test_offsets_tile_the_sequence_and_each_span_spells_its_token(gena, name):
    sequence = cases()[name].upper()
    ids, spans = gena.encode(sequence), gena.offsets(sequence)
    assert len(spans) == len(ids)
    assert spans[0][0] == 0 and spans[-1][1] == len(sequence)
    assert all(end == start for (_, end), (start, _) in zip(spans, spans[1:], strict=False))
    for token, (start, end) in zip(ids, spans, strict=True):
        if token in gena.special_ids:  # GENA-LM's "-": a whole run of >= 10 N
            assert end - start >= 10 and set(sequence[start:end]) == {"N"}
        else:
            assert sequence[start:end] == gena.id_to_piece(token)


def test_letters_outside_the_vocabulary_are_an_error_naming_the_record(gena):
    with pytest.raises(InputFormatError, match=r"record 'chr1:5-9'.*character 'X' at offset 3"):
        gena.encode("ACGXT", record="chr1:5-9")
    with pytest.raises(InputFormatError, match="character '-'"):
        gena.encode(["ACGT", "AC-GT"])


def test_a_tokenizer_json_without_its_special_token_names_is_refused(tmp_path):
    shutil.copy(GENA_TOKENIZER / "tokenizer.json", tmp_path / "tokenizer.json")
    shutil.copy(GENA_TOKENIZER / "tokenizer_config.json", tmp_path / "tokenizer_config.json")  # names none
    with pytest.raises(InputFormatError, match=r"pad_token, unk_token, cls_token, sep_token, mask_token not stated"):
        HFTokenizer.load(tmp_path)
    (tmp_path / "special_tokens_map.json").write_text(json.dumps({"pad_token": "[PAD]", "unk_token": "[UNK]",
                                                                   "cls_token": "[CLS]", "sep_token": "[SEP]",
                                                                   "mask_token": "<mask>"}))
    with pytest.raises(InputFormatError, match=r"mask_token '<mask>' is not in the vocabulary"):
        HFTokenizer.load(tmp_path)


def test_moved_special_tokens_are_read_from_the_file_and_dna_ids_stay(gena, tmp_path):
    moved = HFTokenizer.load(moved_specials(tmp_path / "moved"))
    auto = transformers.AutoTokenizer.from_pretrained(tmp_path / "moved")
    assert (moved.pad_id, moved.mask_id) == (auto.pad_token_id, auto.mask_token_id) == (13, 31999)
    assert moved.encode(DNA) == gena.encode(DNA) and moved.hash != gena.hash
    assert auto(DNA[:500])["input_ids"] == moved.encode_batch([DNA[:500]], block_size=1)[0][0].tolist()


def test_load_tokenizer_finds_either_kind_and_pickles(gena, tmp_path):
    assert isinstance(load_tokenizer(GENA_TOKENIZER), HFTokenizer)
    assert load_tokenizer(GENA_TOKENIZER / "tokenizer.json").hash == gena.hash
    again = pickle.loads(pickle.dumps(gena))
    assert again.encode(DNA[:700]) == gena.encode(DNA[:700]) and again.mask_id == gena.mask_id
    with pytest.raises(InputFormatError, match="expected one tokenizer"):
        load_tokenizer(tmp_path)


def test_hash_is_the_one_stored_in_existing_checkpoints_and_shards(gena):
    """Pinned: checkpoints and shards store this hash and compare it on load; a new digest would orphan them."""
    assert gena.hash == "f1bdb8557b9256fe96372caa72d9e321f75c70a00ceb5475fd72e68b19d30aa7"
    assert pickle.loads(pickle.dumps(gena)).hash == gena.hash
