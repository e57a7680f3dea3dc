"""The encoder-decoder: cached decoding equals teacher forcing, generation with and without the cache,
beam search with one beam equals greedy, configs round-trip, an encoder-only checkpoint is named."""

import pytest
import torch

from dnabird.errors import CheckpointError, ParameterError
from dnabird.model import PretrainingModel, save_checkpoint
from dnabird.model.config import tiny
from dnabird.model.generation import GenerationSettings, generate
from dnabird.model.seq2seq import EncoderDecoder, Seq2SeqConfig, load_seq2seq

BIAS_SEED = 1  # greedy outputs of several tokens, different for each input (test_generation_...)


def model(attention, **encoder):
    config = tiny(pooling="mean", attention=attention, dropout=0.0, vocab_size=64, hidden_size=32, num_heads=2,
                  intermediate_size=64, initializer_range=0.2, **encoder)
    seq2seq = Seq2SeqConfig(encoder=config, decoder_layers=2, decoder_heads=4, decoder_intermediate_size=48,
                            max_decoder_positions=32, decoder_start_token_id=0, eos_token_id=3)
    net = EncoderDecoder(seq2seq, seed=3).eval()
    with torch.no_grad():  # a bias of its own seed, not the global generator's: outputs that vary from step to step
        net.logits_bias.copy_(torch.randn(64, generator=torch.Generator().manual_seed(BIAS_SEED)) * 0.3)
    return net


ATTENTION = {"itc": {"type": "bigbird_itc", "block_size": 16, "num_random_blocks": 2},
             "longformer": {"type": "longformer", "window": 16, "block_size": 16, "global_positions": [0]}}


