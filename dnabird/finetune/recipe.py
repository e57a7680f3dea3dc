"""The fine-tuning recipe (`finetune(task, config)`, `task` a `dnabird.finetune.task.Task`, which imports this
module, never the reverse): a task's data + a pretrained (or fresh) encoder -> `train(...)` validating every N
steps -> the best validation model, evaluated once on test by `task.report`. Outputs in `train.out_dir`:
`model/` (with its tokenizer and `task.json`), `report.json`, `metrics.jsonl`, `learning_curve.png`, the task's
plots, `checkpoints/`, and its data files.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
from pathlib import Path

import numpy as np
import torch

from dnabird.data.tokenizer import load_tokenizer
from dnabird.data.tokenizer_base import DnaTokenizer
from dnabird.errors import CheckpointError, reject
from dnabird.finetune.baselines import Baseline
from dnabird.finetune.chance import chance_warning
from dnabird.finetune.config import FROM_SCRATCH, FinetuneConfig
from dnabird.finetune.data import LossSpec, TaskData, collate
from dnabird.finetune.evaluate import Scoring, Selection, classifier_forward, predict, score
from dnabird.finetune.metrics import selection_metric
from dnabird.finetune.report import (
    MODEL_ROW,
    binary_rows,
    format_table,
    length_summary,
    multiclass_rows,
    multilabel_rows,
    plot_curves,
    regression_rows,
    token_count_features,
)
from dnabird.io import write_json_atomic
from dnabird.model.checkpoint import load_encoder_for_finetuning, read_config, read_tokenizer
from dnabird.model.config import CENTRE_POOLINGS, EncoderConfig, build_encoder_config
from dnabird.model.heads import default_loss
from dnabird.model.task_spec import REGRESSION
from dnabird.provenance import versions
from dnabird.train import LossOutput
from dnabird.train.recipe import recipe_run

log = logging.getLogger(__name__)
VALIDATION_KEYS = ("loss", "accuracy", "f1", "auroc", "auprc", "mcc", "macro_f1", "macro_auroc", "median_auroc",
                   "median_auprc", "pearson", "spearman", "r2", "mse")


def resolve_tokenizer(config: FinetuneConfig, tokenizer_class=None):
    """The data's tokenizer; with a pretrained checkpoint it must be the one the checkpoint was trained with.
    `tokenizer_class`: a task's own tokenizer class (None: the DNA tokenizers, `load_tokenizer`)."""
    load = load_tokenizer if tokenizer_class is None else tokenizer_class.load
    reject(config.pretrained is None, "pretrained", None,
           f"a checkpoint directory, or {FROM_SCRATCH!r} to train from scratch")
    if config.pretrained == FROM_SCRATCH:
        reject(config.tokenizer is None, "tokenizer", None,
               "a tokenizer path (.model or tokenizer.json) when training from scratch")
        return load(config.tokenizer)
    pretrained = read_tokenizer(config.pretrained, tokenizer_class)
    if config.tokenizer is not None:
        given = load(config.tokenizer)
        if given.hash != pretrained.hash:
            raise CheckpointError(f"{config.pretrained} was pretrained with tokenizer {pretrained.path} "
                                  f"(sha256 {pretrained.hash}), but the data is encoded with {given.path} "
                                  f"(sha256 {given.hash}); use the checkpoint's tokenizer")
    return pretrained


def head_settings(config: FinetuneConfig) -> dict:
    """The encoder fields a fine-tuning config sets over its base (the checkpoint's config, or the preset):
    the dropouts and the pooling. Naming a pooling resets the base's widths of another pooling unless the config
    names them too: `local_max_tokens` to 0, and `pool_tokens` to 0 for a pooling that is not a centre one."""
    names = ("dropout", "attention_dropout", "pooling", "pool_tokens", "local_max_tokens")
    settings = {name: getattr(config, name) for name in names if getattr(config, name) is not None}
    if config.pooling is None:
        return settings
    resets = {"local_max_tokens": 0} if config.pooling in CENTRE_POOLINGS else {"local_max_tokens": 0, "pool_tokens": 0}
    return {**resets, **settings}


