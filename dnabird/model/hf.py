"""Import (and export) Hugging Face `transformers` BigBird weights, and the name tables, config translation
and loading the other Hugging Face importers share.

Sources are model objects or `save_pretrained` directories (read by `dnabird.model.hf_files`: tensors only,
never code). Imported block-sparse models use transformers' fixed random blocks (`random_mode: hf`, layer i
seeded with i); their outputs equal transformers' but in the cases `block_sparse_differences` states,
logged at import.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors.torch import save_file

from dnabird.attention.random_blocks import PAPER_PLAN_LENGTH
from dnabird.errors import CheckpointError, ConfigError, ParameterError
from dnabird.io import atomic_output, follow_umask, write_json_atomic
from dnabird.model.checkpoint import LoadReport, load_weights
from dnabird.model.config import SPARSE_ATTENTION_DROPOUT, EncoderConfig
from dnabird.model.heads import PretrainingModel, SequenceClassifier
from dnabird.model.hf_files import CONFIG_FILE, read_hf_config, read_hf_weights
from dnabird.model.task_spec import TaskSpec

log = logging.getLogger(__name__)


def projection_names(module: str, *, global_: bool = False) -> dict[str, str]:
    """dnabird's Q/K/V names (with `global_`, Longformer's global Q/K/V) → those under attention module `module`."""
    ours, suffix = ("attention.global_", "_global") if global_ else ("attention.", "")
    return {f"{ours}{p}": f"{module}.{p}{suffix}" for p in ("query", "key", "value")}


def embedding_names(base: str) -> dict[str, str]:
    """dnabird's embedding modules → those of a BERT-shaped base model called `base`."""
    return {f"encoder.embeddings.{ours}": f"{base}.embeddings.{theirs}" for ours, theirs in (
        ("word", "word_embeddings"), ("position", "position_embeddings"), ("segment", "token_type_embeddings"),
        ("norm", "LayerNorm"))}


# a BERT-shaped layer's modules: dnabird's → Hugging Face's
LAYER_NAMES = {**projection_names("attention.self"), "attention.output": "attention.output.dense",
               "attention_norm": "attention.output.LayerNorm", "ffn_in": "intermediate.dense",
               "ffn_out": "output.dense", "ffn_norm": "output.LayerNorm"}
_FIXED = {**embedding_names("bert"), "encoder.pooler": "bert.pooler",
          "mlm.transform": "cls.predictions.transform.dense", "mlm.norm": "cls.predictions.transform.LayerNorm",
          "nsp": "cls.seq_relationship"}
WORD_KEY = "encoder.embeddings.word.weight"
_TIED = ("cls.predictions.decoder.weight",)  # the MLM decoder: the word table again
_DECODER_BIAS = ("cls.predictions.decoder.bias",)  # transformers' copy of the MLM bias
_UNUSED_POOLER = ("bert.pooler.weight", "bert.pooler.bias")
ARCHITECTURES = ("BigBirdForPreTraining", "BigBirdForMaskedLM", "BigBirdModel", "BigBirdForSequenceClassification")
# EncoderConfig field → the key of a BERT-shaped Hugging Face config (BigBird, RoBERTa, Longformer)
BERT_KEYS = {"vocab_size": "vocab_size", "hidden_size": "hidden_size", "num_layers": "num_hidden_layers",
             "num_heads": "num_attention_heads", "intermediate_size": "intermediate_size",
             "max_positions": "max_position_embeddings", "dropout": "hidden_dropout_prob",
             "attention_dropout": "attention_probs_dropout_prob", "layer_norm_eps": "layer_norm_eps",
             "type_vocab_size": "type_vocab_size", "activation": "hidden_act"}


@dataclass(frozen=True)
class NameMap:
    """One architecture's dnabird → Hugging Face names: `fixed` modules outside the layers; `layers`: for each
    dnabird layer stack ("encoder.layers"), the Hugging Face prefix and the module table of a layer (as
    `{prefix}.{i}.{module}`); `keys`: whole keys mapped as they are (loose biases)."""

    fixed: dict[str, str]
    layers: dict[str, tuple[str, dict[str, str]]]
    keys: dict[str, str] = field(default_factory=dict)

    def hf_name(self, name: str) -> str | None:
        """The Hugging Face key of dnabird key `name` (None where the architecture has no counterpart)."""
        if name in self.keys:
            return self.keys[name]
        module, _, leaf = name.rpartition(".")
        match = re.fullmatch(r"(\w+\.layers)\.(\d+)\.(.+)", module)
        if match and match.group(1) in self.layers:
            prefix, table = self.layers[match.group(1)]
            inner = table.get(match.group(3))
            return None if inner is None else f"{prefix}.{match.group(2)}.{inner}.{leaf}"
        return f"{self.fixed[module]}.{leaf}" if module in self.fixed else None


