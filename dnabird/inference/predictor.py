"""A model made ready for scoring: loaded, in eval mode on its device, with its tokenizer and task.

Every input is `[CLS] window [SEP]` padded either to one fixed token length (a head's eval_length, as it was
fine-tuned) or, with `length=None`, to its own block multiple (`padded_length`; one call's rows share it), so
attention layouts (the global first and last blocks, random blocks fixed in eval mode, both set by the
padded number of blocks) never depend on the batch: the same scores come out across runs, batch sizes and
devices (up to float rounding between devices). Every output is checked:
NaN or infinite values (corrupt weights, an overflow) raise `NonFiniteOutputError` naming the model,
the output and the inputs, never a table of NA. Passes run under `torch.inference_mode`; `precision="bf16"`
runs them under bfloat16 autocast (CPUs with AVX-512 BF16 or AMX, GPUs; outputs still float32/float64).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from dnabird.errors import CheckpointError, NonFiniteOutputError, ParameterError, reject
from dnabird.labels import IGNORE_INDEX
from dnabird.model.task_spec import TaskSpec
from dnabird.train.distributed import resolve_device

PRECISIONS = ("fp32", "bf16")


class Predictor:
    """`model` (a `SequenceClassifier` with its `task`, or a `PretrainingModel`), its tokenizer and device.

    Use `Predictor.load` to build one from a checkpoint directory or a loaded model.
    """

    def __init__(self, model: torch.nn.Module, tokenizer, task: TaskSpec | None, device: torch.device,
                 source: str | None = None, precision: str = "fp32"):
        reject(precision not in PRECISIONS, "precision", precision, f"one of {PRECISIONS}")
        self.model, self.precision = model.eval().to(device), precision
        self.tokenizer, self.task, self.device = tokenizer, task, device
        self.source = source or type(model).__name__  # the checkpoint directory, named in errors
        self.block_size = model.config.length_multiple
        self.max_tokens = model.config.max_positions - model.config.position_offset
        if task is not None and task.tokenizer_hash not in (None, tokenizer.hash):
            raise CheckpointError(f"task.json names tokenizer {task.tokenizer_hash[:12]}…, but the tokenizer "
                                  f"given is {tokenizer.hash[:12]}…")

    @classmethod
    def load(cls, model: str | os.PathLike | torch.nn.Module, *, tokenizer=None, task: TaskSpec | None = None,
             device: str | torch.device = "auto", precision: str = "fp32") -> Predictor:
        """From a checkpoint directory (its tokenizer `.model` and optional `task.json` are read from it)
        or a loaded model (then `tokenizer` is required and `task` describes a classifier's outputs);
        `precision`: "fp32" or "bf16" (bfloat16 autocast)."""
        from dnabird.model.checkpoint import load_checkpoint, read_task, read_tokenizer

        source = None
        if isinstance(model, (str, os.PathLike)):
            directory = source = str(model)
            model = load_checkpoint(directory)
            tokenizer = tokenizer or read_tokenizer(directory)
            task = task or read_task(directory)
        elif not isinstance(model, torch.nn.Module) or not hasattr(model, "config"):
            raise ParameterError("model", type(model).__name__, "a checkpoint directory or a dnabird model")
        reject(tokenizer is None, "tokenizer", None, "the model's Tokenizer when the model is passed loaded")
        return cls(model, tokenizer, task, device if isinstance(device, torch.device) else resolve_device(device),
                   source, precision)

    @property
    def has_head(self) -> bool:
        """Whether the model is a classifier described by a task (else a pretrained masked LM)."""
        return self.task is not None

    @property
    def longest_length(self) -> int:
        """The longest usable fixed input length: the model's positions rounded down to a block multiple."""
        return self.max_tokens // self.block_size * self.block_size

    def check_length(self, length: int) -> int:
        """`length` if it is a usable fixed input length (a block multiple within the model's positions)."""
        if not isinstance(length, int) or length < self.block_size or length % self.block_size \
                or length > self.max_tokens:
            raise ParameterError("eval_length", length, f"a multiple of the attention block size {self.block_size} "
                                 f"up to the model's {self.max_tokens} positions")
        return length

    def padded_length(self, tokens: int) -> int:
        """The padded length of a row of `tokens` ids with `length=None`: `[CLS] ids [SEP]` to a block multiple."""
        return -(-(tokens + 2) // self.block_size) * self.block_size

    def _inputs(self, rows: Sequence[Sequence[int]], length: int | None) -> tuple[torch.Tensor, torch.Tensor]:
        """`[CLS] row [SEP]` padded to `length`, or (None) to each row's own `padded_length`, shared by all."""
        if length is None and len({self.padded_length(len(row)) for row in rows}) > 1:
            raise ParameterError("rows", f"rows of {sorted({self.padded_length(len(row)) for row in rows})} padded "
                                 "tokens", "rows of one padded length per call (a fixed length, or rows grouped "
                                 "by `padded_length`)")
        ids, mask = self.tokenizer.pad_batch(rows, block_size=self.block_size, length=length)
        return torch.from_numpy(ids).to(self.device), torch.from_numpy(mask).to(self.device)

    def _precision(self):
        """The autocast context of `precision` (none for fp32)."""
        if self.precision == "fp32":
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=torch.bfloat16)

    def check_finite(self, values: torch.Tensor, what: str, names: Sequence[str] | None = None) -> torch.Tensor:
        """`values` [B, …] (one row per input) if all are finite, else `NonFiniteOutputError` naming the
        model, `what` was computed and the inputs (`names`, one per row) where it is NaN or infinite."""
        bad = ~torch.isfinite(values.reshape(len(values), -1)).all(1)
        if bool(bad.any()):
            rows = bad.nonzero().flatten().tolist()
            shown = list(dict.fromkeys(names[i] if names is not None else f"input {i}" for i in rows))
            raise NonFiniteOutputError(
                f"model {self.source} produced NaN/inf {what} for {len(rows)} of {len(values)} inputs of a batch "
                f"({', '.join(shown[:5])}{' …' if len(shown) > 5 else ''}); its weights may be corrupt")
        return values

    @torch.inference_mode()
    def logits(self, rows: Sequence[Sequence[int]], length: int, names: Sequence[str] | None = None) -> torch.Tensor:
        """Classifier logits [B, outputs] (float32, on the CPU) of `[CLS] row [SEP]` per row of token ids;
        `names` (one per row) name the inputs in errors."""
        ids, mask = self._inputs(rows, length)
        with self._precision():
            logits = self.model(ids, mask).logits.float()
        return self.check_finite((logits[:, None] if logits.dim() == 1 else logits).cpu(), "classifier logits",
                                 names)

    @torch.inference_mode()
    def masked_log_likelihood(self, rows: Sequence[Sequence[int]], targets: Sequence[Sequence[dict[int, int]]],
                              length: int, names: Sequence[str] | None = None) -> torch.Tensor:
        """Σ log p(token) over masked positions, once per target set of each row, flat in row order (float64,
        on the CPU).

        `rows` hold [MASK] where their target sets (row token index → a token id; [CLS] not counted) ask
        for a probability; a row may carry several sets (REF and ALT tokens when both masked sequences are
        the same input, the spans of several variants sharing a pass), each scored from the one forward pass.
        """
        ids, mask = self._inputs(rows, length)
        labels = torch.full_like(ids, IGNORE_INDEX)
        for row, sets in enumerate(targets):
            for index in set().union(*sets):
                labels[row, index + 1] = 0  # + 1: the [CLS] in front; any id selects the position
        with self._precision():
            out = self.model(ids, mask, mlm_labels=labels)
        log_probs = F.log_softmax(out.mlm_logits.float(), dim=-1)  # [N, V] at the selected positions, row-major
        per_row = torch.zeros(len(rows), dtype=log_probs.dtype, device=log_probs.device)
        self.check_finite(per_row.index_add_(0, out.mlm_positions[:, 0], log_probs.sum(-1)).cpu(),
                          "masked-LM log-probabilities", names)
        where = {tuple(p): n for n, p in enumerate(out.mlm_positions.tolist())}
        wanted = [(row, tokens) for row, sets in enumerate(targets) for tokens in sets]  # one value per set
        picks = [(where[(row, index + 1)], token, n) for n, (row, tokens) in enumerate(wanted)
                 for index, token in tokens.items()]
        at, true_ids, slots = (torch.tensor([p[k] for p in picks], dtype=torch.long) for k in range(3))
        values = log_probs[at.to(log_probs.device), true_ids.to(log_probs.device)].double().cpu()
        return torch.zeros(len(wanted), dtype=torch.float64).index_add_(0, slots, values)

    @torch.inference_mode()
    def pooled(self, rows: Sequence[Sequence[int]], length: int, pooling: str,
               names: Sequence[str] | None = None) -> torch.Tensor:
        """One vector per row [B, D] (float32, on the CPU): the encoder's final hidden states pooled by
        `Encoder.pool` (`pooling`: one of its names)."""
        ids, mask = self._inputs(rows, length)
        encoder = self.model.encoder
        with self._precision():
            pooled = encoder.pool(encoder(ids, mask), mask, pooling).float()
        return self.check_finite(pooled.cpu(), f"{pooling}-pooled hidden states", names)
