"""`dnabird.stages.filled`: null fields, `<stage>:<output>` references (alone or in a list of files) and
plain values, against paths written out by hand."""

from dataclasses import dataclass, field

import pytest

from dnabird.errors import ConfigError
from dnabird.pipeline import RunContext
from dnabird.stages import filled


@dataclass
class Train:
    out_dir: str = "runs/x"


@dataclass
class Data:
    train: str | None = None


@dataclass
class Config:
    files: list[str] | None = None
    pretrained: str | None = "none"
    tokenizer: str | None = None
    data: Data = field(default_factory=Data)
    train: Train = field(default_factory=Train)


SOURCES = {"files": ("text_data", "documents_train"), "pretrained": ("text_mlm", "model"),
           "tokenizer": ("text_tokenizer", "model"), "data.train": ("text_data", "long_range_train")}


def context(tmp_path):
    return RunContext(tmp_path, {"text_data": {"documents_train": "d/docs.txt", "long_range_train": "d/lr.jsonl"},
                                 "text_mlm": {"model": "mlm/model"}, "text_tokenizer": {"model": "tok/text.model"}})


def test_null_fields_come_from_their_sources_and_plain_values_stay(tmp_path):
    config = filled(Config(), context(tmp_path), tmp_path / "stage", SOURCES)
    assert config.files == str(tmp_path / "d/docs.txt")
    assert config.tokenizer == str(tmp_path / "tok/text.model")
    assert config.data.train == str(tmp_path / "d/lr.jsonl")
    assert config.pretrained == "none"            # a value of its own, not a reference
    assert config.train.out_dir == str(tmp_path / "stage")


def test_references_name_other_outputs_alone_and_in_lists(tmp_path):
    config = Config(files=["text_data:long_range_train", "extra.txt"], pretrained="text_mlm:model",
                    data=Data(train="text_data:documents_train"))
    config = filled(config, context(tmp_path), None, SOURCES)
    assert config.files == [str(tmp_path / "d/lr.jsonl"), "extra.txt"]
    assert config.pretrained == str(tmp_path / "mlm/model")
    assert config.data.train == str(tmp_path / "d/docs.txt")
    assert config.train.out_dir == "runs/x"


def test_a_reference_to_a_missing_output_names_it(tmp_path):
    with pytest.raises(ConfigError, match="'summaries_train' of stage 'text_data'"):
        filled(Config(files=["text_data:summaries_train"]), context(tmp_path), None, SOURCES)