def check_activation(hf: dict, key: str, architecture: str) -> None:
    """`ConfigError` unless the config's activation setting `key` is GELU (exact or tanh-approximated)."""
    if hf.get(key) not in ("gelu", "gelu_new"):
        raise ConfigError(f"Hugging Face {architecture} config: {key}={hf.get(key)!r} is not supported "
                          "(expected 'gelu' or 'gelu_new')")


_LAYERS = {"encoder.layers": ("bert.encoder.layer", LAYER_NAMES)}
BIGBIRD_NAMES = NameMap(_FIXED, _LAYERS, {"mlm.bias": "cls.predictions.bias"})
# BigBirdForSequenceClassification: its head's dense layer is dnabird's [CLS] pooler, its out_proj the classifier
CLASSIFIER_NAMES = NameMap({**embedding_names("bert"), "encoder.pooler": "classifier.dense",
                            "classifier": "classifier.out_proj"}, _LAYERS)


def hf_name(name: str) -> str:
    """The Hugging Face `BigBirdForPreTraining` state-dict key of a dnabird `PretrainingModel` key."""
    mapped = BIGBIRD_NAMES.hf_name(name)
    if mapped is None:
        raise ConfigError(f"dnabird tensor {name!r} has no Hugging Face BigBird counterpart")
    return mapped


def bert_config(hf: dict, **settings) -> EncoderConfig:
    """An `EncoderConfig` of the `BERT_KEYS` and initializer range of a BERT-shaped Hugging Face config (as a
    dict), with `settings` over them."""
    return EncoderConfig(**{**{ours: hf[theirs] for ours, theirs in BERT_KEYS.items()},
                            "initializer_range": hf.get("initializer_range", 0.02), **settings})


def bigbird_attention(hf: dict) -> dict:
    """The `EncoderConfig` attention settings of a Hugging Face BigBird-style config (as a dict): full attention,
    or ITC with transformers' random blocks and no attention dropout (its block-sparse path drops nothing),
    logging where outputs then differ (`block_sparse_differences`); both with transformers' fixed seeds."""
    fixed = {"base_seed": 0, "reseed_each_step": False}
    if hf.get("attention_type", "block_sparse") == "original_full":
        return {"attention": {"type": "full"}, **fixed}
    pattern = {"type": "bigbird_itc", "block_size": hf["block_size"], "window_blocks": 3,
               "num_random_blocks": hf["num_random_blocks"], "random_mode": "hf"}
    log.warning("%s", block_sparse_differences(hf))
    return {"attention": pattern, "attention_dropout": SPARSE_ATTENTION_DROPOUT, **fixed}


def attention_windows(hf: dict, layers: int) -> tuple[int, list[dict]]:
    """(first layer's window, `layer_attention` or [] when every layer's is the same) of a Hugging Face
    `attention_window` setting (one window, or one per layer)."""
    windows = hf["attention_window"]
    windows = windows if isinstance(windows, list) else [windows] * layers
    return windows[0], [{"window": window} for window in windows] if len(set(windows)) > 1 else []


def config_from_hf(hf: dict) -> EncoderConfig:
    """An `EncoderConfig` equal in behaviour to a Hugging Face `BigBirdConfig` (as a dict)."""
    if hf.get("model_type", "big_bird") != "big_bird":
        raise ConfigError(f"model_type={hf['model_type']!r} is not supported: expected 'big_bird' (dnabird imports "
                          f"{', '.join(ARCHITECTURES)})")
    if hf.get("attention_type", "block_sparse") not in ("block_sparse", "original_full"):
        raise ConfigError(f"attention_type={hf['attention_type']!r} is not supported: expected 'block_sparse' or "
                          "'original_full'")
    if hf.get("rescale_embeddings"):
        raise ConfigError("rescale_embeddings=True is not supported")
    check_activation(hf, "hidden_act", "BigBird")
    missing = [key for key in BERT_KEYS.values() if key not in hf]
    if missing:
        raise ConfigError(f"missing setting(s) {missing}")
    return bert_config(hf, position_offset=0, pad_token_id=hf.get("pad_token_id") or 0,
                       attention_bias=hf.get("use_bias", True), embedding_dropout_before_norm=True,
                       **bigbird_attention(hf))


