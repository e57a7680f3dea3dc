"""The helpers the text recipes share (`dnabird.text.training`, and `dnabird.errors.require_paths`)."""

import numpy as np
import pytest

from dnabird.errors import ParameterError, require_paths
from dnabird.text.qa import QAConfig
from dnabird.text.training import device_batches


def test_require_paths_names_the_first_null_dotted_key():
    config = QAConfig(tokenizer="t.model")
    require_paths(config, ("tokenizer",))
    with pytest.raises(ParameterError, match=r"data\.train.*a JSONL file \(set it in the YAML"):
        require_paths(config, ("tokenizer", "data.train", "data.validation"), "a JSONL file")


def test_device_batches_cover_the_first_rows_once_in_order():
    examples = [{"x": np.array([i])} for i in range(7)]
    got = list(device_batches(examples, 5, 2, "cpu", "test"))
    assert [list(rows) for rows, _ in got] == [[0, 1], [2, 3], [4]]
    assert [batch["x"].flatten().tolist() for _, batch in got] == [[0, 1], [2, 3], [4]]


def test_the_shared_integer_check_words_its_error_by_minimum():
    from dnabird.errors import check_int

    check_int("n", 1)
    check_int("n", 0, 0)
    for value, minimum, expected in ((0, 1, "a positive integer"), (True, 1, "a positive integer"),
                                     (-1, 0, "an integer ≥ 0"), (2.0, 1, "a positive integer")):
        with pytest.raises(ParameterError, match=expected):
            check_int("n", value, minimum)
