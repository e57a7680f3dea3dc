"""Import Hugging Face `transformers` RoBERTa weights (`RobertaForMaskedLM` / `RobertaModel`) for warm starts.

RoBERTa is what Longformer starts from (Beltagy et al. 2020, §5): the same weights with Longformer
attention, global Q/K/V projections copied from the local ones, and the 512 learned positions copied over
and over to fill 4096 (`extend_position_table`). `from_hf_roberta(source, attention=..., max_positions=...)`
does all three; without them the model is RoBERTa as it was (full attention, MLM head, no NSP).
"""

from __future__ import annotations

import dataclasses

import torch

from dnabird.errors import ConfigError, reject
from dnabird.model.checkpoint import add_global_copies
from dnabird.model.config import EncoderConfig, merge_pattern
from dnabird.model.heads import PretrainingModel
from dnabird.model.hf import LAYER_NAMES, NameMap, bert_config, check_activation, embedding_names, import_model

_TIED = ("lm_head.decoder.weight",)
_DECODER_BIAS = ("lm_head.decoder.bias",)  # transformers' copy of the MLM bias
POSITION_KEY = "encoder.embeddings.position.weight"


def roberta_names(base: str, layer_names: dict[str, str] = LAYER_NAMES) -> NameMap:
    """The names of a RoBERTa-shaped masked LM whose base model is called `base` ("roberta", "longformer")."""
    return NameMap({**embedding_names(base), "encoder.pooler": f"{base}.pooler.dense", "mlm.transform": "lm_head.dense",
                    "mlm.norm": "lm_head.layer_norm"},
                   {"encoder.layers": (f"{base}.encoder.layer", layer_names)}, {"mlm.bias": "lm_head.bias"})


def import_masked_lm(source, base: str, *, config_from, names: NameMap, adapt=None) -> PretrainingModel:
    """A `PretrainingModel` (MLM, no NSP) with the weights of a RoBERTa-shaped Hugging Face model whose base
    model is called `base`."""
    return import_model(source, lambda config: PretrainingModel(config, nsp=False), config_from=config_from,
                        names=names, tied=_TIED, prefix=f"{base}.", ignored=_DECODER_BIAS, adapt=adapt)


def roberta_config(hf: dict, **settings) -> EncoderConfig:
    """The `EncoderConfig` of a RoBERTa-shaped Hugging Face config (as a dict): positions from padding_idx + 1,
    embedding dropout after the LayerNorm; `settings` over it."""
    pad = hf.get("pad_token_id", 1)
    return bert_config(hf, position_offset=pad + 1, pad_token_id=pad, embedding_dropout_before_norm=False,
                       **settings)


def config_from_roberta(hf: dict) -> EncoderConfig:
    """An `EncoderConfig` equal in behaviour to a Hugging Face `RobertaConfig` (as a dict): full attention."""
    check_activation(hf, "hidden_act", "RoBERTa")
    if hf.get("position_embedding_type", "absolute") != "absolute":
        raise ConfigError(f"Hugging Face RoBERTa config: position_embedding_type="
                          f"{hf['position_embedding_type']!r} is not supported (absolute only)")
    return roberta_config(hf, attention={"type": "full"})


def extend_position_table(table: torch.Tensor, offset: int, rows: int) -> torch.Tensor:
    """Longformer's position copy: a table of `rows` rows whose first `offset` rows (RoBERTa's padding
    positions) are kept and whose rows from `offset` on repeat the trained rows `table[offset:]` in order."""
    reject(rows < table.shape[0], "max_positions", rows, f">= the {table.shape[0]} positions the model has")
    trained = table[offset:]
    return torch.cat([table[:offset], trained[torch.arange(rows - offset) % len(trained)]])


def from_hf_roberta(source, *, attention: dict | None = None, max_positions: int | None = None) -> PretrainingModel:
    """A `PretrainingModel` (MLM, no NSP) with the weights of a Hugging Face RoBERTa model object or directory.

    attention: pattern settings merged over RoBERTa's full attention (e.g. `{"type": "longformer",
        "window": 512}`); a pattern with global projections gets copies of the local Q/K/V.
    max_positions: grow the learned position table to this many rows by copying (`extend_position_table`).
    """
    def config_from(hf: dict) -> EncoderConfig:
        config = config_from_roberta(hf)
        return dataclasses.replace(config, attention=merge_pattern(config.attention, attention or {}),
                                   max_positions=config.max_positions if max_positions is None else max_positions)

    def adapt(tensors: dict[str, torch.Tensor], model: PretrainingModel) -> dict[str, torch.Tensor]:
        config = model.config
        tensors = {**tensors, POSITION_KEY: extend_position_table(tensors[POSITION_KEY], config.position_offset,
                                                                  config.max_positions)}
        return add_global_copies(tensors, model)

    return import_masked_lm(source, "roberta", config_from=config_from, names=roberta_names("roberta"), adapt=adapt)