def block_sparse_differences(hf: dict) -> str:
    """Where an imported block-sparse model's outputs differ from transformers' (one sentence per case)."""
    short = (5 + 2 * hf["num_random_blocks"]) * hf["block_size"]
    cases = ["in eval mode (transformers then reads block 0, a global block, in place of every random block)",
             f"at lengths ≤ {short} tokens (transformers switches the model to full attention, for good)",
             "at 1024 tokens (transformers' paper plan may repeat the last global block, which it counts twice)"]
    if hf["max_position_embeddings"] != PAPER_PLAN_LENGTH:
        cases.append(f"at 3072 and 4096 tokens (transformers draws them from a plan for max_position_embeddings="
                     f"{hf['max_position_embeddings']} tokens, dnabird's 'hf' mode from the paper's "
                     f"{PAPER_PLAN_LENGTH})")
    return ("Hugging Face block-sparse BigBird: outputs match transformers in train mode only; they differ "
            + "; ".join(cases) + ".")


def bigbird_architecture(hf_config: dict, tensors: dict, where: str) -> str:
    """The source's architecture: config.json's `architectures`, else what its tensors show."""
    named = hf_config.get("architectures") or []
    if named:
        if named[0] not in ARCHITECTURES:
            raise ConfigError(f"{where}: architectures={named!r} is not supported: expected one of {ARCHITECTURES}")
        return named[0]
    heads = {"classifier.": "BigBirdForSequenceClassification", "cls.seq_relationship.": "BigBirdForPreTraining",
             "cls.predictions.": "BigBirdForMaskedLM"}
    return next((name for head, name in heads.items() if any(k.startswith(head) for k in tensors)), "BigBirdModel")


# a `SequenceClassifier` problem -> transformers' `problem_type` (a binary head: one sigmoid output)
HF_PROBLEM_TYPES = {"binary": "multi_label_classification", "multiclass": "single_label_classification",
                    "multilabel": "multi_label_classification", "regression": "regression"}


def classification_problem(hf_config: dict, where: str) -> tuple[str, int]:
    """(dnabird problem, number of outputs) of a `BigBirdForSequenceClassification` config, as transformers reads
    its `problem_type`: "regression" (or none with one label), "multi_label_classification" (one label: binary),
    "single_label_classification" (or none) with two labels or more."""
    outputs = len(hf_config.get("id2label") or {}) or int(hf_config.get("num_labels", 2))
    kind = hf_config.get("problem_type")
    if kind == "regression" or (kind is None and outputs == 1):
        return "regression", outputs
    if kind == "multi_label_classification":
        return ("binary" if outputs == 1 else "multilabel"), outputs
    if kind in (None, "single_label_classification") and outputs >= 2:
        return "multiclass", outputs
    raise ConfigError(f"{where}: problem_type={kind!r} with {outputs} label(s) is not supported: expected "
                      "'regression', 'multi_label_classification', or 'single_label_classification' with two "
                      "labels or more")


def read_source(source) -> tuple[dict, dict[str, torch.Tensor], str, str]:
    """(Hugging Face config dict, state dict, where the weights came from, where the config came from) of a
    model object or a `save_pretrained` directory."""
    if isinstance(source, (str, os.PathLike)):
        hf_config = read_hf_config(source)
        tensors, where = read_hf_weights(source)
        return hf_config, tensors, where, str(Path(source) / CONFIG_FILE)
    tensors = {k: v.detach() for k, v in source.state_dict().items()}
    return source.config.to_dict(), tensors, type(source).__name__, type(source).__name__


def encoder_config_of(config_from, hf_config: dict, config_where: str) -> EncoderConfig:
    """`config_from(hf_config)`, its errors naming the config file."""
    try:
        return config_from(hf_config)
    except (ConfigError, ParameterError) as err:
        raise ConfigError(f"{config_where}: {err}") from None


