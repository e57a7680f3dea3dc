"""TargetTransform: forward and inverse against hand-computed values, and task.json's validation of it."""

import numpy as np
import pytest

from dnabird.errors import ConfigError
from dnabird.model.targets import TargetTransform
from dnabird.model.task_spec import TaskSpec


def test_forward_and_inverse_match_hand_computed_values():
    transform = TargetTransform(log1p=True, mean=(1.0, 0.0), std=(2.0, 0.5))
    y = np.array([[np.e - 1, 0.0], [np.e ** 3 - 1, np.e ** 0.5 - 1]])
    t = transform.forward(y)
    np.testing.assert_allclose(t, [[(1 - 1) / 2, 0 / 0.5], [(3 - 1) / 2, 0.5 / 0.5]])
    np.testing.assert_allclose(transform.inverse(t), y)
    assert transform.scale == "log1p_standardised"


def test_exp_link_inverts_a_log_rate_output():
    transform = TargetTransform(link="exp")
    np.testing.assert_allclose(transform.inverse(np.log([[2.0], [5.0]])), [[2.0], [5.0]])
    assert TargetTransform().scale == "identity"


@pytest.mark.parametrize("bad", [{"link": "softplus"}, {"mean": [0.0]}, {"mean": [0.0], "std": [0.0]},
                                 {"mean": [0.0, 1.0], "std": [1.0]}, {"log1p": "yes"}, {"scale": 2}])
def test_an_invalid_transform_names_its_field(bad):
    with pytest.raises(ConfigError, match="target_transform"):
        TargetTransform.from_dict(bad)


def test_task_json_round_trips_a_regression_spec_and_refuses_a_transform_elsewhere():
    spec = TaskSpec(task="labelled", problem="regression", labels=["dev", "hk"], eval_length=16,
                    target_transform={"log1p": False, "mean": [0.5, 1.0], "std": [1.0, 2.0], "link": "identity"})
    assert TaskSpec.from_dict(spec.to_dict()) == spec
    assert spec.transform.mean == (0.5, 1.0)
    with pytest.raises(ConfigError, match="target_transform"):
        TaskSpec(task="t", problem="binary", labels=["p"], eval_length=16, target_transform={"log1p": True})
    with pytest.raises(ConfigError, match="each of the 2 target"):
        TaskSpec(task="t", problem="regression", labels=["a", "b"], eval_length=16,
                 target_transform={"mean": [0.0], "std": [1.0]})
