import json

import pytest

from dnabird.errors import ConfigError, ParameterError
from dnabird.model.config import EncoderConfig, bigbird_base, build_encoder_config, preset, tiny


def test_bigbird_base_matches_table_21():
    config = bigbird_base()
    dims = (config.num_layers, config.hidden_size, config.num_heads, config.intermediate_size)
    assert dims == (12, 768, 12, 3072)
    assert (config.max_positions, config.vocab_size) == (4096, 32000)
    assert config.attention == {"type": "bigbird_itc", "block_size": 64, "window_blocks": 3,
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
        tiny(attention={"num_heads": 4})  # the pattern takes the encoder's num_heads
    with pytest.raises(ParameterError, match="attention.block_size=0"):
        tiny(attention={"block_size": 0})
    with pytest.raises(ParameterError, match="layer_attention\\[1\\].blocksize"):
        tiny(layer_attention=[{}, {"blocksize": 16}])
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


def test_attention_overrides_merge_into_the_pattern_and_a_new_type_starts_afresh():
    config = tiny(attention={"block_size": 32})
    assert config.attention == {"type": "bigbird_itc", "block_size": 32, "window_blocks": 3,
                                "num_random_blocks": 3, "random_mode": "uniform"}
    longformer = tiny(attention={"type": "longformer", "window": 64, "block_size": 16})
    assert longformer.attention == {"type": "longformer", "window": 64, "block_size": 16}


def test_the_pattern_takes_the_encoders_num_heads():
    config = tiny(num_heads=8)
    assert config.pattern().num_heads == 8
    assert config.pattern().layout(8, seed=0).key_blocks.shape[0] == 8


def test_configs_written_with_attention_num_heads_still_load_when_it_agrees(tmp_path):
    data = tiny().to_dict()
    data["attention"] = {**data["attention"], "num_heads": 4}  # how configs were written before
    (tmp_path / "config.json").write_text(json.dumps(data))
    assert EncoderConfig.load(tmp_path / "config.json") == tiny()
    data["attention"]["num_heads"] = 2
    (tmp_path / "config.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="delete attention.num_heads"):
        EncoderConfig.load(tmp_path / "config.json")


@pytest.mark.parametrize(("overrides", "message"), [
    ({"hiden_size": 64}, "model_overrides: unknown key 'hiden_size'"),
    ({"hidden_size": "wide"}, "model_overrides.hidden_size: expected int, got 'wide'"),
    ({"attention": {"blocksize": 32}}, "attention.blocksize=32 is invalid: expected no such key"),
    ({"attention": {"block_size": -1}}, "attention.block_size=-1 is invalid"),
    ({"attention": 32}, "attention: expected a mapping"),
    ({"layer_attention": [{}]}, "layer_attention=.* one mapping per layer"),
])
def test_config_file_overrides_fail_by_key(overrides, message):
    with pytest.raises(ConfigError, match=message):
        build_encoder_config("tiny", overrides)


def test_config_file_overrides_and_fixed_values():
    config = build_encoder_config("tiny", {"attention": {"num_random_blocks": 1}, "dropout": 0}, vocab_size=77)
    assert (config.vocab_size, config.dropout, config.attention["num_random_blocks"]) == (77, 0.0, 1)
    assert config.attention["window_blocks"] == 3
    with pytest.raises(ConfigError, match="model='huge'"):
        build_encoder_config("huge")


def test_one_path_from_a_stored_config_with_overrides_fixed_values_a_task_change_and_a_length():
    longformer = {"type": "longformer", "window": 32, "block_size": 16}
    stored = tiny(attention=longformer, pooling="centre", pool_tokens=8)
    config = build_encoder_config(stored, {"attention": {"window": 64}, "dropout": 0.3}, dropout=0.0,
                                  adjust=lambda c: {"attention": {**c.attention, "global_positions": [0]}},
                                  max_length=128)
    assert config.attention == {"type": "longformer", "window": 64, "block_size": 16, "global_positions": [0]}
    assert (config.dropout, config.pooling, config.pool_tokens) == (0.0, "centre", 8)
    assert config.pattern(1).global_positions == (0,)
    with pytest.raises(ParameterError, match="max_length=100 .*multiple of the attention block size 16"):
        build_encoder_config(stored, max_length=100)
    with pytest.raises(ConfigError, match="task's changes"):
        build_encoder_config(stored, adjust=lambda c: {"pool_tokens": -1})


def test_layer_attention_gives_each_layer_its_pattern_and_inputs_pad_to_every_block_size():
    config = tiny(layer_attention=[{"block_size": 16}, {"block_size": 24}])
    assert [config.pattern(i).block_size for i in range(2)] == [16, 24]
    assert config.length_multiple == 48
    assert tiny().length_multiple == 64
    windows = tiny(attention={"type": "longformer", "window": 32, "block_size": 16},
                   layer_attention=[{"window": 32}, {"window": 96}])
    assert [windows.pattern(i).window for i in range(2)] == [32, 96]


SPE_CONFIG = dict(positional="spe", spe={"kind": "conv", "realizations": 8, "kernel_size": 16},
                  layer_attention=[{"type": "full"}, {"block_size": 16, "dilation": [1, 1, 2, 2]}],
                  attention={"type": "longformer", "window": 32, "block_size": 16})


@pytest.mark.parametrize("field, change", [
    ("EncoderConfig.attention", lambda c: c.attention.__setitem__("random_mode", "hf")),
    ("EncoderConfig.attention", lambda c: c.attention.update(window=64)),
    ("EncoderConfig.attention", lambda c: c.attention.pop("window")),
    ("EncoderConfig.layer_attention", lambda c: c.layer_attention.append({})),
    ("EncoderConfig.layer_attention\\[0\\]", lambda c: c.layer_attention[0].__setitem__("type", "longformer")),
    ("EncoderConfig.layer_attention\\[1\\].dilation", lambda c: c.layer_attention[1]["dilation"].__setitem__(0, 2)),
    ("EncoderConfig.spe", lambda c: c.spe.__setitem__("realizations", 16)),
    ("EncoderConfig.spe", lambda c: c.spe.setdefault("gated", False)),
])
def test_nested_settings_are_read_only_and_a_change_names_the_field(field, change):
    config = tiny(**SPE_CONFIG)
    with pytest.raises(TypeError, match=f"^{field} is read-only: build a new config with dataclasses.replace"):
        change(config)
    assert config == tiny(**SPE_CONFIG)   # nothing changed
    assert config.spe["realizations"] == 8 and config.layer_attention[1]["dilation"] == [1, 1, 2, 2]


def test_a_built_models_config_is_read_only_and_new_configs_are_built_from_copies():
    import copy
    import dataclasses
    import pickle

    from dnabird.model.encoder import Encoder

    model = Encoder(tiny(num_layers=2, **SPE_CONFIG))
    with pytest.raises(TypeError, match="EncoderConfig.attention is read-only"):
        model.config.attention["window"] = 64
    config = model.config
    # a plain mutable copy is what a caller edits to build another config
    settings = config.to_dict()
    settings["attention"]["window"] = 64
    wider = EncoderConfig.from_dict(settings)
    assert (wider.attention["window"], config.attention["window"]) == (64, 32)
    assert dataclasses.replace(config, attention={**config.attention, "window": 64}) == wider
    with pytest.raises(TypeError, match="EncoderConfig.attention is read-only"):
        dataclasses.replace(config, base_seed=3).attention["window"] = 64
    # equal configs hash alike; copies and pickles stay equal and read-only
    assert hash(config) == hash(tiny(num_layers=2, **SPE_CONFIG)) and len({config, wider, config}) == 2
    for other in (copy.deepcopy(config), pickle.loads(pickle.dumps(config))):
        assert other == config
        with pytest.raises(TypeError, match="EncoderConfig.spe is read-only"):
            other.spe["kind"] = "sine"
    # serialised as plain data, by the same keys and values as the settings it was built from
    expected = {**tiny().to_dict(), "num_layers": 2, **SPE_CONFIG}
    assert json.loads(json.dumps(dataclasses.asdict(config))) == expected == config.to_dict()
    assert all(type(config.to_dict()[name]) is type(SPE_CONFIG[name]) for name in SPE_CONFIG)


def test_a_checkpoints_config_round_trips_byte_identically(embedded_default, tmp_path):
    from dnabird.model.checkpoint import read_config, save_checkpoint
    from dnabird.model.encoder import Encoder

    stored = embedded_default.checkpoint / "config.json"
    read_config(embedded_default.checkpoint).save(tmp_path / "config.json")
    assert (tmp_path / "config.json").read_bytes() == stored.read_bytes()
    model = Encoder(tiny(num_layers=2, **SPE_CONFIG))
    save_checkpoint(model, tmp_path / "model")
    assert read_config(tmp_path / "model") == model.config
    expected = json.dumps({**tiny().to_dict(), "num_layers": 2, **SPE_CONFIG}, indent=2) + "\n"
    assert (tmp_path / "model" / "config.json").read_text() == expected