def from_hf_bigbird(source) -> PretrainingModel | SequenceClassifier:
    """The dnabird model of a Hugging Face BigBird model object or `save_pretrained` directory.

    `BigBirdForPreTraining` / `BigBirdForMaskedLM` / `BigBirdModel` become a `PretrainingModel` (an NSP head
    only where the source has one; `BigBirdModel` has no MLM head either, so its MLM head is freshly
    initialised, with a warning). `BigBirdForSequenceClassification` becomes a `SequenceClassifier` whose
    [CLS] pooler is the head's dense layer and activation (`pooler_activation`) and whose classifier is
    its `out_proj`; the source's pooler, which that head does not use, is dropped.
    """
    hf_config, tensors, where, config_where = read_source(source)
    architecture = bigbird_architecture(hf_config, tensors, config_where)
    config = encoder_config_of(config_from_hf, hf_config, config_where)
    if architecture == "BigBirdForSequenceClassification":
        problem, outputs = classification_problem(hf_config, config_where)
        config = dataclasses.replace(config, pooling="cls", pooler_activation=config.activation)
        model = SequenceClassifier(config, outputs, problem=problem)
        report = load_into(model, tensors, where=where, prefix="bert.", names=CLASSIFIER_NAMES, tied=_TIED,
                           ignored=_DECODER_BIAS + _UNUSED_POOLER)
        if report.initialised:
            raise CheckpointError(f"{where}: classifier tensors missing: {list(report.initialised)}")
        return model
    model = PretrainingModel(config, nsp=architecture == "BigBirdForPreTraining")
    load_into(model, tensors, where=where, prefix="bert.", names=BIGBIRD_NAMES, tied=_TIED, ignored=_DECODER_BIAS)
    if architecture == "BigBirdModel":
        log.warning("%s: a BigBirdModel has no MLM head: its MLM head is freshly initialised, so mlm_llr scores "
                    "and evaluation mean nothing until it is trained (fine-tuning a classifier is unaffected)", where)
    return model


def import_model(source, build, *, config_from, names: NameMap, tied: tuple[str, ...], **load):
    """`build(config)` loaded with the weights of a Hugging Face object or `save_pretrained` directory.

    config_from: Hugging Face config dict → the model's config; names, tied and `load` (prefix, ignored, adapt,
    required): as `load_into`.
    """
    hf_config, tensors, where, config_where = read_source(source)
    model = build(encoder_config_of(config_from, hf_config, config_where))
    load_into(model, tensors, where=where, names=names, tied=tied, **load)
    return model


def _encoder_tensor(name: str) -> bool:
    return name.startswith("encoder.") and not name.startswith("encoder.pooler.")


def load_into(model: torch.nn.Module, tensors: dict[str, torch.Tensor], *, where: str, names: NameMap,
              tied: tuple[str, ...], prefix: str = "", ignored: tuple[str, ...] = (), adapt=None,
              required=_encoder_tensor) -> LoadReport:
    """Copy a Hugging Face state dict into `model`.

    prefix: the base-model prefix of head models (a bare base model's keys get it added). tied: source keys
    that must equal the word embeddings (dnabird keeps one table). ignored: source keys to drop. adapt:
    optional `(tensors by dnabird name, model) -> tensors` applied before loading (a grown position table,
    zero-filled biases). required: which dnabird keys the source must give (default: the encoder's); the
    others it lacks stay initialised and are logged.
    """
    if not any(k.startswith(prefix) for k in tensors):  # a bare base model
        tensors = {f"{prefix}{k}": v for k, v in tensors.items()}
    wanted = {names.hf_name(name): name for name in model.state_dict() if names.hf_name(name) is not None}
    word_key = names.hf_name(WORD_KEY)
    for key in tied:
        if key in tensors and word_key in tensors and not torch.equal(tensors[key], tensors[word_key]):
            raise ConfigError(f"{where}: {key} is not tied to the word embeddings {word_key}; dnabird ties them")
    ignored = set(tied) | set(ignored) | {k for k in tensors if k.endswith(("position_ids", "token_type_ids"))}
    unexpected = sorted(set(tensors) - set(wanted) - ignored)
    if unexpected:
        raise CheckpointError(f"{where}: Hugging Face tensors with no dnabird counterpart: {unexpected[:10]}")
    ours = {wanted[k]: v for k, v in tensors.items() if k in wanted}
    report = load_weights(model, adapt(ours, model) if adapt else ours, source=where, strict=False)
    missing = [k for k in report.initialised if required(k)]
    if missing:
        raise CheckpointError(f"{where}: tensors missing from the source: {missing[:10]}")
    if report.initialised:
        log.info("imported %s; freshly initialised: %s", where, ", ".join(report.initialised))
    return report


