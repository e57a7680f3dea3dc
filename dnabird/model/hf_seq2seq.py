"""What importing a Hugging Face encoder-decoder (LED, BigBird-Pegasus) shares: reading the weights, mapping
their names onto an `EncoderDecoder`, and writing a dnabird checkpoint with the model's own tokenizer.

Each architecture module gives its config mapping and name tables (`hf_led`, `hf_bigbird_pegasus`). The
word embeddings are shared by encoder, decoder and output layer on both sides; Hugging Face's tied copies
(`embed_tokens`, `lm_head`) must equal the shared table. Tensors dnabird has and the source lacks are the
token-type table (one row) and biases the source's layers go without (BigBird-Pegasus's `use_bias=False`
attention output): they load as zeros, which computes what the source computes.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

from dnabird.errors import CheckpointError, ConfigError
from dnabird.model.checkpoint import load_weights, save_checkpoint
from dnabird.model.hf_files import read_hf_config, read_hf_weights
from dnabird.model.seq2seq import EncoderDecoder, Seq2SeqConfig

log = logging.getLogger(__name__)
ZERO_FILLED = re.compile(r"encoder\.embeddings\.segment\.weight|encoder\.layers\.\d+\.attention\.output\.bias")


@dataclass(frozen=True)
class NameTables:
    """dnabird module → Hugging Face module: `fixed` outside the layers; per-layer tables under the encoder's
    and decoder's layer prefixes (`{prefix}.{i}.{name}`); `tied`: Hugging Face keys that must equal `word`."""

    fixed: dict[str, str]
    encoder_prefix: str
    encoder_layer: dict[str, str]
    decoder_prefix: str
    decoder_layer: dict[str, str]
    word: str
    tied: tuple[str, ...]
    logits_bias: str = "final_logits_bias"

    def hf_name(self, name: str) -> str | None:
        """The Hugging Face key of dnabird key `name` (None where the source has no counterpart)."""
        if name == "logits_bias":
            return self.logits_bias
        module, _, leaf = name.rpartition(".")
        for side, prefix, table in (("encoder", self.encoder_prefix, self.encoder_layer),
                                    ("decoder", self.decoder_prefix, self.decoder_layer)):
            match = re.fullmatch(rf"{side}\.layers\.(\d+)\.(.+)", module)
            if match:
                inner = table.get(match.group(2))
                return None if inner is None else f"{prefix}.{match.group(1)}.{inner}.{leaf}"
        if module == "encoder.embeddings.word":
            return self.word
        return f"{self.fixed[module]}.{leaf}" if module in self.fixed else None


def import_seq2seq(source, *, config_from, names: NameTables) -> EncoderDecoder:
    """An `EncoderDecoder` with the weights of a Hugging Face model object or `save_pretrained` directory.

    config_from: Hugging Face config dict → `Seq2SeqConfig`; names: the architecture's `NameTables`.
    """
    if isinstance(source, (str, os.PathLike)):
        hf_config = read_hf_config(source)
        tensors, where = read_hf_weights(source)
    else:
        hf_config = source.config.to_dict()
        tensors = {k: v.detach() for k, v in source.state_dict().items()}
        where = type(source).__name__
    config: Seq2SeqConfig = config_from(hf_config)
    model = EncoderDecoder(config)
    wanted = {names.hf_name(name): name for name in model.state_dict() if names.hf_name(name) is not None}
    word = tensors.get(names.word)
    for key in names.tied:
        if key in tensors and word is not None and not torch.equal(tensors[key], word):
            raise ConfigError(f"{where}: {key} is not tied to {names.word}; dnabird shares one word table")
    unexpected = sorted(set(tensors) - set(wanted) - set(names.tied))
    if unexpected:
        raise CheckpointError(f"{where}: Hugging Face tensors with no dnabird counterpart: {unexpected[:10]}")
    ours = {wanted[k]: v for k, v in tensors.items() if k in wanted}
    if "logits_bias" in ours:
        ours["logits_bias"] = ours["logits_bias"].reshape(-1)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(ours))
    not_fillable = [k for k in missing if not ZERO_FILLED.fullmatch(k) and k != "logits_bias"]
    if not_fillable:
        raise CheckpointError(f"{where}: tensors missing from the source: {not_fillable[:10]}")
    ours.update({k: torch.zeros_like(expected[k]) for k in missing})
    load_weights(model, ours, source=where)
    if missing:
        log.info("imported %s; zero-filled (absent from the source): %s", where, ", ".join(missing))
    return model


def save_imported(model: EncoderDecoder, tokenizer_source: str | os.PathLike, output: str | os.PathLike) -> Path:
    """Write `model` as a dnabird checkpoint with the source directory's tokenizer as `tokenizer.json`."""
    from dnabird.data.pretrained_tokenizer import FILE, PretrainedTokenizer

    tokenizer = PretrainedTokenizer.load(tokenizer_source)
    if tokenizer.vocab_size > model.config.encoder.vocab_size:
        raise CheckpointError(f"{tokenizer_source}: its tokenizer has {tokenizer.vocab_size} tokens, more than the "
                              f"model's vocab_size={model.config.encoder.vocab_size}")
    with tempfile.TemporaryDirectory() as scratch:
        return save_checkpoint(model, output, tokenizer_files=(tokenizer.save(Path(scratch) / FILE),))


def import_encoder_decoder(architecture: str, source: str | os.PathLike, output: str | os.PathLike) -> EncoderDecoder:
    """Import a Hugging Face directory of `architecture` ("led" or "bigbird_pegasus") with its tokenizer into
    the dnabird checkpoint `output`; returns the model."""
    from dnabird.errors import ParameterError
    from dnabird.model.hf_bigbird_pegasus import from_hf_bigbird_pegasus
    from dnabird.model.hf_led import from_hf_led

    importers = {"led": from_hf_led, "bigbird_pegasus": from_hf_bigbird_pegasus}
    if architecture not in importers:
        raise ParameterError("architecture", architecture, f"one of {sorted(importers)}")
    model = importers[architecture](source)
    save_imported(model, source, output)
    return model
