"""Hugging Face LED and BigBird-Pegasus import: encoder states, teacher-forced logits and generated tokens
against transformers' own models (small random ones made here), through `save_pretrained` directories."""

import pytest
import torch

from dnabird.errors import CheckpointError
from dnabird.model.generation import GenerationSettings, generate
from dnabird.model.hf_bigbird_pegasus import from_hf_bigbird_pegasus
from dnabird.model.hf_led import from_hf_led
from dnabird.model.hf_seq2seq import save_imported
from dnabird.model.seq2seq import load_seq2seq

transformers = pytest.importorskip("transformers")
from transformers import (  # noqa: E402
    BigBirdPegasusConfig,
    BigBirdPegasusForConditionalGeneration,
    GenerationConfig,
    LEDConfig,
    LEDForConditionalGeneration,
)

SIZES = dict(vocab_size=300, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
             decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=96, dropout=0.0, attention_dropout=0.0,
             init_std=0.1)


def random_model(cls, config, seed=0):
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = cls(config)
        with torch.no_grad():  # a bias that makes greedy outputs vary (a fresh model's is all zero)
            model.final_logits_bias.normal_(0.0, 1.0)
    return model


def led():
    config = LEDConfig(**SIZES, max_encoder_position_embeddings=512, max_decoder_position_embeddings=64,
                       attention_window=[32, 16])
    return random_model(LEDForConditionalGeneration, config).eval()


def bigbird_pegasus():
    config = BigBirdPegasusConfig(**SIZES, max_position_embeddings=1024, block_size=16, num_random_blocks=2)
    return random_model(BigBirdPegasusForConditionalGeneration, config).train()  # HF's eval zeroes random blocks


def inputs(length, padded_from, pad, first=None):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(5, 120, (2, length), generator=g)
    if first is not None:
        ids[:, 0] = first
    mask = torch.ones(2, length, dtype=torch.long)
    mask[1, padded_from:] = 0
    ids[1, padded_from:] = pad
    targets = torch.randint(5, 120, (2, 20), generator=g)
    return ids, mask, targets


def test_led_parity_through_save_pretrained(tmp_path):
    hf_model = led()
    hf_model.save_pretrained(tmp_path)
    ours = from_hf_led(tmp_path).eval()
    assert ours.config.encoder.pattern(0).global_positions == (0,) and ours.config.encoder.pattern(1).window == 16
    ids, mask, targets = inputs(300, 250, pad=1, first=0)
    global_mask = torch.zeros_like(mask)
    global_mask[:, 0] = 1  # LED's advice for summarisation, and dnabird's imported pattern
    decoder_ids = torch.cat([torch.full((2, 1), 2), targets[:, :-1]], dim=1)
    with torch.no_grad():
        expected = hf_model(input_ids=ids, attention_mask=mask, global_attention_mask=global_mask,
                            decoder_input_ids=decoder_ids)
        hidden = ours.encode(ids, mask)
        logits = ours(ids, mask, decoder_input_ids=decoder_ids).logits
    real = mask.bool()
    torch.testing.assert_close(hidden[real], expected.encoder_last_hidden_state[real], rtol=0, atol=1e-5)
    torch.testing.assert_close(logits, expected.logits, rtol=0, atol=1e-5)


def test_bigbird_pegasus_parity_in_train_mode(tmp_path):
    """Train mode, dropout 0, 400 tokens (above (5 + 2r)·b = 144): transformers' random blocks are dnabird's."""
    hf_model = bigbird_pegasus()
    hf_model.save_pretrained(tmp_path)
    ours = from_hf_bigbird_pegasus(tmp_path).train()
    assert ours.config.encoder.pre_norm and ours.config.encoder.embedding_scale == 8.0
    ids, mask, targets = inputs(400, 350, pad=0)
    decoder_ids = torch.cat([torch.full((2, 1), 2), targets[:, :-1]], dim=1)
    with torch.no_grad():
        expected = hf_model(input_ids=ids, attention_mask=mask, decoder_input_ids=decoder_ids)
        hidden = ours.encode(ids, mask)
        logits = ours(ids, mask, decoder_input_ids=decoder_ids).logits
    real = mask.bool()
    torch.testing.assert_close(hidden[real], expected.encoder_last_hidden_state[real], rtol=0, atol=1e-5)
    torch.testing.assert_close(logits, expected.logits, rtol=0, atol=1e-5)


@pytest.mark.parametrize("beams", [1, 3])
def test_led_generation_equals_transformers(beams):
    hf_model = led()
    ours = from_hf_led(hf_model)
    ids, mask, _ = inputs(300, 250, pad=1, first=0)
    global_mask = torch.zeros_like(mask)
    global_mask[:, 0] = 1
    config = GenerationConfig(num_beams=beams, max_length=13, length_penalty=1.5, early_stopping=False,
                              decoder_start_token_id=2, eos_token_id=2, pad_token_id=1, bos_token_id=0)
    with torch.no_grad():
        expected = hf_model.generate(input_ids=ids, attention_mask=mask, global_attention_mask=global_mask,
                                     generation_config=config)
    for use_cache in (True, False):
        got = generate(ours, ids, mask, settings=GenerationSettings(num_beams=beams, max_length=12, length_penalty=1.5,
                                                                    use_cache=use_cache))
        for row, tokens in zip(expected.tolist(), got, strict=True):
            assert tokens == [t for t in row[1:] if t != 1][:len(tokens)] and len(tokens) == len(
                [t for t in row[1:] if t != 1])


def test_bigbird_pegasus_greedy_equals_transformers():
    hf_model = bigbird_pegasus()
    ours = from_hf_bigbird_pegasus(hf_model)
    ids, mask, _ = inputs(400, 350, pad=0)
    config = GenerationConfig(num_beams=1, max_length=11, decoder_start_token_id=2, eos_token_id=1, pad_token_id=0)
    with torch.no_grad():
        expected = hf_model.generate(input_ids=ids, attention_mask=mask, generation_config=config)
    got = generate(ours, ids, mask, settings=GenerationSettings(max_length=10))  # eval: the same fixed layout
    assert got == [[t for t in row[1:] if t != 0] for row in expected.tolist()]


def test_checkpoint_round_trip_with_tokenizer(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    hf_model = led()
    hf_model.save_pretrained(tmp_path / "hf")
    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator(["a long document about the sea"] * 20, vocab_size=290,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(str(tmp_path / "hf"))
    save_imported(from_hf_led(tmp_path / "hf"), tmp_path / "hf", tmp_path / "ours")
    assert (tmp_path / "ours" / "tokenizer.json").is_file()
    reloaded = load_seq2seq(tmp_path / "ours").eval()
    ids, mask, targets = inputs(300, 250, pad=1, first=0)
    with torch.no_grad():
        expected = hf_model(input_ids=ids, attention_mask=mask, decoder_input_ids=targets,
                            global_attention_mask=torch.nn.functional.one_hot(torch.zeros(2, dtype=torch.long),
                                                                              300)).logits
        got = reloaded(ids, mask, decoder_input_ids=targets).logits
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)


def test_untied_or_foreign_tensors_are_refused(tmp_path):
    hf_model = led()
    state = hf_model.state_dict()
    with torch.no_grad():
        hf_model.lm_head.weight = torch.nn.Parameter(state["led.shared.weight"] + 1)
    with pytest.raises(Exception, match="not tied"):
        from_hf_led(hf_model)
    with pytest.raises(CheckpointError, match="config.json"):
        from_hf_led(tmp_path)