def encoder_config(config: FinetuneConfig, tokenizer: DnaTokenizer | None = None, task_overrides=None) -> EncoderConfig:
    """The `EncoderConfig` fine-tuned (`build_encoder_config`): from scratch the preset with `model_overrides` and
    the tokenizer's vocabulary size; from a checkpoint its config with `model_overrides`' `attention` only (a
    pretrained encoder's weights fit any pattern, as Longformer's start from RoBERTa's; its other settings are
    the checkpoint's, and a differing one is logged as ignored); then the head's settings (`head_settings`), then
    the fields the task changes (`task_overrides(config) -> dict`, a task module's `encoder_overrides`, e.g.
    global attention at [CLS] for a Longformer pattern)."""
    head = head_settings(config)
    if config.pretrained == FROM_SCRATCH:
        vocab = {} if tokenizer is None else {"vocab_size": tokenizer.vocab_size}
        return build_encoder_config(config.model, config.model_overrides, adjust=task_overrides, **vocab, **head)
    stored = read_config(config.pretrained)
    stored_settings = stored.to_dict()
    ignored = sorted(key for key, value in config.model_overrides.items()
                     if key != "attention" and stored_settings.get(key) != value)
    if ignored:
        log.warning("%s: model_overrides %s ignored: a pretrained encoder keeps its own (only attention applies)",
                    config.pretrained, ", ".join(ignored))
    attention = {"attention": config.model_overrides["attention"]} if "attention" in config.model_overrides else {}
    return build_encoder_config(stored, attention, where=f"{config.pretrained} with the fine-tuning settings",
                                adjust=task_overrides, **head)


def build_model(config: FinetuneConfig, task: TaskData, model_config: EncoderConfig) -> torch.nn.Module:
    """A `SequenceClassifier` for the task: the pretrained encoder with a fresh head, or all fresh
    (`model_config`, from `encoder_config`, is the config either way)."""
    from dnabird.model.heads import SequenceClassifier

    if config.pretrained == FROM_SCRATCH:
        model = SequenceClassifier(model_config, task.spec.num_outputs, problem=task.spec.problem, seed=config.seed)
    else:
        model, _ = load_encoder_for_finetuning(config.pretrained, task.spec, seed=config.seed, config=model_config)
    if config.freeze_encoder:
        model.encoder.requires_grad_(False)
    return model


def classification_loss(problem: str, loss: LossSpec | None = None):
    """The loss function `train` calls: the head's `loss` (None: the problem's default, `LossSpec.default`),
    with the training accuracy of a classification problem."""
    loss = LossSpec(default_loss(problem)) if loss is None else loss

    def loss_fn(model, batch: dict[str, torch.Tensor], step: int) -> LossOutput:
        labels = batch["labels"]
        out = classifier_forward(model, batch, loss, step=step)
        if problem == REGRESSION:
            return LossOutput(out.loss, int(batch["attention_mask"].sum()))
        predicted = out.logits.argmax(-1) if problem == "multiclass" else (out.logits > 0).float()
        correct = (predicted == labels).float().sum()
        return LossOutput(out.loss, int(batch["attention_mask"].sum()),
                          {"accuracy": (correct, torch.tensor(float(labels.numel())))})

    return loss_fn


def finetune(task, config: FinetuneConfig, *, resume: bool = False) -> dict:
    """Fine-tune on `task` (a `Task`; by name: `dnabird.tasks.finetune`), keep the best validation model, report
    it on test (`task.report`). Returns the report (empty on ranks other than 0)."""
    if isinstance(task, str):
        raise TypeError(f"finetune takes a Task; for task {task!r} by name call dnabird.tasks.finetune")
    tokenizer = resolve_tokenizer(config, task.tokenizer)
    model_config = encoder_config(config, tokenizer, task.encoder_overrides)
    data = task.build(config, tokenizer, block_size=model_config.length_multiple, out_dir=Path(config.train.out_dir))
    model_config.check_length(data.spec.eval_length, "eval_length", multiple=False)
    steps = config.train.max_steps if config.epochs is None else \
        math.ceil(config.epochs * len(data.train) / config.train.global_batch_size)
    config.check_schedule(steps)
    train_config = dataclasses.replace(config.train, max_steps=steps)
    spec, problem = data.spec, data.spec.problem
    loss = data.loss_spec(config.positive_weight)
    if data.loss is not None and config.positive_weight != 1:
        log.warning("%s: positive_weight=%s ignored: task %s trains with its own loss %s", train_config.out_dir,
                    config.positive_weight, spec.task, loss)
    report = {}
    with recipe_run(train_config.device, seed=config.seed) as run:
        model = build_model(config, data, model_config)
        selection, history = Selection(selection_metric(problem, config.selection_metric)), []
        options = dict(batch_size=config.eval_batch_size, pad_id=tokenizer.pad_id, loss=loss, device=run.device)

        def validate(net: torch.nn.Module, step: int) -> dict:
            labels, scores, loss_value = predict(net, data.validation, spec, **options)
            metrics = {**score(spec, labels, scores), "loss": loss_value}
            selection.offer(step, metrics, net)
            history.append((step, metrics))
            return {f"val_{k}": metrics[k] for k in VALIDATION_KEYS if metrics.get(k) is not None}

        run.fit(model, classification_loss(problem, loss), data.train, train_config,
                collate_fn=functools.partial(collate, pad_id=tokenizer.pad_id, class_labels=problem == "multiclass"),
                resume=resume, run_info={"finetune": dataclasses.asdict(config), "task": spec.to_dict(),
                                         "loss": dataclasses.asdict(loss)},
                tokenizer_files=tokenizer.files, task=spec, validate=validate, selection=selection)
        if run.is_main:
            warning = chance_warning(history, data.validation.labels, problem, train_config.warmup_steps)
            if warning is not None:
                log.warning("%s: %s", train_config.out_dir, warning["message"])
            scoring = Scoring(lambda examples: predict(model, examples, spec, **options), tokenizer.pad_id)
            report = write_report(task.report(data, config, scoring), data, config, selection, warning, loss)
    return report