def hf_config_dict(config: EncoderConfig, *, classifier: bool = False) -> dict:
    """The Hugging Face `BigBirdConfig` fields of `config` (ITC with a 3-block window, or full attention) for
    `BigBirdForPreTraining` or, with `classifier`, `BigBirdForSequenceClassification` (whose head's dense layer
    is the [CLS] pooler, activated by the encoder's activation)."""
    if config.layer_attention:
        raise ConfigError("Hugging Face BigBird has one attention pattern for every layer; this model sets "
                          "layer_attention")
    pattern = config.pattern()
    if pattern.type_name == "full":
        attention = {"attention_type": "original_full", "block_size": 64, "num_random_blocks": 3}
    elif pattern.type_name == "bigbird_itc" and pattern.window_blocks == 3:
        attention = {"attention_type": "block_sparse", "block_size": pattern.block_size,
                     "num_random_blocks": pattern.num_random_blocks}
    else:
        raise ConfigError(f"pattern {pattern.to_dict()} has no Hugging Face BigBird form")
    if config.position_offset or not config.embedding_dropout_before_norm:
        raise ConfigError("Hugging Face BigBird needs position_offset=0 and "
                          "embedding_dropout_before_norm=True")
    if classifier and config.pooler_activation != config.activation:
        raise ConfigError(f"Hugging Face BigBird's classification head is dense + the encoder's activation "
                          f"({config.activation!r}); this model's pooler_activation is {config.pooler_activation!r}")
    if not classifier and config.pooler_activation != "tanh":
        raise ConfigError(f"Hugging Face BigBird's pooler is dense + tanh; this model's pooler_activation is "
                          f"{config.pooler_activation!r}")
    mlm_transform = config.mlm_transform or classifier      # a classifier has no MLM head
    if config.positional != "learned" or config.pre_norm or not mlm_transform or config.pooling != "cls":
        raise ConfigError(f"Hugging Face BigBird has learned positions, post-LN blocks, an MLM transform and a "
                          f"[CLS] pooler only (this model: positional={config.positional!r}, "
                          f"pre_norm={config.pre_norm}, mlm_transform={config.mlm_transform}, "
                          f"pooling={config.pooling!r})")
    return {
        "architectures": ["BigBirdForSequenceClassification" if classifier else "BigBirdForPreTraining"],
        "model_type": "big_bird",
        **{theirs: getattr(config, ours) for ours, theirs in BERT_KEYS.items()},
        "initializer_range": config.initializer_range, "use_bias": config.attention_bias, "rescale_embeddings": False,
        "pad_token_id": config.pad_token_id, "tie_word_embeddings": True, **attention}


def random_block_mismatches(config: EncoderConfig) -> list[str]:
    """Settings of `config` under which transformers would draw other random blocks than the model's."""
    pattern = config.pattern()
    if pattern.type_name != "bigbird_itc" or pattern.num_random_blocks == 0:
        return []
    found = []
    if pattern.random_mode != "hf":
        found.append(f"random_mode={pattern.random_mode!r} (transformers places them as random_mode='hf')")
    if config.reseed_each_step:
        found.append("reseed_each_step=True (transformers keeps each layer's random blocks fixed)")
    if config.base_seed:
        found.append(f"base_seed={config.base_seed} (transformers seeds layer i with i, as base_seed=0)")
    return found


