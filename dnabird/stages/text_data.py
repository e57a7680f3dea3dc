"""Stage `text_data`: the generated text of the NLP track's demos and tests (nothing is downloaded).

Writes what its config asks for (`dnabird.datasets.synthetic_text`, `synthetic_summaries`): the long-range
classification task's splits, plain-text documents for MLM, a text8-format file for the character LM,
SQuAD-format files for QA, the long-document summarisation task's splits. Outputs are named
`long_range_<split>`, `documents_<split>`, `text8`, `squad_<split>`, `summaries_<split>`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dnabird.datasets import synthetic_summaries, synthetic_text
from dnabird.errors import ParameterError
from dnabird.pipeline import RunContext, Stage
from dnabird.stages import outputs_of


@dataclass
class LongRangeData:
    """length: tokens per document (with [CLS] and [SEP]); train, validation, test: documents per split."""

    length: int = 1024
    train: int = 2000
    validation: int = 200
    test: int = 500


@dataclass
class SummaryTaskData:
    """min_words, max_words: words per document; facts: findings per document (the summary's entities);
    train, validation, test: documents per split. warmup: short documents (`warmup_words` words, findings
    anywhere) for a first training stage, `summaries_warmup_<split>` (validation and test: `validation` each);
    0: none."""

    min_words: int = 1500
    max_words: int = 2998
    facts: int = 4
    train: int = 2000
    validation: int = 100
    test: int = 200
    warmup: int = 0
    warmup_words: tuple[int, int] = (48, 96)


@dataclass
class TextDataConfig:
    """What to generate (0 / null: nothing of that kind).

    long_range: the long-range classification task (`LongRangeData`).
    documents: plain-text documents for MLM training (and a tenth as many, at least 2, for validation).
    text8_bytes: size of a text8-format file (a–z and spaces; split 90/5/5 by the character LM).
    squad_paragraphs: SQuAD-format training paragraphs (and a fifth as many, at least 2, for validation).
    summaries: the long-document summarisation task (`SummaryTaskData`).
    seed: the generators' seed.
    """

    long_range: LongRangeData | None = None
    documents: int = 0
    text8_bytes: int = 0
    squad_paragraphs: int = 0
    summaries: SummaryTaskData | None = None
    seed: int = 0

    def __post_init__(self):
        for name in ("documents", "text8_bytes", "squad_paragraphs"):
            if getattr(self, name) < 0:
                raise ParameterError(name, getattr(self, name), "an integer >= 0")


def run(config: TextDataConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    outputs: dict[str, Path] = {}
    if config.long_range is not None:
        task = config.long_range
        paths = synthetic_text.write_long_range(stage_dir / "long_range", length=task.length, seed=config.seed,
                                                sizes={"train": task.train, "validation": task.validation,
                                                       "test": task.test})
        outputs.update({f"long_range_{split}": path for split, path in paths.items()})
    for kind, count, validation_share, write, suffix in (
            ("documents", config.documents, 10, synthetic_text.write_documents, ".txt"),
            ("squad", config.squad_paragraphs, 5, synthetic_text.write_squad, ".json")):
        if count:  # a training file, and a smaller validation file of the next seed
            for split, size, seed in (("train", count, config.seed),
                                      ("validation", max(2, count // validation_share), config.seed + 1)):
                outputs[f"{kind}_{split}"] = write(stage_dir / kind / f"{split}{suffix}", size, seed=seed)
    if config.text8_bytes:
        outputs["text8"] = synthetic_text.write_text8(stage_dir / "text8", config.text8_bytes, seed=config.seed)
    if config.summaries is not None:
        task = config.summaries
        paths = synthetic_summaries.write_summaries(
            stage_dir / "summaries", sizes={"train": task.train, "validation": task.validation, "test": task.test},
            min_words=task.min_words, max_words=task.max_words, facts=task.facts, seed=config.seed)
        outputs.update({f"summaries_{split}": path for split, path in paths.items()})
        if task.warmup:
            paths = synthetic_summaries.write_summaries(
                stage_dir / "summaries_warmup",
                sizes={"train": task.warmup, "validation": task.validation, "test": task.validation},
                min_words=task.warmup_words[0], max_words=task.warmup_words[1], facts=task.facts,
                seed=config.seed, hidden_from=0)
            outputs.update({f"summaries_warmup_{split}": path for split, path in paths.items()})
    return outputs


STAGE = Stage("text_data", TextDataConfig, outputs_of(), run)  # generated: reads nothing
