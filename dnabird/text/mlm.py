"""Masked-LM pretraining on text (RoBERTa / Longformer style: MLM only, documents packed to the length).

Documents (plain text or JSONL, `dnabird.data.text`) are tokenized into one stream, each followed by [SEP];
example k is `[CLS] stream[k·(L−2) : (k+1)·(L−2)] [SEP]` (it may span documents). `PackedTextExamples[g]` is
epoch g // N, position g % N of a seeded permutation, masked (BERT's 15 %, 80/10/10) by a generator seeded with
(seed, epoch, index): resuming and DataLoader workers never change what an index holds.

Staged training (`phases`, Longformer §4.2: window and length grow while the learning rate falls) runs the loop
once per phase into `<out_dir>/phase_<k>/`, each from the previous phase's final weights, with its own warmup
and linear decay (a phase that would change a weight's shape is refused when the config loads). A resumed run
skips the phases that wrote their `model/`; the last phase's model is the run's `<out_dir>/model`.

The held-out report gives, at the selected positions, bits per token (the papers' "MLM BPC") and bits per
character (Σ bits ÷ Σ characters those tokens spell, a document's leading word-boundary piece counting as one
space), beside a unigram model of the training tokens.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from dnabird.config import RecipeConfig
from dnabird.data.pretraining import mask_tokens
from dnabird.data.text import read_documents
from dnabird.data.text_tokenizer import TextTokenizer
from dnabird.errors import ParameterError, reject, require_paths
from dnabird.finetune.data import EpochExamples
from dnabird.io import write_json_atomic
from dnabird.labels import IGNORE_INDEX
from dnabird.model.config import merge_settings, recipe_encoder_config
from dnabird.pretraining.evaluate import unigram_log_probs
from dnabird.text.training import device_batches
from dnabird.train import TrainConfig
from dnabird.train.checkpoint import resumable
from dnabird.train.data import stack_examples
from dnabird.train.recipe import recipe_run


def pack_documents(tokenizer: TextTokenizer, documents, *, batch: int = 256) -> np.ndarray:
    """The token stream of `documents`, each followed by [SEP] (int32)."""
    parts, documents = [], iter(documents)
    while chunk := list(itertools.islice(documents, batch)):  # `batch` documents per tokenizer call
        parts += [np.asarray([*ids, tokenizer.sep_id], dtype=np.int32) for ids in tokenizer.encode(chunk)]
    reject(not parts, "documents", "no documents", "at least one non-empty document")
    return np.concatenate(parts)


class PackedTextExamples(EpochExamples):
    """Masked examples of `max_length` tokens cut from a token stream (see the module docstring); the
    tokenizer's special ids are never masked nor drawn as replacements."""

    def __init__(self, stream: np.ndarray, tokenizer: TextTokenizer, *, max_length: int, mask_rate: float = 0.15,
                 seed: int = 0, shuffle: bool = True):
        reject(max_length < 8, "max_length", max_length, "an integer >= 8")
        reject(not 0.0 < mask_rate < 1.0, "mask_rate", mask_rate, "a fraction in (0, 1)")
        super().__init__(np.empty(0, np.int64), seed=seed, shuffle=shuffle)  # no class labels: targets are drawn
        self.stream, self.max_length, self.mask_rate = stream, max_length, mask_rate
        self.cls_id, self.sep_id, self.pad_id = tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id
        self.mask_id, self.vocab_size = tokenizer.mask_id, tokenizer.vocab_size
        self.special_ids = np.asarray(sorted(tokenizer.special_ids))

    def __len__(self) -> int:
        """Examples per epoch (the last one may be shorter, then padded)."""
        return -(-len(self.stream) // (self.max_length - 2))

    def example(self, chunk: int, epoch: int) -> dict[str, np.ndarray]:
        body = self.stream[chunk * (self.max_length - 2):(chunk + 1) * (self.max_length - 2)].astype(np.int64)
        ids = np.concatenate([[self.cls_id], body, [self.sep_id]])
        rng = np.random.default_rng((self.seed, epoch, chunk, 2))
        masked, labels = mask_tokens(ids, rng, rate=self.mask_rate, vocab_size=self.vocab_size,
                                     mask_id=self.mask_id, special_ids=self.special_ids)
        pad = self.max_length - len(ids)
        return {"input_ids": np.pad(masked, (0, pad), constant_values=self.pad_id),
                "attention_mask": np.arange(self.max_length) < len(ids),
                "token_type_ids": np.zeros(self.max_length, dtype=np.int64),
                "mlm_labels": np.pad(labels, (0, pad), constant_values=IGNORE_INDEX)}


@torch.no_grad()
def evaluate_mlm(model: torch.nn.Module, examples: PackedTextExamples, *, char_lengths: np.ndarray,
                 unigram: np.ndarray | None = None, num_examples: int | None = None, batch_size: int = 8,
                 device: str | torch.device = "cpu") -> dict:
    """Bits per token, bits per character and accuracy at the selected positions of held-out examples 0…n−1
    (one fixed masking), for the model and the unigram baseline."""
    model.eval().to(device)
    count = len(examples) if num_examples is None else min(num_examples, len(examples))
    chars = torch.as_tensor(char_lengths, device=device)
    scorers = ["model"] + (["unigram"] if unigram is not None else [])
    sums = {name: {"nats": 0.0, "correct": 0} for name in scorers}
    tokens = characters = 0
    for _, batch in device_batches(examples, count, batch_size, device, "held-out MLM"):
        out = model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"],
                    mlm_labels=batch["mlm_labels"])
        labels = batch["mlm_labels"][batch["mlm_labels"] != IGNORE_INDEX]
        log_probs = {"model": F.log_softmax(out.mlm_logits.float(), -1)}
        if unigram is not None:
            log_probs["unigram"] = torch.as_tensor(unigram, dtype=torch.float32, device=device).expand(len(labels), -1)
        for name, lp in log_probs.items():
            sums[name]["nats"] -= float(lp.gather(1, labels[:, None]).sum())
            sums[name]["correct"] += int((lp.argmax(-1) == labels).sum())
        tokens += len(labels)
        characters += int(chars[labels].sum())
    report = {name: {"bits_per_token": s["nats"] / math.log(2) / max(tokens, 1),
                     "bits_per_char": s["nats"] / math.log(2) / max(characters, 1),
                     "accuracy": s["correct"] / max(tokens, 1)} for name, s in sums.items()}
    report.update(examples=count, masked_tokens=tokens, masked_characters=characters,
                  max_length=examples.max_length, mask_rate=examples.mask_rate)
    return report