def to_hf_bigbird(model: PretrainingModel | SequenceClassifier, directory: str | os.PathLike, *, strict: bool = True,
                  tokenizer=None, task: TaskSpec | None = None) -> Path:
    """Write `model` as a Hugging Face directory (config.json + model.safetensors), with `tokenizer` (a dnabird
    DNA tokenizer) as transformers' tokenizer files.

    A `PretrainingModel` becomes `BigBirdForPreTraining` (without an NSP head `BigBirdForMaskedLM`). A
    `SequenceClassifier` becomes `BigBirdForSequenceClassification` (its [CLS] pooler the head's dense layer, so
    its pooler_activation must be the encoder's activation) with the `problem_type` of its problem
    (`HF_PROBLEM_TYPES`; a binary head is multi-label with one label); `task` (its task.json) names the outputs
    (`id2label`) and, for a regression, records the target transform as `dnabird_target_transform` (the outputs
    are in the training scale; `TargetTransform.inverse` maps them to the user's). transformers does not store
    the unused `bert.pooler` of that architecture and initialises it when loading, with a warning.
    Only ITC (3-block window) and full patterns export. A block-sparse model whose random blocks transformers
    would not draw (`random_block_mismatches`) is refused; `strict=False` exports it with a warning.
    """
    classifier = isinstance(model, SequenceClassifier)
    hf_config = hf_config_dict(model.config, classifier=classifier)
    mismatches = random_block_mismatches(model.config)
    if mismatches:
        message = ("transformers cannot reproduce this model's random attention blocks: " + "; ".join(mismatches))
        if strict:
            raise ConfigError(f"{message}. Pass strict=False to export anyway (transformers' outputs will differ)")
        log.warning("%s; exporting anyway (strict=False): transformers' outputs will differ", message)
    if classifier:
        hf_config.update(classifier_config(model, task))
        tensors = {classifier_hf_name(k): v.detach().contiguous() for k, v in model.state_dict().items()}
    else:
        if model.nsp is None:
            hf_config["architectures"] = ["BigBirdForMaskedLM"]
        tensors = {hf_name(k): v.detach().contiguous() for k, v in model.state_dict().items()}
    if tokenizer is not None:
        check_tokenizer_fits(tokenizer, model.config, "the tokenizer given")
        hf_config.update(pad_token_id=tokenizer.pad_id, sep_token_id=tokenizer.sep_id, bos_token_id=tokenizer.cls_id,
                         eos_token_id=tokenizer.sep_id)
    directory = Path(directory)  # atomic_output makes it
    with atomic_output(directory / "model.safetensors") as temporary:
        save_file(tensors, temporary, metadata={"format": "pt"})
        follow_umask(temporary)
    write_json_atomic(directory / "config.json", hf_config)
    if tokenizer is not None:
        from dnabird.data.hf_tokenizer import write_hf_tokenizer_files

        write_hf_tokenizer_files(tokenizer, directory, max_length=model.config.max_positions)
    return directory


def classifier_hf_name(name: str) -> str:
    """The `BigBirdForSequenceClassification` state-dict key of a dnabird `SequenceClassifier` key."""
    mapped = CLASSIFIER_NAMES.hf_name(name)
    if mapped is None:
        raise ConfigError(f"dnabird tensor {name!r} has no Hugging Face BigBirdForSequenceClassification counterpart")
    return mapped


def classifier_config(model: SequenceClassifier, task: TaskSpec | None) -> dict:
    """The `BigBirdForSequenceClassification` config fields of a classifier's head: problem_type, the output
    names (`task`'s labels, else LABEL_i) and a regression's target transform."""
    outputs = model.classifier.out_features
    names = [f"LABEL_{i}" for i in range(outputs)] if task is None else list(task.labels)
    if len(names) != outputs or (task is not None and task.problem != model.problem):
        raise ConfigError(f"task {task.task!r} ({task.problem}, {len(names)} outputs) does not describe this "
                          f"{model.problem} head with {outputs} outputs")
    fields = {"problem_type": HF_PROBLEM_TYPES[model.problem], "id2label": dict(enumerate(names)),
              "label2id": {name: i for i, name in enumerate(names)}}
    if task is not None and task.target_transform is not None:
        fields["dnabird_target_transform"] = task.target_transform
    return fields


def check_tokenizer_fits(tokenizer, config: EncoderConfig, where: str) -> None:
    """`ConfigError` naming `where` unless the tokenizer's vocabulary is the model's embedding table and its
    [PAD] the model's padding id."""
    if tokenizer.vocab_size != config.vocab_size:
        raise ConfigError(f"{where}: the tokenizer has {tokenizer.vocab_size} ids, the model's embeddings "
                          f"vocab_size={config.vocab_size}")
    if tokenizer.pad_id != config.pad_token_id:
        raise ConfigError(f"{where}: the tokenizer's [PAD] is id {tokenizer.pad_id}, the model's "
                          f"pad_token_id={config.pad_token_id}")
