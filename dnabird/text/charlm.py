"""Character-level autoregressive LM (Longformer §4) on text8/enwik8-format files, scored in bits per character.

- Symbols are bytes: token id = byte + 1, id 0 = [PAD] (257 ids; text8 uses 27 of them). enwik8's "BPC" is
  thus bits per byte, as everywhere it is reported.
- Split (Mikolov et al. 2012, used by every text8/enwik8 result): bytes [0, 90 %) train, [90 %, 95 %)
  validation, [95 %, 100 %) test — exactly 90M / 5M / 5M on the 100M-byte files.
- Training examples are windows of `max_length` bytes at offsets drawn from (seed, example index).
- Evaluation scores every position of a split exactly once: windows of `context` bytes end at successive
  multiples of `stride`; each scores only its last `stride` positions, so every scored byte sees at least
  `context − stride` bytes before it (the bytes preceding the split included, as the split's text continues
  the previous one's; only the file's very first byte, with nothing before it, is not scored).
  BPC = Σ −log₂ p(byte | preceding bytes) / number of scored bytes — never a mean of per-window means.
- The model: a causal encoder (`EncoderConfig.causal`) + LM head; Longformer's recipe is a causal sliding
  window, per-head dilation and windows growing with depth (`layer_attention`).
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from dnabird.config import RecipeConfig
from dnabird.errors import InputFormatError, reject
from dnabird.io import write_json_atomic
from dnabird.pretraining.evaluate import unigram_log_probs
from dnabird.progress import progress_bar
from dnabird.train import LossOutput, TrainConfig
from dnabird.train.data import stack_examples
from dnabird.train.recipe import recipe_run

PAD_ID = 0
VOCAB_SIZE = 257  # 256 bytes + [PAD]
SPLITS = ("train", "validation", "test")
SPLIT_FRACTIONS = (0.90, 0.95)  # ends of train and validation


def read_bytes(path: str | os.PathLike) -> np.ndarray:
    """The file's bytes (uint8), memory-mapped."""
    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0:
        raise InputFormatError("character LM data file not found or empty", path=path)
    return np.memmap(path, dtype=np.uint8, mode="r")


def split_bounds(size: int) -> dict[str, tuple[int, int]]:
    """[start, end) byte ranges of train, validation and test for a file of `size` bytes (90/5/5)."""
    train_end, valid_end = (int(size * fraction) for fraction in SPLIT_FRACTIONS)
    return {"train": (0, train_end), "validation": (train_end, valid_end), "test": (valid_end, size)}


def to_ids(data: np.ndarray) -> np.ndarray:
    return data.astype(np.int64) + 1


class CharWindows(torch.utils.data.Dataset):
    """Example g: the `length` bytes at an offset drawn from (seed, g) inside `data[start:end]` (endless)."""

    def __init__(self, data: np.ndarray, start: int, end: int, *, length: int, seed: int = 0):
        reject(end - start <= length, "max_length", length, f"fewer than the {end - start} training bytes")
        self.data, self.start, self.end, self.length, self.seed = data, start, end, length, seed

    def __len__(self) -> int:
        return (self.end - self.start) // self.length  # windows per "epoch" (offsets are drawn, not tiled)

    def __getitem__(self, global_index: int) -> dict[str, np.ndarray]:
        offset = int(np.random.default_rng((self.seed, int(global_index))).integers(self.start, self.end - self.length))
        ids = to_ids(self.data[offset:offset + self.length])
        return {"input_ids": ids, "labels": ids}


def causal_lm_loss(model: torch.nn.Module, batch: dict[str, torch.Tensor], step: int) -> LossOutput:
    """Next-byte cross-entropy of a `CausalLanguageModel`; metric `bpc` (the loss in bits)."""
    out = model(batch["input_ids"], labels=batch["labels"], step=step)
    one = torch.ones((), device=out.loss.device)
    return LossOutput(out.loss, int(batch["input_ids"].numel()), {"bpc": (out.loss.detach() / math.log(2), one)})


def evaluation_windows(start: int, end: int, *, context: int, stride: int) -> list[tuple[int, int, int]]:
    """(window start, window end, first scored position) triples: window ends step by `stride` from `start`,
    each window holds up to `context` bytes before its end and scores [max(first, start), end); together they
    score every position of [start, end) once (position 0 of the file excepted)."""
    reject(not 0 < stride < context, "stride", stride,
           f"an integer in [1, context={context}) (a window holds at least one byte before those it scores)")
    scored = ((first, min(first + stride, end)) for first in range(max(start, 1), end, stride))
    return [(max(0, scored_end - context), scored_end, first) for first, scored_end in scored]


