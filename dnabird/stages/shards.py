"""Stage `shards`: one tokenized HDF5 shard per corpus part, resumed part by part.

A shard is rewritten only when its corpus part's fingerprint or the tokenizer changed, so an
interrupted run redoes just the parts that were not finished.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import h5py
from tqdm import tqdm

from dnabird.data.corpus import corpus_parts, iter_part_documents
from dnabird.data.shards import SHARD_SUFFIX, write_shard
from dnabird.data.tokenizer import Tokenizer
from dnabird.pipeline import RunContext, Stage, fingerprint


@dataclass
class ShardsConfig:
    """Which corpus splits to tokenize."""

    splits: list[str] = field(default_factory=lambda: ["train", "heldout"])


def inputs(config: ShardsConfig, context: RunContext) -> list[Path]:
    return [context.output("corpus", "corpus"), context.output("tokenizer", "model")]


def shard_is_current(path: Path, tokenizer_hash: str, source_fingerprint: str) -> bool:
    """True when `path` is a finished shard of this part content made by this tokenizer."""
    try:
        with h5py.File(path, "r") as shard:
            return (shard.attrs["tokenizer_hash"], shard.attrs["source_fingerprint"]) == \
                (tokenizer_hash, source_fingerprint)
    except (OSError, KeyError):
        return False


def run(config: ShardsConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    corpus_dir = context.output("corpus", "corpus")
    tokenizer = Tokenizer.load(context.output("tokenizer", "model"))
    report = corpus_dir / "report.json"
    corpus_config = json.loads(report.read_text()).get("config", {}) if report.exists() else {}
    outputs = {}
    for split in config.splits:
        split_dir = stage_dir / split
        split_dir.mkdir(parents=True, exist_ok=True)  # exists even when the split has no parts
        parts = list(corpus_parts(corpus_dir, split))
        wanted = {split_dir / (Path(part).name.split(".")[0] + SHARD_SUFFIX): Path(part) for part in parts}
        for stale in set(split_dir.glob(f"*{SHARD_SUFFIX}")) - set(wanted):
            stale.unlink()
        for shard_path, part in tqdm(wanted.items(), desc=f"shards {split}", unit="part",
                                     disable=not sys.stderr.isatty()):
            source = json.dumps(fingerprint(part), sort_keys=True)
            if shard_is_current(shard_path, tokenizer.hash, source):
                continue
            write_shard(shard_path, iter_part_documents(part), tokenizer, corpus_config=corpus_config,
                        attrs={"source": part.name, "source_fingerprint": source, "split": split})
        outputs[split] = split_dir
    return outputs


STAGE = Stage("shards", ShardsConfig, inputs, run)
