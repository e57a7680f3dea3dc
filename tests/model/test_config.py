import json

import pytest

from dnabird.errors import ConfigError, ParameterError
from dnabird.model.config import EncoderConfig, bigbird_base, preset, tiny


def test_bigbird_base_matches_table_21():
    config = bigbird_base()
    dims = (config.num_layers, config.hidden_size, config.num_heads, config.intermediate_size)
    assert dims == (12, 768, 12, 3072)
    assert (config.max_positions, config.vocab_size) == (4096, 32000)
    assert config.attention == {"type": "bigbird_itc", "num_heads": 12, "block_size": 64, "window_blocks": 3,
                                "num_random_blocks": 3, "random_mode": "uniform"}
    assert config.head_size == 64


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_round_trip(tmp_path, suffix):
    config = tiny(dropout=0.0, activation="gelu", base_seed=7)
    config.save(tmp_path / f"config{suffix}")
    assert EncoderConfig.load(tmp_path / f"config{suffix}") == config


def test_unknown_key_fails_by_name(tmp_path):
    data = tiny().to_dict()
    data["hiden_size"] = 64
    (tmp_path / "config.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="hiden_size") as err:
        EncoderConfig.load(tmp_path / "config.json")
    assert "config.json" in str(err.value)


def test_invalid_values_are_named():
    with pytest.raises(ParameterError, match="hidden_size=102"):
        tiny(hidden_size=102)  # not a multiple of 4 heads
    with pytest.raises(ParameterError, match="activation='relu'"):
        tiny(activation="relu")
    with pytest.raises(ParameterError, match="attention.num_heads"):
        tiny(num_heads=8, hidden_size=128)  # pattern still has 4 heads
    with pytest.raises(ParameterError, match="preset='huge'"):
        preset("huge")
    with pytest.raises(ParameterError, match="head_size=33"):  # rotary pairs channels: 132 / 4 heads is odd
        tiny(positional="rotary", hidden_size=132)
    with pytest.raises(ParameterError, match="rotary base=1.0"):
        tiny(positional="rotary", rotary_base=1.0)


def test_malformed_yaml_names_file(tmp_path):
    (tmp_path / "bad.yaml").write_text("hidden_size: [1, 2\n")
    with pytest.raises(ConfigError, match="bad.yaml"):
        EncoderConfig.load(tmp_path / "bad.yaml")