@torch.no_grad()
def evaluate_bpc(model: torch.nn.Module, data: np.ndarray, start: int, end: int, *, context: int, stride: int,
                 batch_size: int = 8, device="cpu") -> dict:
    """Bits per character over bytes [start, end) of `data` (see the module docstring); also the count scored."""
    model.eval().to(device)
    windows = evaluation_windows(start, end, context=context, stride=stride)
    nats, scored = 0.0, 0
    for first in progress_bar(range(0, len(windows), batch_size), desc="BPC", unit=" batches"):
        group = windows[first:first + batch_size]
        length = max(b - a for a, b, _ in group)
        ids = torch.full((len(group), length), PAD_ID, dtype=torch.long)
        score = torch.zeros(len(group), length, dtype=torch.bool)  # position t: is byte t scored?
        for row, (a, b, s) in enumerate(group):
            ids[row, :b - a] = torch.from_numpy(to_ids(data[a:b]))
            score[row, s - a:b - a] = True
        ids, score = ids.to(device), score.to(device)
        log_probs = F.log_softmax(model(ids, ids != PAD_ID).logits[:, :-1].float(), -1)  # predicts bytes 1…
        true = log_probs.gather(2, ids[:, 1:, None]).squeeze(2)
        nats -= float(true[score[:, 1:]].sum())
        scored += int(score[:, 1:].sum())
    return {"bpc": nats / math.log(2) / max(scored, 1), "scored": scored, "context": context, "stride": stride}


def unigram_bpc(data: np.ndarray, train: tuple[int, int], evaluated: tuple[int, int]) -> float:
    """BPC of the training bytes' add-one-smoothed frequencies on the evaluated bytes (a cheap baseline)."""
    log2p = unigram_log_probs(np.asarray(data[train[0]:train[1]]), 256, bits=True)
    return float(-log2p[np.asarray(data[max(evaluated[0], 1):evaluated[1]])].mean())


@dataclass
class CharLMConfig(RecipeConfig):
    """Settings of one character-LM run (the keys of a `charlm:` section or a `--config` YAML).

    data: a text8/enwik8-format file (split 90/5/5); null inside `dnabird run`: the `text_data` stage's.
    model, model_overrides: a preset and `EncoderConfig` fields (causal, the byte vocabulary and [PAD]=0 are
        fixed); by default a causal Longformer window of 128; e.g. attention {type: longformer, window: 32},
        layer_attention with windows growing with depth.
    max_length: bytes per training window.
    eval_split: "validation" or "test"; eval_context, eval_stride: the scoring windows; eval_max_bytes: score
        only the split's first bytes (null: all of it); eval_batch_size: windows per forward pass.
    seed: initialisation, window offsets, dropout. train: the loop's `TrainConfig`.
    """

    data: str | None = None
    model: str = "tiny"
    model_overrides: dict = field(default_factory=lambda: {"attention": {"type": "longformer", "window": 128}})
    max_length: int = 512
    eval_split: str = "validation"
    eval_context: int = 512
    eval_stride: int = 256
    eval_max_bytes: int | None = None
    eval_batch_size: int = 8
    seed: int = 0
    train: TrainConfig = field(default_factory=lambda: TrainConfig(out_dir="runs/charlm", warmup_steps=100))

    def __post_init__(self):
        reject(self.eval_split not in SPLITS[1:], "eval_split", self.eval_split, f"one of {SPLITS[1:]}")
        evaluation_windows(0, 1, context=self.eval_context, stride=self.eval_stride)  # checks the stride
        model_settings(self)


def model_settings(config: CharLMConfig):
    """The `EncoderConfig`: the preset and overrides with causal attention and the byte vocabulary fixed."""
    from dnabird.model.config import build_encoder_config

    model = build_encoder_config(config.model, config.model_overrides, causal=True, vocab_size=VOCAB_SIZE,
                                 pad_token_id=PAD_ID)
    model.check_length(max(config.max_length, config.eval_context), "max_length / eval_context", multiple=False)
    return model


def train_charlm(config: CharLMConfig, *, resume: bool = False) -> dict:
    """Train a causal byte-level LM, then report BPC on the evaluation split beside the unigram baseline."""
    from dnabird.model.heads import CausalLanguageModel

    reject(config.data is None, "data", None, "a text8/enwik8-format file")
    data = read_bytes(config.data)
    bounds = split_bounds(len(data))
    model_config = model_settings(config)
    windows = CharWindows(data, *bounds["train"], length=config.max_length, seed=config.seed)
    report = {}
    with recipe_run(config.train.device, seed=config.seed) as run:
        model = CausalLanguageModel(model_config, seed=config.seed)
        run.fit(model, causal_lm_loss, windows, config.train, collate_fn=stack_examples, resume=resume,
                run_info={"charlm": dataclasses.asdict(config)})
        if run.is_main:
            start, end = bounds[config.eval_split]
            if config.eval_max_bytes is not None:
                end = min(end, start + config.eval_max_bytes)
            report = {"split": config.eval_split, "bytes": [start, end],
                      "model": evaluate_bpc(model, data, start, end, context=config.eval_context,
                                            stride=config.eval_stride, batch_size=config.eval_batch_size,
                                            device=run.device),
                      "unigram_bpc": unigram_bpc(data, bounds["train"], (start, end))}
            write_json_atomic(Path(config.train.out_dir) / "report.json", report)
            print(f"{config.eval_split} BPC {report['model']['bpc']:.3f} over {report['model']['scored']} bytes "
                  f"(context {config.eval_context}, stride {config.eval_stride}; unigram {report['unigram_bpc']:.3f})")
    return report


load_config = CharLMConfig.load  # a character-LM YAML (the keys of `CharLMConfig`) with `key.sub=value` overrides