def classification_report(data: TaskData, config: FinetuneConfig, scoring: Scoring) -> dict:
    """`Task.report` of any problem: the model beside its baselines (the task's `baseline_features` and the token
    count; a regression's in the user's scale) with bootstrap intervals, and the token lengths (per class of a
    binary or multi-class problem); roc.png and pr.png for a binary one."""
    spec, labels_train = data.spec, data.train.labels
    labels, scores, loss = scoring.predict(data.test)
    train_counts, test_counts = token_count_features(data.train, data.test, scoring.pad_id)
    counts = Baseline(train_counts, test_counts, "ridge" if spec.problem == REGRESSION else "logistic")
    baselines = {**data.baseline_features, "token count": counts}
    options = dict(groups=data.test_groups, resamples=config.bootstrap_resamples, seed=config.seed)
    names = {0: "all"}
    if spec.problem == "binary":
        rows, row_scores = binary_rows(labels, scores, baselines, labels_train, **options)
        plot_curves(labels, row_scores, Path(config.train.out_dir))
        names = {1: spec.labels[0], 0: "negative"}
    elif spec.problem == "multiclass":
        rows = multiclass_rows(labels, scores, baselines, labels_train, spec.labels, **options)
        names = dict(enumerate(spec.labels))
    elif spec.problem == REGRESSION:
        rows = regression_rows(spec, labels, scores, baselines, labels_train, **options)
    else:
        groups = {"all labels": list(spec.labels), **spec.label_groups}
        row_scores = {MODEL_ROW: scores, **{f"{name} baseline": baseline.scores(labels_train, seed=config.seed)
                                            for name, baseline in baselines.items()}}
        rows = multilabel_rows(labels, row_scores, spec.labels, groups, clusters=data.test_groups,
                               resamples=config.bootstrap_resamples, seed=config.seed)
    by_class = len(names) > 1   # token lengths per class, or of all examples as one
    lengths = {split: length_summary(counts[:, 0], np.asarray(y) if by_class else np.zeros(len(y)), names)
               for split, counts, y in (("train", train_counts, labels_train), ("test", test_counts, labels))}
    return {"test": {"loss": loss, "rows": rows}, "token_lengths": lengths}


def write_report(section: dict, data: TaskData, config: FinetuneConfig, selection: Selection,
                 chance: dict | None = None, loss: LossSpec | None = None) -> dict:
    """report.json: the task's test `section` (`Task.report`) titled, with the data summary, the selection,
    the loss trained, the config and versions; prints the table. `chance`: the run's `chance_warning`, if any
    (`warnings`)."""
    test = section["test"]
    pretrained = "from scratch" if config.pretrained == FROM_SCRATCH else "pretrained"
    test["title"] = (f"{data.spec.task}: test split, {len(data.test)} examples, {pretrained} model selected at step "
                     f"{selection.step} by validation {selection.metric} = "
                     f"{'n/a' if selection.value is None else round(selection.value, 4)}")
    report = {"task": data.spec.to_dict(), "test": test, "token_lengths": section["token_lengths"],
              "data": data.summary, "selection": {"metric": selection.metric, "step": selection.step,
                                                  "value": selection.value, "validation": selection.metrics},
              "loss": dataclasses.asdict(loss or data.loss_spec(config.positive_weight)),
              "config": dataclasses.asdict(config), "versions": versions(), "seed": config.seed,
              "warnings": [] if chance is None else [chance]}
    write_json_atomic(Path(config.train.out_dir) / "report.json", report)
    print(format_table(report))
    return report