def format_mlm_report(report: dict) -> str:
    lines = [f"held-out MLM: {report['examples']} examples of {report['max_length']} tokens, "
             f"{report['masked_tokens']} selected tokens ({report['mask_rate']:.0%}; 80 % [MASK], 10 % random, "
             f"10 % unchanged) spelling {report['masked_characters']} characters",
             f"{'':<10}{'accuracy':>10}{'bits/token':>12}{'BPC':>8}"]
    for name in ("model", "unigram"):
        if name in report:
            row = report[name]
            lines.append(f"{name:<10}{row['accuracy']:>10.3f}{row['bits_per_token']:>12.3f}{row['bits_per_char']:>8.3f}")
    lines.append("(bits/token is the BigBird/Longformer papers' \"MLM BPC\"; BPC = bits per character)")
    return "\n".join(lines)


@dataclass
class MLMPhase:
    """One phase of staged MLM training.

    steps: optimizer steps of the phase. max_length: tokens per example (null: the run's `max_length`).
    attention: attention-pattern settings merged over the model's (e.g. {window: 128} for a Longformer
        pattern, {block_size: 64} for BigBird); empty: unchanged. lr: peak learning rate (null: train.lr).
    """

    steps: int
    max_length: int | None = None
    attention: dict = field(default_factory=dict)
    lr: float | None = None

    def __post_init__(self):
        reject(self.steps < 1, "phases[].steps", self.steps, "an integer >= 1")
        reject(self.lr is not None and self.lr < 0, "phases[].lr", self.lr, "a learning rate >= 0")


@dataclass
class TextMLMConfig(RecipeConfig):
    """Settings of one text MLM pretraining run (the keys of a `text_mlm:` section or a `--config` YAML).

    train_files, validation_files: plain-text or JSONL files or directories (`dnabird.data.text`); inside
        `dnabird run`, null means the `text_data` stage's MLM files.
    tokenizer: a sentencepiece `.model` (`TextTokenizer`); null inside `dnabird run`: the `text_tokenizer`
        stage's.
    text_field: the JSONL field holding a document.
    model, model_overrides: a preset and `EncoderConfig` fields merged over it; vocab_size comes from the
        tokenizer. max_length: tokens per example (a multiple of the attention block size).
    mask_rate: share of tokens selected for MLM. seed: initialisation, example order and masking, dropout.
    eval_examples, eval_batch_size, eval_seed: the held-out report after training (0 examples skips it;
        with phases, examples of the last phase's length).
    train: the loop's `TrainConfig` (with phases, its `max_steps` and `lr` are each phase's `steps`, `lr`).
    phases: staged training (`MLMPhase` list, module docstring); empty: one run of `train.max_steps` steps.
    """

    train_files: list[str] | None = None
    validation_files: list[str] | None = None
    tokenizer: str | None = None
    text_field: str = "text"
    model: str = "tiny"
    model_overrides: dict = field(default_factory=dict)
    max_length: int = 512
    mask_rate: float = 0.15
    seed: int = 0
    eval_examples: int = 64
    eval_batch_size: int = 8
    eval_seed: int = 1234
    train: TrainConfig = field(default_factory=lambda: TrainConfig(out_dir="runs/text_mlm"))
    phases: list[MLMPhase] = field(default_factory=list)

    def __post_init__(self):
        recipe_encoder_config(self)  # model settings and max_length fail here, when the config loads
        plans = phase_plans(self)
        shapes = [parameter_shapes(model_config) for _, model_config, _ in plans]
        for index, shape in enumerate(shapes[1:], 1):
            if shape != shapes[0]:
                changed = sorted(k for k in shape.keys() | shapes[0].keys() if shape.get(k) != shapes[0].get(k))
                raise ParameterError(f"phases[{index}]", dataclasses.asdict(self.phases[index]),
                                     f"settings that keep every weight's shape (changed: {changed[:3]})")


