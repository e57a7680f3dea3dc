"""GENA-LM's `t2t_1000h_multi_32k` tokenizer with its `N` piece taken out, as GENA-LM's `human/BPE_32k` has none.

`without_n_piece(directory)` drops every piece that holds an N (the single `N` and the 20 merged pieces built
on it) and every merge that makes or uses one, then numbers the pieces left in their old order (the special
tokens keep ids 0-5). `normalizer=False` also drops the normalizer and pre-tokenizer, as `human/BPE_32k`
has neither: then every N is an [UNK], in runs too.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.gena_reference import GENA_TOKENIZER


def without_n_piece(directory: Path, *, normalizer: bool = True) -> Path:
    """A copy of GENA-LM's tokenizer files in `directory` whose vocabulary holds no N."""
    directory.mkdir(parents=True, exist_ok=True)
    data = json.loads((GENA_TOKENIZER / "tokenizer.json").read_text())
    added = {token["content"] for token in data["added_tokens"]}
    model = data["model"]
    kept = sorted((i, p) for p, i in model["vocab"].items() if p in added or "N" not in p)
    model["vocab"] = {piece: new for new, (_, piece) in enumerate(kept)}
    model["merges"] = [merge for merge in model["merges"] if "N" not in merge]
    assert all(model["vocab"][token["content"]] == token["id"] for token in data["added_tokens"])
    assert len(model["vocab"]) == 32000 - 20 and "N" not in model["vocab"]
    if not normalizer:
        data["normalizer"] = data["pre_tokenizer"] = None
    (directory / "tokenizer.json").write_text(json.dumps(data))
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        shutil.copy(GENA_TOKENIZER / name, directory / name)
    return directory
