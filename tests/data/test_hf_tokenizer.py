"""`HFTokenizer` on GENA-LM's published tokenizer and on copies without an `N` piece: ids against transformers',
special ids from the files, decode, offsets and [UNK]s."""

import json
import pickle
import shutil

import pytest

from dnabird.data.hf_tokenizer import HFTokenizer
from dnabird.data.tokenizer import load_tokenizer
from dnabird.errors import InputFormatError
from tests.data.gena_without_n import without_n_piece
from tests.gena_reference import GENA_TOKENIZER, lambda_dna, moved_specials

transformers = pytest.importorskip("transformers")

DNA = lambda_dna()
KINDS = ("GENA t2t", "no N piece", "no N piece, no normalizer")


def cases() -> dict[str, str]:
    """Real DNA and the cases GENA-LM's normalizer and vocabulary treat specially."""
    window = DNA[1000:1600]
    return {
        "lambda 6 kb": DNA,
        "soft-masked": window[:200] + window[200:400].lower() + window[400:],
        "single N": window[:300] + "N" + window[301:],
        "N every 37 bp": "".join(window[i:i + 36] + "N" for i in range(0, 600, 37)),
        "runs of 2 to 12 N": "".join(window[i * 40:i * 40 + 30] + "N" * n for i, n in enumerate(range(2, 13))),
        "9 N": window[:300] + "N" * 9 + window[309:],
        "10 N": window[:300] + "N" * 10 + window[310:],
        "40 N": window[:300] + "N" * 40 + window[340:],
        "only N": "N" * 7,
        "leading and trailing N runs": "N" * 25 + window + "N" * 12,
        "IUPAC": window[:100] + "RYKMSWBDHV" + window[110:200] + "nnnnnnnnnnnn" + window[200:],
        "mixed": window[:50] + "NRN" + window[50:90].lower() + "nNyN" + "N" * 11 + "KAM" + window[90:150],
        "other characters": window[:50] + "X" + window[50:60] + "0123" + window[60:70] + ".-*" + window[70:100],
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The directory of each tokenizer kind's files."""
    folder = tmp_path_factory.mktemp("tokenizers")
    return {KINDS[0]: GENA_TOKENIZER, KINDS[1]: without_n_piece(folder / "no_n"),
            KINDS[2]: without_n_piece(folder / "no_n_no_normalizer", normalizer=False)}


@pytest.fixture(scope="module")
def tokenizers(files):
    return {kind: HFTokenizer.load(directory) for kind, directory in files.items()}


@pytest.fixture(scope="module")
def references(files):
    """transformers' tokenizer of each file, which names no special token and does not upper-case."""
    return {kind: transformers.PreTrainedTokenizerFast(tokenizer_file=str(directory / "tokenizer.json"))
            for kind, directory in files.items()}


@pytest.fixture(scope="module")
def gena(tokenizers):
    return tokenizers[KINDS[0]]


@pytest.fixture(scope="module")
def reference(references):
    return references[KINDS[0]]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(cases()))
def test_ids_equal_transformers_on_the_upper_cased_sequence(tokenizers, references, kind, name):
    ours, theirs, sequence = tokenizers[kind], references[kind], cases()[name]
    expected = theirs(sequence.upper(), add_special_tokens=False)["input_ids"]
    assert ours.encode(sequence) == expected
    with_specials = theirs(sequence.upper())["input_ids"]  # the file's post-processor adds [CLS] … [SEP]
    ids, mask = ours.encode_batch([sequence], block_size=64)
    assert ids[0, mask[0]].tolist() == with_specials
    assert (ids[0, ~mask[0]] == ours.pad_id).all()


@pytest.mark.parametrize("kind", KINDS)
def test_unk_tokens_counts_the_unk_ids_transformers_gives(tokenizers, references, kind):
    ours, theirs = tokenizers[kind], references[kind]
    counts = {name: theirs(sequence.upper())["input_ids"].count(ours.unk_id) for name, sequence in cases().items()}
    assert {name: ours.unk_tokens(sequence) for name, sequence in cases().items()} == counts
    assert counts["other characters"] == 7 and counts["lambda 6 kb"] == 0  # X, 0, 1, 2, 3, ., *


def test_an_n_without_a_piece_is_one_unk_between_the_tokens_of_its_flanks(tokenizers, references):
    """With no piece holding N, no merge crosses it: the flanks tokenize as they do alone."""
    left, right = DNA[:80], DNA[80:170]
    for kind in KINDS[1:]:
        no_n, theirs = tokenizers[kind], references[kind]
        assert no_n.unk_id == theirs.convert_tokens_to_ids("[UNK]") == 0 and "N" not in no_n.alphabet
        assert no_n.encode(left + "N" + right) == no_n.encode(left) + [no_n.unk_id] + no_n.encode(right)
        assert no_n.encode(left + "NNN" + right) == no_n.encode(left) + [no_n.unk_id] * 3 + no_n.encode(right)
        assert no_n.unk_tokens(left + "n" + right + "NN") == 3
    assert tokenizers[KINDS[1]].encode("N" * 10) == [5]  # the normalizer's `-` still stands for a run of >= 10
    assert tokenizers[KINDS[2]].encode("N" * 10) == [0] * 10
    assert tokenizers[KINDS[0]].unk_tokens(left + "NNN" + right) == 0


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


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(cases()))
def test_offsets_tile_the_sequence_and_each_span_spells_its_token(tokenizers, references, kind, name):
    ours, vocabulary, sequence = tokenizers[kind], references[kind].get_vocab(), cases()[name].upper()
    ids, spans = ours.encode(sequence), ours.offsets(sequence)
    assert len(spans) == len(ids)
    assert spans[0][0] == 0 and spans[-1][1] == len(sequence)
    assert all(end == start for (_, end), (start, _) in zip(spans, spans[1:], strict=False))
    for token, (start, end) in zip(ids, spans, strict=True):
        if token == ours.unk_id:  # one character the vocabulary has no piece for
            assert end - start == 1 and sequence[start] not in vocabulary
        elif token in ours.special_ids:  # GENA-LM's "-": a whole run of >= 10 N, or a "-" in the input
            assert (end - start >= 10 and set(sequence[start:end]) == {"N"}) or sequence[start:end] == "-"
        else:
            assert sequence[start:end] == ours.id_to_piece(token)


def test_characters_without_a_piece_are_unk_not_an_error(gena, reference):
    """dnabird's sentencepiece tokenizer, which has no [UNK] fallback, still refuses them (test_tokenizer.py)."""
    assert gena.encode("ACGXT", record="chr1:5-9")[-2:] == [gena.unk_id, reference.convert_tokens_to_ids("T")]
    assert [ids.count(gena.unk_id) for ids in gena.encode(["ACGT", "AC1GT", "A.C*G"])] == [0, 1, 2]
    assert gena.offsets("ACGXT")[-2:] == [(3, 4), (4, 5)]


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
