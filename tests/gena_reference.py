"""GENA-LM's published tokenizer and a small model of its layout, for the import tests.

`GENA_TOKENIZER` holds `tokenizer.json` + `special_tokens_map.json` + `tokenizer_config.json` of GENA-LM's
`t2t_1000h_multi_32k` (tests/data/gena_lm_t2t_1000h_multi_32k/README.md); `lambda_dna()` 6 kb of real DNA
(tests/data/lambda_phage/README.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch

DATA = Path(__file__).resolve().parent / "data"
GENA_TOKENIZER = DATA / "gena_lm_t2t_1000h_multi_32k"
LAMBDA_FASTA = DATA / "lambda_phage" / "lambda_1-6000.fasta"
# moved_specials: ids 0-4 (dnabird's and GENA-LM's special ids) go to IUPAC letters no test sequence holds
MOVED = {"B": 0, "K": 1, "M": 2, "R": 3, "S": 4, "[UNK]": 7, "[CLS]": 10, "[SEP]": 11, "[PAD]": 13}


def lambda_dna() -> str:
    lines = LAMBDA_FASTA.read_text().splitlines()
    return "".join(line.strip() for line in lines[1:])


def moved_specials(directory: Path) -> Path:
    """A copy of GENA-LM's tokenizer in `directory` whose special tokens sit at other ids: [UNK], [CLS], [SEP]
    and [PAD] where B, M, K, R sat, [MASK] at the last id, and ids 0-4 spelling the IUPAC letters B, K, M, R,
    S (which the piece formerly at the last id replaces at 14). Pieces and merges are unchanged."""
    directory.mkdir(parents=True, exist_ok=True)
    data = json.loads((GENA_TOKENIZER / "tokenizer.json").read_text())
    vocab = data["model"]["vocab"]
    last = max(vocab.values())
    moved = {**MOVED, "[MASK]": last, next(p for p, i in vocab.items() if i == last): vocab["S"]}
    assert sorted(vocab[p] for p in moved) == sorted(moved.values())  # a permutation of the ids involved
    vocab.update(moved)
    for token in data["added_tokens"]:
        token["id"] = vocab[token["content"]]
    data["post_processor"]["cls"][1], data["post_processor"]["sep"][1] = vocab["[CLS]"], vocab["[SEP]"]
    (directory / "tokenizer.json").write_text(json.dumps(data))
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        shutil.copy(GENA_TOKENIZER / name, directory / name)
    return directory


def gena_config(transformers, *, pad_token_id: int = 3, attention_type: str = "block_sparse", layers: int = 2,
                hidden: int = 64, vocab_size: int = 32000, **extra):
    """A `BigBirdConfig` with GENA-LM's `gena-lm-bigbird-base-t2t` layout (block 64, 3 random blocks, 4096
    positions, gelu_new, no embedding rescaling, 32,000 ids, [PAD]=3), small: `layers` x `hidden`."""
    return transformers.BigBirdConfig(
        vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=4,
        intermediate_size=2 * hidden, max_position_embeddings=4096, hidden_act="gelu_new", rescale_embeddings=False,
        attention_type=attention_type, block_size=64, num_random_blocks=3, pad_token_id=pad_token_id,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, type_vocab_size=2, **extra)


def seeded(build, seed: int = 0):
    """`build()` under a fixed torch seed, leaving the global RNG as it was."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return build()


def save_as_pytorch_bin(model, directory: Path) -> Path:
    """`model` as transformers 4.x wrote it with safe_serialization=False: config.json + pytorch_model.bin
    (the state dict pickled by `torch.save`, tied decoder included)."""
    directory.mkdir(parents=True, exist_ok=True)
    model.config.architectures = [type(model).__name__]
    model.config.save_pretrained(directory)
    torch.save(model.state_dict(), directory / "pytorch_model.bin")
    return directory
