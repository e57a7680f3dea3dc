"""The pretraining recipe: tokenizer + shards + a model preset -> `train(...)` -> checkpoints (the final model
with its tokenizer's bp per token on the held-out shards, `dnabird.model.bp_per_token`) and a held-out report.
`dnabird pretrain` and the pipeline's `pretrain` stage both call `pretrain(config)`.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from pathlib import Path

from dnabird.config import RecipeConfig
from dnabird.data.pretraining import PretrainingExamples, collate
from dnabird.errors import DnabirdError, reject, require_paths
from dnabird.io import write_json_atomic
from dnabird.model.bp_per_token import BpPerToken, write_bp_per_token
from dnabird.model.config import recipe_encoder_config
from dnabird.pretraining.evaluate import BASELINES, EVAL_SETTINGS, format_report, heldout_report
from dnabird.pretraining.objective import mlm_nsp_loss
from dnabird.train import TrainConfig
from dnabird.train.recipe import recipe_run


@dataclass
class PretrainConfig(RecipeConfig):
    """Settings of one pretraining run (the keys of a `pretrain:` section or a `--config` YAML).

    model: preset name (`bigbird-base` or `tiny`); model_overrides: `EncoderConfig` fields to change,
        merged over the preset (`attention` key by key; see `dnabird.model.config.configure`) and checked
        when the config loads; vocab_size always comes from the tokenizer.
    tokenizer, train_shards, heldout_shards: paths; inside `dnabird run` null means "from the
        tokenizer and shards stages".
    max_length: tokens per example; mask_rate, random_next_rate: see `PretrainingExamples`.
    seed: seeds the model's initialisation, the example stream (order, pairs, masking) and dropout
        (inside `dnabird run` it defaults to the pipeline's seed).
    eval_examples, eval_batch_size, eval_seed: the held-out evaluation after training (0 skips it).
    min_margin_bits: baseline ("unigram" or "one_sentence") -> bits per base the model must be below
        it on the held-out data at the positions shown as [MASK] (where the answer is not in the input),
        or the run fails (after saving everything).
    train: the loop's `TrainConfig` (optimizer, schedule, batch, checkpoints, precision, out_dir).
    """

    model: str = "bigbird-base"
    model_overrides: dict = field(default_factory=dict)
    tokenizer: str | None = None
    train_shards: str | None = None
    heldout_shards: str | None = None
    max_length: int = 4096
    mask_rate: float = 0.15
    random_next_rate: float = 0.5
    seed: int = 0
    eval_examples: int = 256
    eval_batch_size: int = 8
    eval_seed: int = 1234
    min_margin_bits: dict = field(default_factory=dict)
    train: TrainConfig = field(default_factory=TrainConfig)

    def __post_init__(self):
        reject(not set(self.min_margin_bits) <= set(BASELINES), "min_margin_bits", self.min_margin_bits,
               f"keys among {BASELINES}")
        recipe_encoder_config(self)  # the model settings fail here, when the config loads, not after earlier stages


load_config = PretrainConfig.load  # a pretraining YAML (the keys of `PretrainConfig`) with `key.sub=value` overrides


def pretrain(config: PretrainConfig, *, resume: bool = False) -> dict:
    """Train a `PretrainingModel` with MLM + NSP, then (rank 0) evaluate it on the held-out shards.

    Returns the held-out report (empty when there is none, or on ranks other than 0).
    """
    from dnabird.data.shards import ShardReader
    from dnabird.data.tokenizer import load_tokenizer
    from dnabird.model.heads import PretrainingModel

    require_paths(config, ("tokenizer", "train_shards"))
    tokenizer = load_tokenizer(config.tokenizer)
    model_config = recipe_encoder_config(config, tokenizer.vocab_size)
    report = {}
    with recipe_run(config.train.device, seed=config.seed) as run:
        model = PretrainingModel(model_config, seed=config.seed)
        examples = PretrainingExamples(ShardReader(config.train_shards), tokenizer=tokenizer,
                                       max_length=config.max_length, block_size=model_config.length_multiple,
                                       mask_rate=config.mask_rate, random_next_rate=config.random_next_rate,
                                       seed=config.seed)
        run.fit(model, mlm_nsp_loss, examples, config.train,
                collate_fn=functools.partial(collate, pad_id=tokenizer.pad_id), resume=resume,
                run_info={"pretrain": dataclasses.asdict(config)}, tokenizer_files=tokenizer.files)
        if run.is_main:
            write_bp_per_token(Path(config.train.out_dir) / "model", shards_bp_per_token(config))
        if run.is_main and config.heldout_shards and config.eval_examples:
            report = _evaluate(model, config, tokenizer, run.device)
    return report


def shards_bp_per_token(config: PretrainConfig) -> BpPerToken:
    """The tokenizer's bp per token on the held-out shards (else the training shards), stored with the model
    to size default variant-scoring windows (`dnabird.model.bp_per_token`)."""
    from dnabird.data.shards import ShardReader

    split = "held-out" if config.heldout_shards else "training"
    with ShardReader(config.heldout_shards or config.train_shards) as shards:
        return BpPerToken(shards.bp_per_token(), f"pretraining: {split} shards")


def _evaluate(model, config: PretrainConfig, tokenizer, device) -> dict:
    """The held-out report after training: written to `report.json`, printed, checked against the margin."""
    report = heldout_report(model, tokenizer, config.heldout_shards, device=device,
                            **{k: getattr(config, v) for k, v in EVAL_SETTINGS.items()})
    write_json_atomic(Path(config.train.out_dir) / "report.json", report)
    print(format_report(report))
    for baseline, required in config.min_margin_bits.items():
        margin = report["at_mask"]["margin_bits_per_base"][baseline]
        if margin < required:
            raise DnabirdError(f"min_margin_bits: at the positions shown as [MASK], the model's held-out bits per "
                               f"base is {margin:+.3f} below the {baseline} baseline, {required} required "
                               f"(report: {config.train.out_dir})")
    return report
