"""Held-out evaluation of a pretrained model: MLM accuracy, NSP accuracy and bits per base, beside the
baselines that could fake it (docs/pretraining.md): a unigram model of the training tokens, order-1…6 Markov
chains over the training bases (`dnabird.pretraining.markov`) and the model with its context cut to one
sentence; each also at the positions shown as [MASK] only (`at_mask`: BERT leaves 10 % unchanged).

Bits per base = Σ −log₂ p(true token) over the masked positions ÷ Σ bp length of those tokens (the paper's
1.12 / 1.23 use an undocumented definition over BPE tokens: context only, not a target).
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from dnabird.data.pretraining import PretrainingExamples, collate
from dnabird.errors import reject
from dnabird.io import write_json_atomic
from dnabird.labels import IGNORE_INDEX
from dnabird.pretraining.markov import MarkovBaseline, piece_table, sampled_sentences
from dnabird.progress import progress_bar

MARKOV_ORDERS = (1, 2, 3, 4, 5, 6)
MARKOV = tuple(f"markov_{k}" for k in MARKOV_ORDERS)
BASELINES = ("unigram", "one_sentence", *MARKOV)
# `heldout_report` keyword -> the `PretrainConfig` field (and run.json key) its value comes from
EVAL_SETTINGS = {"train_shards": "train_shards", "max_length": "max_length", "mask_rate": "mask_rate",
                 "num_examples": "eval_examples", "batch_size": "eval_batch_size", "seed": "eval_seed"}
log = logging.getLogger(__name__)


def token_bp_lengths(tokenizer) -> np.ndarray:
    """Base pairs spelled by each token id (0 for the tokenizer's special ids)."""
    return piece_table(tokenizer)[1]


def unigram_log_probs(tokens: np.ndarray | Iterable[np.ndarray], vocab_size: int, special_ids=(), *,
                      bits: bool = False) -> np.ndarray:
    """log p(token) (log₂ with `bits`) from the counts of the ids in `tokens` (one array or several),
    add-one smoothed over the ids not in `special_ids`; special ids get -inf. The unigram baseline of
    every masked-LM and character-LM report."""
    counts = np.zeros(vocab_size)
    for array in [tokens] if isinstance(tokens, np.ndarray) else tokens:
        counts += np.bincount(array, minlength=vocab_size)[:vocab_size]
    counts += 1.0
    counts[sorted(special_ids)] = 0.0
    with np.errstate(divide="ignore"):
        return (np.log2 if bits else np.log)(counts / counts.sum())


class _Tally:
    """Running sums of one scorer's masked-token statistics."""

    def __init__(self):
        self.bits = self.bp = self.nats = 0.0
        self.correct = self.count = self.nsp_correct = self.nsp_count = 0

    predicted = False

    def add(self, log_probs: torch.Tensor, labels: torch.Tensor, token_bp: torch.Tensor) -> None:
        """Natural-log probabilities at N masked positions whose true ids are labels [N]: [N, V] over the
        vocabulary (the argmax counted as a prediction), or [N] of the true ids alone (no prediction)."""
        predicted = log_probs.dim() == 2
        true = (log_probs.gather(1, labels[:, None]).squeeze(1) if predicted else log_probs).double()
        self.nats -= float(true.sum())
        self.bits -= float(true.sum()) / math.log(2)
        self.bp += float(token_bp[labels].sum())
        self.count += len(labels)
        if predicted:
            self.correct += int((log_probs.argmax(-1) == labels).sum())
            self.predicted = True

    def summary(self) -> dict:
        count = max(self.count, 1)
        report = {"mlm_loss": self.nats / count, "bits_per_base": self.bits / max(self.bp, 1e-9),
                  "masked_tokens": self.count}
        if self.predicted:
            report["mlm_accuracy"] = self.correct / count
        if self.nsp_count:
            report["nsp_accuracy"] = self.nsp_correct / self.nsp_count
        return report


def one_sentence_batch(batch: dict[str, torch.Tensor], examples: PretrainingExamples) -> dict[str, torch.Tensor]:
    """Each sentence of each example on its own, `[CLS] sentence [SEP]`, with the example's masking (block size
    and special ids those of `examples`)."""
    rows = []
    for ids, labels, sentence in zip(batch["input_ids"], batch["mlm_labels"], batch["sentence_index"],
                                     strict=True):
        for s in torch.unique(sentence[sentence >= 0]).tolist():
            keep = sentence == s
            if (labels[keep] != IGNORE_INDEX).any():
                rows.append((ids[keep], labels[keep]))
    block_size, pad_id = examples.block_size, examples.pad_id
    length = -(-max(len(ids) + 2 for ids, _ in rows) // block_size) * block_size
    out = {"input_ids": torch.full((len(rows), length), pad_id),
           "mlm_labels": torch.full((len(rows), length), IGNORE_INDEX)}
    for row, (ids, labels) in enumerate(rows):
        out["input_ids"][row, : len(ids) + 2] = torch.cat([torch.tensor([examples.cls_id]), ids,
                                                           torch.tensor([examples.sep_id])])
        out["mlm_labels"][row, 1: len(ids) + 1] = labels
    out["attention_mask"] = out["input_ids"] != pad_id
    out["token_type_ids"] = torch.zeros_like(out["input_ids"])
    return out


def _masked_log_probs(model, batch: dict, device, with_nsp: bool, mask_id: int):
    """log p [N, V] at the N selected positions, their true ids, whether the input shows [MASK] there,
    the NSP logits and the batch on `device`."""
    batch = {k: v.to(device) for k, v in batch.items()}
    out = model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"],
                mlm_labels=batch["mlm_labels"], nsp_labels=batch["nsp_label"] if with_nsp else None)
    selected = batch["mlm_labels"] != IGNORE_INDEX
    shown_mask = batch["input_ids"][selected] == mask_id
    return F.log_softmax(out.mlm_logits.float(), dim=-1), batch["mlm_labels"][selected], shown_mask, \
        out.nsp_logits, batch


def markov_log_probs(markov: MarkovBaseline, batch: dict) -> dict[str, torch.Tensor]:
    """Per Markov order, natural-log probabilities of the selected tokens of `batch`, in the order of
    `batch["mlm_labels"][selected]` (row-major), each token's bases scored given the true bases before."""
    labels = batch["mlm_labels"].cpu()
    selected = labels != IGNORE_INDEX
    true_ids = torch.where(selected, labels, batch["input_ids"].cpu())
    rows = [markov.log2_probs(ids.numpy(), keep.numpy()) for ids, keep in zip(true_ids, selected, strict=True)]
    return {f"markov_{k}": torch.from_numpy(np.concatenate([row[k] for row in rows]) * math.log(2))
            for k in MARKOV_ORDERS}


@torch.no_grad()
def evaluate_heldout(model: torch.nn.Module, examples: PretrainingExamples, *, token_bp: np.ndarray,
                     unigram: np.ndarray | None = None, markov: MarkovBaseline | None = None,
                     num_examples: int = 256, batch_size: int = 8, one_sentence: bool = True,
                     device: str | torch.device = "cpu") -> dict:
    """Score `num_examples` held-out examples (indices 0…n−1, a fixed masking) with the model and baselines.

    Returns {"model": …, "unigram": …, "markov_1" … "markov_6": …, "one_sentence": …, "at_mask": {the same at
    the positions shown as [MASK]}, "mask_rate", "max_length", "examples"}.
    """
    model.eval().to(device)
    nsp = model.nsp is not None  # an imported MLM-only model has no NSP head
    bp = torch.as_tensor(token_bp, device=device)
    tallies = {name: _Tally() for name in ("model", *BASELINES)}
    at_mask = {name: _Tally() for name in tallies}
    uni = None if unigram is None else torch.as_tensor(unigram, dtype=torch.float32, device=device)

    def add(name, log_probs, labels, shown_mask):
        tallies[name].add(log_probs, labels, bp)
        at_mask[name].add(log_probs[shown_mask], labels[shown_mask], bp)

    batches = (collate([examples[i] for i in range(start, min(num_examples, start + batch_size))],
                       pad_id=examples.pad_id) for start in range(0, num_examples, batch_size))
    for batch in progress_bar(batches, total=-(-num_examples // batch_size), desc="evaluate", unit="batch"):
        log_probs, labels, shown_mask, nsp_logits, batch = _masked_log_probs(model, batch, device, with_nsp=nsp,
                                                                             mask_id=examples.mask_id)
        add("model", log_probs, labels, shown_mask)
        if nsp:
            tallies["model"].nsp_correct += int((nsp_logits.argmax(-1) == batch["nsp_label"]).sum())
            tallies["model"].nsp_count += len(batch["nsp_label"])
        if uni is not None:
            add("unigram", uni.expand(len(labels), -1), labels, shown_mask)
        if markov is not None:
            for name, true in markov_log_probs(markov, batch).items():
                add(name, true.to(device), labels, shown_mask)
        if one_sentence:
            cut = one_sentence_batch({k: v.cpu() for k, v in batch.items()}, examples)
            add("one_sentence", *_masked_log_probs(model, cut, device, with_nsp=False, mask_id=examples.mask_id)[:3])
    report = {name: t.summary() for name, t in tallies.items() if t.count}
    report["at_mask"] = {name: t.summary() for name, t in at_mask.items() if t.count}
    report.update(mask_rate=examples.mask_rate, max_length=examples.max_length, examples=num_examples)
    return report


def heldout_report(model: torch.nn.Module, tokenizer, heldout_shards, *, train_shards=None,
                   max_length: int = 4096, mask_rate: float = 0.15, num_examples: int = 256,
                   batch_size: int = 8, seed: int = 1234, device: str | torch.device = "cpu") -> dict:
    """`evaluate_heldout` on shards (the unigram baseline when `train_shards` is given), plus
    `margin_bits_per_base`: per baseline, how far the model's bits per base is below it."""
    from dnabird.data.shards import ShardReader
    from dnabird.model.encoder import attention_density

    block_size = model.config.length_multiple
    examples = PretrainingExamples(ShardReader(heldout_shards), tokenizer=tokenizer,
                                   max_length=max_length, block_size=block_size, mask_rate=mask_rate, seed=seed)
    unigram = markov = None
    if train_shards is not None:
        unigram = unigram_log_probs(sampled_sentences(ShardReader(train_shards)), tokenizer.vocab_size,
                                    tokenizer.special_ids)
        markov = MarkovBaseline.fit(ShardReader(train_shards), tokenizer, max_order=max(MARKOV_ORDERS))
    report = evaluate_heldout(model, examples, token_bp=token_bp_lengths(tokenizer), unigram=unigram,
                              markov=markov, num_examples=num_examples, batch_size=batch_size, device=device)
    for where in (report, report["at_mask"]):
        where["margin_bits_per_base"] = {b: where[b]["bits_per_base"] - where["model"]["bits_per_base"]
                                         for b in BASELINES if b in where}
    report["attention"] = {"pattern": model.config.pattern().to_dict(),
                           "density": attention_density(model.config, max_length)}
    return report


def recorded_evaluation(checkpoint: str | os.PathLike) -> dict:
    """The held-out evaluation settings of the pretraining run that wrote `checkpoint` (`OUT/model` or
    `OUT/checkpoints/step_N/model`), read from `OUT/run.json`: `heldout_report`'s keyword arguments plus
    `heldout_shards`. Empty when no such record is found."""
    for folder in list(Path(os.path.abspath(checkpoint)).parents)[:3]:
        try:
            run = json.loads((folder / "run.json").read_text()).get("pretrain")
        except (OSError, ValueError):
            continue
        if run:
            log.info("evaluation settings of the pretraining run %s", folder / "run.json")
            return {"heldout_shards": run["heldout_shards"], **{k: run[v] for k, v in EVAL_SETTINGS.items()}}
    return {}


def evaluate_checkpoint(checkpoint: str | os.PathLike, heldout_shards=None, *, out=None, device: str = "auto",
                        **options) -> dict:
    """`heldout_report` of a pretrained model directory (with its tokenizer: a `.model` file or `tokenizer.json`).
    Settings left out (None or not given) are the pretraining run's (`recorded_evaluation`), so the report
    reproduces its `report.json`; without a record, `heldout_report`'s defaults (and `heldout_shards` is required).
    """
    from dnabird.model.checkpoint import load_checkpoint, read_tokenizer
    from dnabird.train.distributed import resolve_device

    device = resolve_device(device)
    model = load_checkpoint(checkpoint)  # a missing directory or file is named first
    tokenizer = read_tokenizer(checkpoint)
    given = {"heldout_shards": heldout_shards, **options}
    settings = {**recorded_evaluation(checkpoint), **{k: v for k, v in given.items() if v is not None}}
    reject(settings.get("heldout_shards") is None, "heldout_shards", None,
           f"a path (--shards): no pretraining run record beside {checkpoint} names the held-out shards")
    report = heldout_report(model, tokenizer, settings.pop("heldout_shards"), device=device, **settings)
    if out is not None:
        write_json_atomic(out, report)
    return report


def _cell(row: dict, key: str) -> str:
    return f"{row[key]:>9.3f}" if key in row else f"{'—':>9}"


def format_report(report: dict) -> str:
    """A small table: one row per scorer, with the masking rate, sequence length and attention density stated."""
    at_mask = report.get("at_mask", {})
    lines = [f"held-out: {report['examples']} examples of {report['max_length']} tokens, "
             f"{report['mask_rate']:.0%} of tokens selected (80 % shown as [MASK], 10 % random, 10 % unchanged)"]
    if "attention" in report:
        pattern = {k: v for k, v in report["attention"]["pattern"].items() if k != "num_heads"}
        lines.append(f"attention {pattern}: density {report['attention']['density']:.2f} "
                     f"(share of query-key pairs computed at {report['max_length']} tokens)")
    lines.append(f"{'':<14}{'MLM acc':>9}{'bits/bp':>9}{'NSP acc':>9}   at [MASK] only: {'MLM acc':>9}{'bits/bp':>9}")
    for name in ("model", "one_sentence", "unigram", *MARKOV):
        if name in report:
            row = report[name]
            line = f"{name:<14}{_cell(row, 'mlm_accuracy')}{_cell(row, 'bits_per_base')}{_cell(row, 'nsp_accuracy')}"
            if name in at_mask:
                line += f"{'':>19}{_cell(at_mask[name], 'mlm_accuracy')}{_cell(at_mask[name], 'bits_per_base')}"
            lines.append(line)
    margins = report.get("margin_bits_per_base", {})
    markov = [b for b in MARKOV if b in margins]
    shown = [b for b in margins if b not in MARKOV]
    if markov:  # the best chain stands for all of them
        shown.append(min(markov, key=lambda b: at_mask.get(b, report[b])["bits_per_base"]))
    for baseline in shown:
        line = f"model vs {baseline}: {margins[baseline]:+.3f} bits per base lower"
        if baseline in at_mask.get("margin_bits_per_base", {}):
            line += f" ({at_mask['margin_bits_per_base'][baseline]:+.3f} at [MASK] only)"
        lines.append(line)
    lines.append("(paper, different token-level definition, context only: 1.12 BigBird-4096, 1.23 BERT-512)")
    return "\n".join(lines)
