"""The `summarise` task of the fine-tuning recipe (docs/summarisation.md): JSONL pairs {"document", "summary"} →
an encoder-decoder trained by teacher forcing → ROUGE-1/2/L (`rouge-score`) on the test split, with bootstrap
intervals, beside the lead-k baseline on the same documents.

The model is a pretrained encoder-decoder checkpoint with its own tokenizer, or one built here (`pretrained:
none`: the encoder preset `model` with `model_overrides`, the decoder's `decoder` settings). A document is its
first `data.max_length` tokens with the tokenizer's special tokens, a summary its first `data.max_summary_length`;
training batches are padded to their longest document (a block multiple). The validation ROUGE-L of greedy
summaries of the first `validation_documents` documents, every `train.eval_every` steps, selects the model kept.
Outputs in `train.out_dir`: `model/`, `report.json`, `predictions.jsonl`, `metrics.jsonl`, `checkpoints/`.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import torch

from dnabird.config import RecipeConfig
from dnabird.data.text import read_jsonl
from dnabird.errors import InputFormatError, ParameterError, reject, require_paths
from dnabird.finetune.config import FROM_SCRATCH
from dnabird.finetune.data import EpochExamples
from dnabird.finetune.evaluate import Selection
from dnabird.finetune.report import MODEL_ROW, _value
from dnabird.finetune.task import Task
from dnabird.io import write_json_atomic, write_text_atomic
from dnabird.labels import IGNORE_INDEX
from dnabird.model.generation import GenerationSettings
from dnabird.text.rouge import ROUGE_TYPES, lead, rouge_report
from dnabird.text.summarisation import Summariser, encode_documents, pad_batch, template
from dnabird.text.training import model_rows
from dnabird.train import LossOutput, TrainConfig
from dnabird.train.recipe import recipe_run

NAME = "summarise"
SPLITS = ("train", "validation", "test")


@dataclass
class SummaryData:
    """The splits and how each pair becomes model inputs.

    train, validation, test: JSONL files of {document_field, summary_field} records.
    max_length: encoder tokens per document with its special tokens (longer documents keep their first
        tokens; a multiple of the attention block size); max_summary_length: decoder tokens per summary.
    lead_sentences: k of the lead-k baseline.
    """

    train: str | None = None
    validation: str | None = None
    test: str | None = None
    document_field: str = "document"
    summary_field: str = "summary"
    max_length: int = 4096
    max_summary_length: int = 64
    lead_sentences: int = 3

    def __post_init__(self):
        for name in ("max_length", "max_summary_length", "lead_sentences"):
            reject(getattr(self, name) < 1, f"data.{name}", getattr(self, name), "a positive integer")


@dataclass
class SummariseConfig(RecipeConfig):
    """Settings of one summarisation run (the keys of a `--config` YAML or a pipeline section's model).

    data: `SummaryData`. pretrained: an encoder-decoder checkpoint directory, or "none" to train from scratch.
    tokenizer: a sentencepiece `.model` for a model trained from scratch (a checkpoint brings its own).
    model, model_overrides: the encoder from scratch (a preset and `EncoderConfig` fields over it).
    decoder: the decoder from scratch (`Seq2SeqConfig` keys: decoder_layers, decoder_heads,
        decoder_intermediate_size, max_decoder_positions).
    generation: num_beams, length_penalty, max_length (tokens generated), as `GenerationSettings`.
    validation_documents: validation documents summarised at each evaluation (ROUGE-L selects the model).
    eval_batch_size, bootstrap_resamples, seed; train: the loop's `TrainConfig` (set warmup_steps).
    """

    data: SummaryData = field(default_factory=SummaryData)
    pretrained: str = FROM_SCRATCH
    tokenizer: str | None = None
    model: str = "tiny"
    model_overrides: dict = field(default_factory=dict)
    decoder: dict = field(default_factory=dict)
    generation: dict = field(default_factory=dict)
    validation_documents: int = 64
    eval_batch_size: int = 8
    bootstrap_resamples: int = 1000
    seed: int = 0
    train: TrainConfig = field(default_factory=lambda: TrainConfig(out_dir="runs/summarise", warmup_steps=20))

    def __post_init__(self):
        self.generation_settings()  # fails here, when the config loads
        if self.pretrained == FROM_SCRATCH:
            from dnabird.model.config import build_encoder_config

            build_encoder_config(self.model, {**self.model_overrides, "pooling": "mean"})

    def generation_settings(self) -> GenerationSettings:
        try:
            return GenerationSettings(**self.generation)
        except TypeError as err:
            raise ParameterError("generation", self.generation,
                                 "keys among num_beams, length_penalty, max_length, use_cache") from err



def read_pairs(path: str | os.PathLike, document_field: str, summary_field: str) -> tuple[list[str], list[str]]:
    """Documents and summaries of a JSONL file; a malformed or empty record is an error naming its line."""
    documents, summaries = [], []
    path = Path(path)
    if not path.is_file():
        raise InputFormatError("summarisation data file not found", path=path)
    for number, record in read_jsonl(path):
        if document_field not in record or summary_field not in record:
            raise InputFormatError(f"expected a JSON object with {document_field!r} and {summary_field!r} "
                                   f"(keys: {sorted(record)[:8]})", path=path, line=number)
        document = record[document_field]
        if not isinstance(document, str) or not document.strip():
            raise InputFormatError(f"empty {document_field!r}: nothing to summarise", path=path, line=number)
        documents.append(document)
        summaries.append(str(record[summary_field]))
    if not documents:
        raise InputFormatError("no records", path=path)
    return documents, summaries


class PairExamples(EpochExamples):
    """Encoded (document, summary) pairs: the encoder's ids and the decoder's input and target ids."""

    def __init__(self, sources: list[list[int]], targets: list[list[int]], start_id: int, *, seed: int = 0,
                 shuffle: bool = False):
        super().__init__(np.zeros(len(sources)), seed=seed, shuffle=shuffle)
        self.sources, self.targets, self.start_id = sources, targets, start_id

    def example(self, index: int, epoch: int) -> dict:
        target = self.targets[index]
        return {"input_ids": self.sources[index], "decoder_input_ids": [self.start_id, *target[:-1]],
                "labels": target}


def collate_pairs(examples: list[dict], *, pad_id: int, multiple: int) -> dict[str, torch.Tensor]:
    """Pad documents to the longest (a `multiple`), summaries to the longest (labels with IGNORE_INDEX)."""
    ids, mask = pad_batch([e["input_ids"] for e in examples], pad_id, multiple)
    decoder_ids, _ = pad_batch([e["decoder_input_ids"] for e in examples], pad_id)  # as long as the labels
    labels, _ = pad_batch([e["labels"] for e in examples], IGNORE_INDEX)
    return {"input_ids": ids, "attention_mask": mask, "decoder_input_ids": decoder_ids, "labels": labels}


def teacher_forcing_loss(model, batch: dict[str, torch.Tensor], step: int) -> LossOutput:
    out = model(batch["input_ids"], batch["attention_mask"], decoder_input_ids=batch["decoder_input_ids"],
                labels=batch["labels"], step=step)
    predicted = out.logits.argmax(-1)
    scored = batch["labels"] != IGNORE_INDEX
    correct = ((predicted == batch["labels"]) & scored).sum().float()
    return LossOutput(out.loss, int(batch["attention_mask"].sum()),
                      {"token_accuracy": (correct, scored.sum().float())})


def build_model(config: SummariseConfig, tokenizer):
    """The pretrained encoder-decoder (with `model_overrides.attention`, if set, as its encoder's pattern; other
    overrides shape a model from scratch only), or a fresh one whose special ids come from `tokenizer`."""
    from dnabird.model.config import build_encoder_config
    from dnabird.model.seq2seq import EncoderDecoder, Seq2SeqConfig, load_seq2seq

    if config.pretrained != FROM_SCRATCH:
        return load_seq2seq(config.pretrained, attention=config.model_overrides.get("attention"))
    encoder = build_encoder_config(config.model, {**config.model_overrides, "pooling": "mean"},
                                   where="model_overrides", vocab_size=tokenizer.vocab_size,
                                   pad_token_id=tokenizer.pad_id)
    settings = {**config.decoder, "decoder_start_token_id": tokenizer.pad_id,
                "eos_token_id": template(tokenizer)[1][-1]}
    return EncoderDecoder(Seq2SeqConfig.from_dict({"encoder": encoder.to_dict(), **settings},
                                                  source="decoder"), seed=config.seed)


def resolve_tokenizer(config: SummariseConfig):
    from dnabird.data.text_tokenizer import TextTokenizer
    from dnabird.text.summarisation import load_tokenizer

    if config.pretrained != FROM_SCRATCH:
        return load_tokenizer(config.pretrained)
    reject(config.tokenizer is None, "tokenizer", None, "a sentencepiece .model path when training from scratch")
    return TextTokenizer.load(config.tokenizer)


def encode_split(config: SummariseConfig, tokenizer, split: str):
    """(documents, summaries, encoded documents, target ids) of one split."""
    require_paths(config, [f"data.{split}"], "a JSONL file")
    data = config.data
    path = getattr(data, split)
    documents, summaries = read_pairs(path, data.document_field, data.summary_field)
    names = [f"{path} record {i + 1}" for i in range(len(documents))]
    encoded = encode_documents(tokenizer, documents, max_length=data.max_length, names=names)
    prefix, suffix = template(tokenizer)
    room = data.max_summary_length - len(prefix) - len(suffix)
    targets = [[*prefix, *ids[:room], *suffix] for ids in tokenizer.encode(summaries)]
    return documents, summaries, encoded, targets


def finetune(config: SummariseConfig, *, resume: bool = False) -> dict:
    """Train, keep the best validation model, report ROUGE on test beside lead-k. Returns the report."""
    tokenizer = resolve_tokenizer(config)
    splits = {split: encode_split(config, tokenizer, split) for split in SPLITS}
    reject(config.train.warmup_steps >= config.train.max_steps, "train.warmup_steps", config.train.warmup_steps,
           f"fewer than the run's {config.train.max_steps} steps")
    report = {}
    with recipe_run(config.train.device, seed=config.seed) as run:
        model = build_model(config, tokenizer)
        encoder = model.config.encoder
        encoder.check_length(config.data.max_length, "data.max_length")
        _, _, encoded, targets = splits["train"]
        train_examples = PairExamples(encoded.ids, targets, model.config.decoder_start_token_id, seed=config.seed,
                                      shuffle=True)
        summariser = partial(Summariser, tokenizer=tokenizer, settings=config.generation_settings(),
                             max_length=config.data.max_length, batch_size=config.eval_batch_size, device=run.device)
        selection = Selection("rougeL")
        documents, references, valid_encoded, _ = splits["validation"]
        shown = slice(0, config.validation_documents)

        def validate(net, step: int) -> dict:
            predictions = summariser(net).summarise(
                documents[shown], encoded=dataclasses.replace(valid_encoded, ids=valid_encoded.ids[shown]))
            scores = rouge_report(predictions, references[shown], resamples=1)
            scores = {name: scores[name] for name in ROUGE_TYPES}
            selection.offer(step, scores, net)
            net.train()
            return {f"val_{name}": value for name, value in scores.items()}

        run.fit(model, teacher_forcing_loss, train_examples, config.train, resume=resume,
                collate_fn=partial(collate_pairs, pad_id=tokenizer.pad_id, multiple=encoder.length_multiple),
                run_info={"summarise": dataclasses.asdict(config)}, tokenizer_files=(tokenizer.path,),
                validate=validate, selection=selection)
        if run.is_main:
            report = report_on_test(summariser(model), splits, config, selection)
    return report


def report_on_test(summariser: Summariser, splits: dict, config: SummariseConfig, selection: Selection) -> dict:
    """ROUGE of the model's test summaries and of lead-k, with intervals; report.json, predictions.jsonl."""
    from dnabird.provenance import versions

    out_dir = Path(config.train.out_dir)
    documents, references, encoded, _ = splits["test"]
    predictions = summariser.summarise(documents, encoded=encoded)
    k = config.data.lead_sentences
    options = dict(resamples=config.bootstrap_resamples, seed=config.seed)
    rows = {MODEL_ROW: rouge_report(predictions, references, **options),
            f"lead-{k} baseline": rouge_report([lead(d, k) for d in documents], references, **options)}
    report = {"task": NAME, "test": {"rows": rows, "documents": len(documents),
                                     "truncated_documents": encoded.truncated, "tokens_cut": sum(encoded.cut)},
              "selection": {"metric": selection.metric, "step": selection.step, "value": selection.value,
                            "validation": selection.metrics},
              "config": dataclasses.asdict(config), "versions": versions(), "seed": config.seed}
    write_json_atomic(out_dir / "report.json", report)
    write_text_atomic(out_dir / "predictions.jsonl", "".join(
        json.dumps({"summary": p, "reference": r}) + "\n" for p, r in zip(predictions, references, strict=True)))
    print(rouge_table(rows))
    return report


def results_table(reports: dict[str, dict], seconds: dict[str, float], settings: dict[str, SummariseConfig]) -> str:
    """A Markdown table: each model's test ROUGE-1/2/L (95 % intervals), then the lead-k baseline."""
    lines = ["| model | attention | encoder tokens | selected step | validation ROUGE-L | test ROUGE-1 | "
             "test ROUGE-2 | test ROUGE-L | wall time (s) |", "|---|---|---|---|---|---|---|---|---|"]
    lines += model_rows(reports, seconds, settings, lambda report: report["selection"]["value"], rouge_cells)
    test_sets: dict[str, list[str]] = {}  # test file -> the models scored on it (a warm-up run has its own)
    for name in reports:
        test_sets.setdefault(str(settings[name].data.test), []).append(name)
    for names in test_sets.values():
        label = f" ({', '.join(names)})" if len(test_sets) > 1 else ""
        for scorer, row in reports[names[0]]["test"]["rows"].items():
            if scorer != MODEL_ROW:
                lines.append(f"| {scorer}{label} | — | — | — | — | {rouge_cells(row)} | — |")
    return "\n".join(lines)


def rouge_cells(row: dict) -> str:
    """A report row's ROUGE-1, ROUGE-2 and ROUGE-L Markdown cells (95 % intervals)."""
    return " | ".join(_value(row[name], row["ci95"].get(name)) for name in ROUGE_TYPES)


def rouge_table(rows: dict[str, dict]) -> str:
    """A Markdown table of ROUGE-1/2/L (95 % intervals) per scorer."""
    lines = ["| scorer | ROUGE-1 | ROUGE-2 | ROUGE-L |", "|---|---|---|---|"]
    lines += [f"| {name} | {rouge_cells(row)} |" for name, row in rows.items()]
    return "\n".join(lines)


class Summarise(Task):
    """Summarisation (module docstring): an encoder-decoder with its own training steps (`finetune`); inside
    `dnabird run`, null splits are the `text_data` stage's summaries and a null tokenizer the `text_tokenizer`
    stage's."""

    name, config = NAME, SummariseConfig
    stage_inputs = {**{f"data.{split}": ("text_data", f"summaries_{split}") for split in SPLITS},
                    "tokenizer": ("text_tokenizer", "model")}

    def finetune(self, config: SummariseConfig, *, resume: bool = False) -> dict:
        return finetune(config, resume=resume)

    def table(self, reports: dict, seconds: dict, configs: dict) -> str:
        return results_table(reports, seconds, configs)


TASK = Summarise()
