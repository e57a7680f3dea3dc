import pytest

from dnabird.errors import ParameterError
from dnabird.train.schedule import warmup_linear_decay


def test_warmup_then_linear_decay_by_hand():
    lr = [warmup_linear_decay(s, peak_lr=1.0, warmup_steps=4, total_steps=12) for s in range(13)]
    assert lr[:4] == [0.25, 0.5, 0.75, 1.0]
    # after warmup: (12 - s) / 8
    assert lr[4:] == [1.0, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125, 0.0]


def test_no_warmup_and_bad_arguments():
    assert warmup_linear_decay(0, peak_lr=2.0, warmup_steps=0, total_steps=4) == 2.0
    with pytest.raises(ParameterError, match="total_steps"):
        warmup_linear_decay(0, peak_lr=1.0, warmup_steps=0, total_steps=0)
