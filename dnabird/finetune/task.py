"""The task protocol: `Task`, what one supervised task hands the fine-tuning recipe, the task stage and the
comparison stage. A task module defines a `Task` subclass and its one instance `TASK`; `dnabird.tasks.TASKS`
names the module.

A task's config is a dataclass (usually `FinetuneConfig` with a `data` section). Its `stage_inputs` map a
config field (`data.<field>`, `tokenizer` or `pretrained`) to the (stage, output) that fills it inside
`dnabird run` when it is null (`optional_inputs`: only when that stage has the output); a config value
written `<stage>:<output>` names another output of an earlier stage.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from dnabird.finetune.config import FROM_SCRATCH
from dnabird.finetune.data import TaskData
from dnabird.finetune.evaluate import Scoring


class Task:
    """One supervised task. Subclasses set the class attributes and `build` (a classifier fine-tuned by the
    recipe), or override `finetune` (a task with its own training, e.g. summarisation).

    name: the registry name (`dnabird.tasks.TASKS`), written into its `TaskSpec`.
    config: its config dataclass. tokenizer: its tokenizer class (None: the DNA tokenizers).
    stage_inputs, optional_inputs: config field -> (stage, output) filling it when null (module docstring).
    outputs: files of its run folder a pipeline stage exposes beside model, report and metrics.
    """

    name: ClassVar[str]
    config: ClassVar[type]
    tokenizer: ClassVar[type | None] = None
    stage_inputs: ClassVar[Mapping[str, tuple[str, str]]] = {}
    optional_inputs: ClassVar[Mapping[str, tuple[str, str]]] = {}
    outputs: ClassVar[Mapping[str, str]] = {}

    def sources(self, config) -> Mapping[str, tuple[str, str]]:
        """The `stage_inputs` a run of `config` fills (a task may leave some to its config)."""
        return self.stage_inputs

    def input_files(self, config) -> list[Path]:
        """The files a run of `config` (its paths filled) reads, whose content keys its pipeline stage: its
        input fields', its tokenizer and its checkpoint (none from scratch)."""
        names = [*self.sources(config), *self.optional_inputs, "tokenizer", "pretrained"]
        values = [getattr(config.data if name.startswith("data.") else config, name.removeprefix("data."), None)
                  for name in dict.fromkeys(names)]
        return [Path(value) for value in values if value not in (None, FROM_SCRATCH)]

    def build(self, config, tokenizer, *, block_size: int, out_dir: Path) -> TaskData:
        """The task's data, encoded with `tokenizer` to a multiple of `block_size`; may write into `out_dir`."""
        raise NotImplementedError(f"task {self.name!r} has no build(): it runs its own finetune()")

    def encoder_overrides(self, model_config) -> dict:
        """`EncoderConfig` fields the task changes over the model fine-tuned (none by default)."""
        return {}

    def report(self, data: TaskData, config, scoring: Scoring) -> dict:
        """The test section of report.json (`test` with its rows, and `token_lengths`), written beside any
        plots into `config.train.out_dir`: by default the model beside its baselines
        (`dnabird.finetune.recipe.classification_report`)."""
        from dnabird.finetune.recipe import classification_report

        return classification_report(data, config, scoring)

    def finetune(self, config, *, resume: bool = False) -> dict:
        """Fine-tune into `config.train.out_dir` and report on test (`dnabird.finetune.recipe.finetune`)."""
        from dnabird.finetune.recipe import finetune

        return finetune(self, config, resume=resume)

    def table(self, reports: dict[str, dict], seconds: dict[str, float], configs: dict[str, object]) -> str:
        """The comparison stage's results table of several runs (name -> report, wall seconds, config)."""
        from dnabird.finetune.report import comparison_table

        return comparison_table(reports)
