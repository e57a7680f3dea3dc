"""The text tokenizer a published checkpoint brings (LED's byte-level BPE, Pegasus's sentencepiece unigram),
read with the `tokenizers` library and kept in a dnabird checkpoint as `tokenizer.json`.

`TextTokenizer`'s method names and special-id attributes, each read from the tokenizer's own pieces (None
where it has none: Pegasus has no [CLS]). `encode` adds no special tokens;
`template()` says which the checkpoint puts around a text (LED: `<s> text </s>`, Pegasus: `text </s>`).

`load` reads a `tokenizer.json`, or a directory with one, or with `vocab.json` + `merges.txt` (a byte-level
BPE in the RoBERTa/BART/LED layout), or with only a Pegasus `spiece.model` (its Hugging Face id layout:
<pad>, </s>, <mask_1>, <mask_2>, <unk_2> … <unk_102>, then the sentencepiece pieces from its third on).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import tokenizers
from tokenizers import Regex, decoders, normalizers, pre_tokenizers, processors
from tokenizers.models import Unigram

from dnabird.data.tokenizer_base import TokenizersBackedTokenizer
from dnabird.errors import InputFormatError

FILE = "tokenizer.json"
SPECIAL_PIECES = {"pad": ("<pad>", "[PAD]"), "unk": ("<unk>", "[UNK]"), "cls": ("<s>", "[CLS]"),
                  "sep": ("</s>", "[SEP]"), "mask": ("<mask>", "<mask_2>", "[MASK]")}
PEGASUS_OFFSET = 103  # Pegasus's Hugging Face ids: the sentencepiece id + 103 (tokenizer_config.json may say other)


class PretrainedTokenizer(TokenizersBackedTokenizer):
    """A `tokenizers.Tokenizer` behind `TextTokenizer`'s method names."""

    def __init__(self, tokenizer: tokenizers.Tokenizer, *, path: str | os.PathLike | None = None):
        self._tokenizer = tokenizer
        self.path = None if path is None else Path(path)
        for name, pieces in SPECIAL_PIECES.items():
            found = next((tokenizer.token_to_id(p) for p in pieces if tokenizer.token_to_id(p) is not None), None)
            setattr(self, f"{name}_id", found)
        self.special_ids = frozenset(i for i, token in tokenizer.get_added_tokens_decoder().items() if token.special)

    @classmethod
    def load(cls, path: str | os.PathLike) -> PretrainedTokenizer:
        """Read a `tokenizer.json`, or a directory with one of the layouts the module docstring lists."""
        path = Path(path)
        if (path / FILE).is_file():
            path = path / FILE
        if path.is_file():
            try:
                tokenizer = tokenizers.Tokenizer.from_file(str(path))
            except Exception as err:  # noqa: BLE001 - the library raises bare Exceptions for malformed files
                raise InputFormatError(f"not a tokenizers JSON file ({err})", path=path) from None
            return cls(tokenizer, path=path)
        if not path.is_dir():
            raise InputFormatError("tokenizer file or directory not found", path=path)
        if (path / "vocab.json").is_file() and (path / "merges.txt").is_file():
            return cls(byte_level_bpe(path / "vocab.json", path / "merges.txt"))
        if (path / "spiece.model").is_file():
            config = path / "tokenizer_config.json"
            settings = json.loads(config.read_text()) if config.is_file() else {}
            return cls(pegasus_unigram(path / "spiece.model", settings.get("offset", PEGASUS_OFFSET)))
        raise InputFormatError(f"no tokenizer found: expected {FILE}, vocab.json + merges.txt, or spiece.model",
                               path=path)

    def definition(self) -> bytes:
        """The `tokenizer.json` text (what `save` writes)."""
        return self._tokenizer.to_str().encode()

    def template(self) -> tuple[list[int], list[int]]:
        """The special tokens the checkpoint puts before and after a text's tokens."""
        probe = "a"
        bare = self._tokenizer.encode(probe, add_special_tokens=False).ids
        full = self._tokenizer.encode(probe, add_special_tokens=True).ids
        start = next(i for i in range(len(full) - len(bare) + 1) if full[i:i + len(bare)] == bare)
        return full[:start], full[start + len(bare):]


def byte_level_bpe(vocab: Path, merges: Path) -> tokenizers.Tokenizer:
    """RoBERTa's (BART's, LED's) byte-level BPE from its vocab and merges files: `<s> text </s>`."""
    try:
        tokenizer = tokenizers.ByteLevelBPETokenizer(str(vocab), str(merges))._tokenizer
    except Exception as err:  # noqa: BLE001
        raise InputFormatError(f"not a byte-level BPE vocabulary with merges ({err})", path=vocab) from None
    specials = [p for p in ("<s>", "<pad>", "</s>", "<unk>", "<mask>") if tokenizer.token_to_id(p) is not None]
    tokenizer.add_special_tokens(specials)
    tokenizer.post_processor = processors.RobertaProcessing(("</s>", tokenizer.token_to_id("</s>")),
                                                            ("<s>", tokenizer.token_to_id("<s>")))
    return tokenizer


def pegasus_unigram(spiece: Path, offset: int = PEGASUS_OFFSET) -> tokenizers.Tokenizer:
    """Pegasus's tokenizer from its sentencepiece model in Hugging Face's id layout: `text </s>`."""
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    try:
        proto.ParseFromString(spiece.read_bytes())
    except Exception as err:  # noqa: BLE001 - protobuf's DecodeError
        raise InputFormatError(f"not a sentencepiece model ({err})", path=spiece) from None
    specials = ["<pad>", "</s>", "<mask_1>", "<mask_2>"] + [f"<unk_{i}>" for i in range(2, offset)]
    vocab = [(piece, 0.0 if i < 4 else -100.0) for i, piece in enumerate(specials)]
    vocab += [(piece.piece, piece.score) for piece in proto.pieces[2:]]
    tokenizer = tokenizers.Tokenizer(Unigram(vocab, unk_id=proto.trainer_spec.unk_id + offset))
    charsmap = proto.normalizer_spec.precompiled_charsmap
    steps = [normalizers.Precompiled(charsmap)] if charsmap else [normalizers.Replace(Regex(r"\n"), " ")]
    tokenizer.normalizer = normalizers.Sequence([*steps, normalizers.Replace(Regex(r" {2,}"), " ")])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tokenizer.add_special_tokens(specials[:4] + ["<unk>"])
    tokenizer.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A $B </s>",
                                                             special_tokens=[("</s>", 1)])
    return tokenizer
