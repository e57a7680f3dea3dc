"""Import a Hugging Face BigBird directory, as `huggingface-cli download` or `git clone` leaves it, into a
dnabird checkpoint: the weights (`from_hf_bigbird`), the tokenizer files, and for a classifier the
`task.json` its source cannot state (window, anchor, labels), given by the caller, and the tokenizer's bp per
token (`dnabird.model.bp_per_token`: given, else measured on the reference sequence).

Everything is read and checked before anything is written: each error names the file and the setting, and
the output directory is left untouched.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from dnabird.errors import ConfigError, reject
from dnabird.model.bp_per_token import BpPerToken, reference_bp_per_token, write_bp_per_token
from dnabird.model.checkpoint import save_checkpoint
from dnabird.model.heads import SequenceClassifier
from dnabird.model.hf import check_tokenizer_fits, from_hf_bigbird
from dnabird.model.hf_files import CONFIG_FILE
from dnabird.model.task_spec import TaskSpec, parse_anchor

log = logging.getLogger(__name__)
TOKENIZER_FILE = "tokenizer.json"


@dataclass(frozen=True)
class TaskOptions:
    """What a classifier's `task.json` needs that a Hugging Face directory does not say.

    labels: one name per output of the classifier. window_bp: the input window in bp. anchor: "centre" or
    "tss:-U:+D" (`dnabird.model.task_spec.Anchor`). strand_rule: "both", "forward" or "feature" (None:
    "both" for a centre anchor, else "feature"). eval_length: the padded token length every input is
    scored at (None: the model's longest block multiple). task: the task's name.
    """

    labels: tuple[str, ...] | None = None
    window_bp: int | None = None
    anchor: str | None = None
    strand_rule: str | None = None
    eval_length: int | None = None
    task: str = "imported"

    def given(self) -> list[str]:
        return [name for name in ("labels", "window_bp", "anchor", "strand_rule", "eval_length")
                if getattr(self, name) is not None]


def find_tokenizer(source: Path, tokenizer: str | os.PathLike | None):
    """The tokenizer to copy: `tokenizer` (a `.model`, a `tokenizer.json` or a directory) if given, else the
    source's `tokenizer.json`; None (with a warning) when there is neither."""
    from dnabird.data.tokenizer import load_tokenizer

    if tokenizer is not None:
        return load_tokenizer(tokenizer)
    if (source / TOKENIZER_FILE).is_file():
        return load_tokenizer(source / TOKENIZER_FILE)
    log.warning("%s has no %s: importing the weights only. Scoring, fine-tuning and evaluation need the "
                "model's tokenizer: copy its tokenizer.json and special_tokens_map.json into the output "
                "directory, or import again with --tokenizer PATH", source, TOKENIZER_FILE)
    return None


def task_spec(model: SequenceClassifier, options: TaskOptions, tokenizer, where: str) -> TaskSpec:
    """The classifier's `TaskSpec` from `options` (labels, window and anchor required)."""
    missing = [name for name in ("labels", "window_bp", "anchor") if getattr(options, name) is None]
    if missing:
        raise ConfigError(f"{where}: a BigBirdForSequenceClassification checkpoint needs {', '.join(missing)} for "
                          "its task.json (the source does not say them): give --labels, --window and --anchor")
    outputs = model.classifier.out_features
    if len(options.labels) != outputs:
        raise ConfigError(f"{where}: the classifier has {outputs} outputs, but {len(options.labels)} labels were "
                          f"given ({', '.join(options.labels)})")
    block = model.config.length_multiple
    longest = (model.config.max_positions - model.config.position_offset) // block * block
    centre = parse_anchor(options.anchor).kind == "centre"
    return TaskSpec(task=options.task, problem=model.problem, labels=tuple(options.labels),
                    eval_length=options.eval_length or longest, window_length=options.window_bp,
                    anchor=options.anchor, strand_rule=options.strand_rule or ("both" if centre else "feature"),
                    tokenizer_hash=None if tokenizer is None else tokenizer.hash)


def import_hub_checkpoint(source: str | os.PathLike, out: str | os.PathLike, *,
                          tokenizer: str | os.PathLike | None = None, task: TaskOptions | None = None,
                          bp_per_token: float | None = None) -> dict:
    """Convert the Hugging Face BigBird directory `source` into the dnabird checkpoint `out`.

    tokenizer: the model's tokenizer when `source` has no `tokenizer.json` (or to override it).
    task: a classifier's task options (required for `BigBirdForSequenceClassification`, refused otherwise).
    bp_per_token: the tokenizer's bp per token on the model's genome, stored with the checkpoint to size
        default variant-scoring windows (default: its figure on the reference sequence,
        `dnabird.model.bp_per_token`); needs a tokenizer.
    Returns what was written: {"model", "heads", "tokenizer", "task", "bp_per_token"}.
    """
    source, task = Path(source), task or TaskOptions()
    model = from_hf_bigbird(source)
    found = find_tokenizer(source, tokenizer)
    if found is not None:
        check_tokenizer_fits(found, model.config, f"{found.path} against {source / CONFIG_FILE}")
    spec = None
    if isinstance(model, SequenceClassifier):
        spec = task_spec(model, task, found, str(source / CONFIG_FILE))
        heads = f"{model.problem} classifier with {model.classifier.out_features} outputs"
    elif task.given():
        raise ConfigError(f"{source / CONFIG_FILE}: {', '.join(task.given())} describe a classifier's task, but "
                          "this checkpoint has none (BigBirdForSequenceClassification only)")
    else:
        heads = "MLM and NSP heads" if model.nsp is not None else "MLM head, no NSP head"
    reject(found is None and bp_per_token is not None, "bp_per_token", bp_per_token,
           "None: the checkpoint has no tokenizer (give --tokenizer)")
    figure = None
    if found is not None:
        figure = BpPerToken(bp_per_token, "given at import") if bp_per_token is not None else \
            reference_bp_per_token(found)
    save_checkpoint(model, out, tokenizer_files=() if found is None else found.files, task=spec)
    if figure is not None:
        write_bp_per_token(out, figure)
    return {"model": model, "heads": heads, "tokenizer": None if found is None else found.path, "task": spec,
            "bp_per_token": figure}