def phase_plans(config: TextMLMConfig, vocab_size: int | None = None) -> list[tuple]:
    """(the run's config for the phase, its `EncoderConfig`, its `TrainConfig`) per phase; one entry, the
    run itself, without phases. Each phase's length and pattern are checked like the run's."""
    if not config.phases:
        return [(config, recipe_encoder_config(config, vocab_size), config.train)]
    plans = []
    for index, phase in enumerate(config.phases):
        overrides = merge_settings(config.model_overrides, {"attention": phase.attention} if phase.attention else {},
                                   f"phases[{index}].attention")
        phased = dataclasses.replace(config, model_overrides=overrides, phases=[],
                                     max_length=phase.max_length or config.max_length)
        train = dataclasses.replace(config.train, max_steps=phase.steps,
                                    lr=config.train.lr if phase.lr is None else phase.lr,
                                    warmup_steps=min(config.train.warmup_steps, phase.steps - 1),
                                    out_dir=str(Path(config.train.out_dir) / f"phase_{index}"))
        plans.append((phased, recipe_encoder_config(phased, vocab_size), train))
    return plans


def parameter_shapes(model_config) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every weight of the MLM model of `model_config` (built on the meta device)."""
    from dnabird.model.heads import PretrainingModel

    with torch.device("meta"):
        model = PretrainingModel(model_config, nsp=False)
    return {name: tuple(t.shape) for name, t in model.state_dict().items()}


def pretrain_text(config: TextMLMConfig, *, resume: bool = False) -> dict:
    """Train an MLM-only `PretrainingModel` on packed text, then (rank 0) report held-out bits per token and
    per character; returns that report (written to `<out_dir>/report.json`)."""
    from dnabird.model.checkpoint import load_weights, read_tensors, save_checkpoint
    from dnabird.model.heads import PretrainingModel
    from dnabird.pretraining.objective import mlm_loss

    require_paths(config, ("train_files", "tokenizer"))
    tokenizer = TextTokenizer.load(config.tokenizer)
    stream = pack_documents(tokenizer, read_documents(config.train_files, text_field=config.text_field))
    plans = phase_plans(config, tokenizer.vocab_size)
    report = {}
    with recipe_run(config.train.device, seed=config.seed) as run:
        previous: Path | None = None  # the model directory of the phase before
        model = None
        for index, (phased, model_config, train_config) in enumerate(plans):
            finished = Path(train_config.out_dir) / "model"
            if config.phases and resume and (finished / "model.safetensors").is_file():
                previous = finished  # done before an interruption
                continue
            examples = PackedTextExamples(stream, tokenizer, max_length=phased.max_length, mask_rate=config.mask_rate,
                                          seed=config.seed + index)
            run.reseed(config.seed + index)
            model = PretrainingModel(model_config, seed=config.seed, nsp=False)
            if previous is not None:
                load_weights(model, read_tensors(previous), source=str(previous))
            phase = {"phase": index, "of": len(plans)} if config.phases else {}
            run.fit(model, mlm_loss, examples, train_config, collate_fn=stack_examples,
                    resume=resume and resumable(train_config.out_dir), tokenizer_files=(tokenizer.path,),
                    run_info={"text_mlm": dataclasses.asdict(config), "train_tokens": len(stream), **phase})
            previous = finished
        if model is None:  # every phase finished before an interruption
            model = PretrainingModel(plans[-1][1], seed=config.seed, nsp=False)
            load_weights(model, read_tensors(previous), source=str(previous))
            model.to(run.device)
        if config.phases:
            if run.is_main:  # the last phase's model is the run's
                save_checkpoint(model, Path(config.train.out_dir) / "model", tokenizer_files=(tokenizer.path,))
            config = phased
        if run.is_main and config.validation_files and config.eval_examples:
            heldout = PackedTextExamples(pack_documents(tokenizer, read_documents(config.validation_files,
                                                                                  text_field=config.text_field)),
                                         tokenizer, max_length=config.max_length, mask_rate=config.mask_rate,
                                         seed=config.eval_seed, shuffle=False)
            report = evaluate_mlm(model, heldout, char_lengths=tokenizer.char_lengths(),
                                  unigram=unigram_log_probs(stream, tokenizer.vocab_size, tokenizer.special_ids),
                                  num_examples=config.eval_examples, batch_size=config.eval_batch_size,
                                  device=run.device)
            write_json_atomic(Path(config.train.out_dir) / "report.json", report)
            print(format_mlm_report(report))
    return report


load_config = TextMLMConfig.load  # a text MLM YAML (the keys of `TextMLMConfig`) with `key.sub=value` overrides
