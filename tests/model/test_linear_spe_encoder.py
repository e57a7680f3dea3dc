"""Linear kernels and SPE selected through EncoderConfig: validation, seeds, and a forward/backward pass."""

import pytest
import torch

from dnabird.attention import Performer
from dnabird.errors import ConfigError, ParameterError
from dnabird.model.config import EncoderConfig, build_encoder_config, tiny
from dnabird.model.encoder import Encoder, layer_seed, spe_seed


def config(**overrides):
    settings = dict(vocab_size=40, hidden_size=32, num_heads=4, intermediate_size=64, max_positions=256,
                    dropout=0.0, attention={"type": "performer", "num_features": 16, "redraw": 10},
                    positional="spe", spe={"kind": "sine", "realizations": 8, "num_sines": 3})
    return tiny(**{**settings, **overrides})


def test_linear_kernels_and_spe_are_config_options():
    cfg = config()
    assert cfg.pattern(0) == Performer(4, num_features=16, redraw=10)
    assert EncoderConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ParameterError, match="attention.num_feature=.*no such key"):
        config(attention={"type": "performer", "num_feature": 16})
    with pytest.raises(ParameterError, match="attention_dropout=0.1.*performer"):
        config(attention_dropout=0.1)
    with pytest.raises(ParameterError, match="spe.sines.*no such key"):
        config(spe={"sines": 3})
    with pytest.raises(ParameterError, match="spe=.*unless positional is 'spe'"):
        config(positional="learned")
    with pytest.raises(ParameterError, match="spe.kind='fourier'"):
        config(spe={"kind": "fourier"})
    with pytest.raises(ConfigError, match="realizations"):
        build_encoder_config("tiny", {"positional": "spe", "spe": {"realizations": "many"}})
    assert config(causal=True).causal  # linear kernels have a causal form


def test_seeds_follow_layer_step_and_redraw_policy():
    cfg = config()
    # Performer features: one draw per 10 training steps, per layer; evaluation fixed
    assert layer_seed(cfg, 0, 3, True) == layer_seed(cfg, 0, 9, True) != layer_seed(cfg, 0, 10, True)
    assert layer_seed(cfg, 0, 3, True) != layer_seed(cfg, 1, 3, True)
    assert layer_seed(cfg, 0, 3, False) == layer_seed(cfg, 0, 500, False)
    # SPE noise: every step, per layer unless shared
    assert spe_seed(cfg, 0, 1, True) != spe_seed(cfg, 0, 2, True)
    assert spe_seed(cfg, 0, 1, True) != spe_seed(cfg, 1, 1, True)
    shared = config(spe={"realizations": 8, "share_noise": True})
    assert spe_seed(shared, 0, 1, True) == spe_seed(shared, 1, 1, True)


@pytest.mark.parametrize("attention", [{"type": "performer", "num_features": 16}, {"type": "relu_linear"},
                                       {"type": "bigbird_itc", "block_size": 8, "num_random_blocks": 1}])
@pytest.mark.parametrize("kind", ["sine", "conv"])
def test_encoder_runs_with_spe_and_every_kernel(attention, kind):
    cfg = config(attention=attention, spe={"kind": kind, "realizations": 8, "kernel_size": 5})
    model = Encoder(cfg, seed=0)
    spe = model.layers[0].attention.spe
    assert spe is not None and all(p.abs().sum() > 0 for p in spe.parameters())  # initialised, not zeros
    ids = torch.randint(1, 40, (2, 70), generator=torch.Generator().manual_seed(0))
    mask = torch.ones(2, 70, dtype=torch.bool)
    mask[1, 50:] = False
    model.eval()
    a, b = model(ids, mask), model(ids, mask)
    torch.testing.assert_close(a, b, rtol=0, atol=0)  # evaluation is deterministic
    # a padded example gives the same real-token states as the example alone (same positions, same codes;
    # BigBird's random blocks depend on the length)
    if attention["type"] != "bigbird_itc":
        alone = model(ids[1:, :50])
        torch.testing.assert_close(a[1, :50], alone[0], rtol=1e-4, atol=1e-4)
    model.train()
    out = model(ids, mask, step=3)
    out.sum().backward()
    assert all(p.grad is not None for p in spe.parameters())
    assert (model(ids, mask, step=4) - model(ids, mask, step=3)).abs().max() > 1e-4  # fresh noise per step
