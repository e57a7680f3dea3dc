"""Stage `text_tokenizer`: train a sentencepiece text tokenizer (`dnabird.data.text_tokenizer`).

Its config is `TextTokenizerConfig`; with `files: null` it trains on the `text_data` stage's output named by
`source`.
"""

from __future__ import annotations

from pathlib import Path

from dnabird.data.text_tokenizer import TextTokenizerConfig, tokenizer_report, train_on_files
from dnabird.io import write_json_atomic
from dnabird.pipeline import RunContext, Stage

MODEL_NAME = "text.model"


def _files(config: TextTokenizerConfig, context: RunContext):
    return config.files if config.files is not None else str(context.output("text_data", config.source))


def inputs(config: TextTokenizerConfig, context: RunContext) -> list[Path]:
    files = _files(config, context)
    return [Path(f) for f in ([files] if isinstance(files, str) else files)]


def run(config: TextTokenizerConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    tokenizer = train_on_files(_files(config, context), stage_dir / MODEL_NAME, config)
    write_json_atomic(stage_dir / "report.json", tokenizer_report(tokenizer, config))
    return {"model": stage_dir / MODEL_NAME, "report": stage_dir / "report.json"}


STAGE = Stage("text_tokenizer", TextTokenizerConfig, inputs, run)
