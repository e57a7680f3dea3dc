"""Labelled text files: JSONL and TSV, with errors naming the file and line."""

import pytest

from dnabird.data.labelled_text import read_labelled
from dnabird.errors import InputFormatError


def test_jsonl_and_tsv(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"text": "good film", "label": "pos"}\n\n{"text": "bad", "label": 0}\n')
    assert read_labelled(tmp_path / "a.jsonl") == (["good film", "bad"], ["pos", "0"])
    (tmp_path / "a.tsv").write_text("id\tlabel\ttext\n1\tpos\tgood \"film\"\n2\tneg\tbad\n")
    assert read_labelled(tmp_path / "a.tsv") == (['good "film"', "bad"], ["pos", "neg"])
    (tmp_path / "b.tsv").write_text("sentence\ty\nfine\t1\n")
    assert read_labelled(tmp_path / "b.tsv", text_field="sentence", label_field="y") == (["fine"], ["1"])


@pytest.mark.parametrize("name, content, message", [
    ("c.jsonl", '{"text": "x", "label": "a"}\n{"text": "y"}\n', r"c.jsonl, line 2: expected a string 'text'"),
    ("d.jsonl", '{"text": "x", "label": true}\n', r"line 1: .*got str and bool"),
    ("e.tsv", "text\tlabel\nx\ta\ty\n", r"e.tsv, line 2: expected 2 tab-separated columns, got 3"),
    ("f.tsv", "body\tlabel\nx\ta\n", r"f.tsv, line 1: the header names no 'text' column"),
])
def test_errors_name_the_line(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    with pytest.raises(InputFormatError, match=message):
        read_labelled(tmp_path / name)
    with pytest.raises(InputFormatError, match="not found"):
        read_labelled(tmp_path / "absent.tsv")