def inputs(length=128):
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 64, (3, length), generator=g)
    mask = torch.ones(3, length, dtype=torch.bool)
    mask[2, length // 2:] = False
    return ids, mask, torch.randint(5, 64, (3, 12), generator=g)


@pytest.mark.parametrize("name", sorted(ATTENTION))
@pytest.mark.parametrize("pre_norm", [False, True])
def test_cached_steps_equal_teacher_forcing(name, pre_norm):
    net = model(ATTENTION[name], pre_norm=pre_norm)
    ids, mask, target = inputs()
    with torch.no_grad():
        hidden = net.encode(ids, mask)
        whole = net.decode(target, hidden, mask)
        cache = net.decoder.new_cache(hidden, mask, capacity=12)
        steps = [net.decode(target[:, :4], None, None, cache)]
        steps += [net.decode(target[:, t:t + 1], None, None, cache) for t in range(4, 12)]
    torch.testing.assert_close(torch.cat(steps, dim=1), whole, rtol=0, atol=1e-5)


def greedy_by_hand(net, ids, mask, max_length):
    """Greedy decoding written out: each input alone, the whole prefix through `forward` at every step."""
    rows = []
    for row in range(ids.shape[0]):
        prefix = [net.config.decoder_start_token_id]
        while len(prefix) <= max_length and (len(prefix) == 1 or prefix[-1] != net.config.eos_token_id):
            with torch.no_grad():
                logits = net(ids[row:row + 1], mask[row:row + 1], decoder_input_ids=torch.tensor([prefix])).logits
            prefix.append(int(logits[0, -1].argmax()))
        rows.append(prefix[1:])
    return rows


def test_generation_with_and_without_cache_and_one_beam():
    net = model(ATTENTION["itc"])
    ids, mask, _ = inputs()
    greedy = generate(net, ids, mask, settings=GenerationSettings(max_length=10))
    assert greedy == greedy_by_hand(net, ids, mask, 10)
    assert greedy == generate(net, ids, mask, settings=GenerationSettings(max_length=10, use_cache=False))
    assert greedy == generate(net, ids, mask, settings=GenerationSettings(num_beams=1, max_length=10))
    beams = generate(net, ids, mask, settings=GenerationSettings(num_beams=4, max_length=10, length_penalty=0.5))
    assert beams == generate(net, ids, mask, settings=GenerationSettings(num_beams=4, max_length=10,
                                                                         length_penalty=0.5, use_cache=False))
    assert all(len(row) <= 10 for row in greedy + beams)
    # outputs that vary with the step and the input, so that a wrong cache or a wrong row would show
    assert all(len(set(row)) > 1 for row in greedy) and len({tuple(row) for row in greedy}) == len(greedy)


def test_beam_search_scores_no_worse_than_greedy():
    """Beam search keeps the best length-normalised hypothesis it finds; greedy's is one of its candidates
    when no hypothesis ends early, so the beam's sum of log-probabilities is at least greedy's."""
    net = model(ATTENTION["longformer"])
    net.config.eos_token_id = 63
    with torch.no_grad():
        net.logits_bias[63] = -50.0  # nothing ends: every hypothesis runs to max_length
    ids, mask, _ = inputs()

    def log_prob(rows):
        target = torch.tensor(rows)
        decoder_ids = torch.cat([torch.zeros(len(rows), 1, dtype=torch.long), target[:, :-1]], dim=1)
        with torch.no_grad():
            logits = net(ids, mask, decoder_input_ids=decoder_ids).logits.log_softmax(-1)
        return logits.gather(2, target[..., None]).squeeze(-1).sum(-1)

    greedy = generate(net, ids, mask, settings=GenerationSettings(max_length=6))
    beams = generate(net, ids, mask, settings=GenerationSettings(num_beams=5, max_length=6, length_penalty=0.0))
    assert bool((log_prob(beams) >= log_prob(greedy) - 1e-5).all())


def test_config_round_trip_and_encoder_only_checkpoint(tmp_path):
    net = model(ATTENTION["itc"])
    save_checkpoint(net, tmp_path / "seq2seq")
    reloaded = load_seq2seq(tmp_path / "seq2seq")
    assert reloaded.config.to_dict() == net.config.to_dict()
    for name, tensor in net.state_dict().items():
        assert torch.equal(reloaded.state_dict()[name], tensor)
    save_checkpoint(PretrainingModel(tiny(vocab_size=64, hidden_size=32, num_heads=2)), tmp_path / "encoder")
    with pytest.raises(CheckpointError, match="encoder-only"):
        load_seq2seq(tmp_path / "encoder")


def test_a_checkpoint_runs_with_another_attention_pattern(tmp_path):
    """load_seq2seq(attention=...) equals a model built with that pattern holding the saved weights; a Longformer
    window that covers the whole input gives the full-attention model's logits (the pattern's meaning)."""
    full = model({"type": "full"})
    save_checkpoint(full, tmp_path / "full")
    ids, mask, decoder_ids = inputs(64)
    swapped = load_seq2seq(tmp_path / "full", attention=ATTENTION["longformer"]).eval()
    assert swapped.config.encoder.attention == ATTENTION["longformer"]
    built = model(ATTENTION["longformer"])  # LED's start: the global projections are copies of the local ones
    built.load_state_dict({**full.state_dict(), **{name: full.state_dict()[name.replace(".global_", ".")]
                                                   for name in built.state_dict() if ".global_" in name}})
    with torch.no_grad():
        assert torch.equal(swapped(ids, mask, decoder_input_ids=decoder_ids).logits,
                           built(ids, mask, decoder_input_ids=decoder_ids).logits)
        wide = load_seq2seq(tmp_path / "full", attention={**ATTENTION["longformer"], "window": 128}).eval()
        torch.testing.assert_close(wide(ids, mask, decoder_input_ids=decoder_ids).logits,
                                   full(ids, mask, decoder_input_ids=decoder_ids).logits, atol=1e-5, rtol=1e-5)
        narrow = swapped(ids, mask, decoder_input_ids=decoder_ids).logits
        assert not torch.allclose(narrow, full(ids, mask, decoder_input_ids=decoder_ids).logits, atol=1e-3)


def test_bad_settings_are_named():
    with pytest.raises(ParameterError, match="encoder.pooling"):
        Seq2SeqConfig(encoder=tiny())
    with pytest.raises(ParameterError, match="eos_token_id"):
        Seq2SeqConfig(encoder=tiny(pooling="mean"), eos_token_id=10**6)
    with pytest.raises(ParameterError, match="num_beams"):
        GenerationSettings(num_beams=0)
    net = model(ATTENTION["itc"])
    ids, mask, _ = inputs()
    with pytest.raises(ParameterError, match="decoder length"):
        generate(net, ids, mask, settings=GenerationSettings(max_length=40))
