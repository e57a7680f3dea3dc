import pytest
import torch

from dnabird.errors import ParameterError
from dnabird.model import Encoder, PretrainingModel, layer_seed, tiny


def small(**overrides):
    settings = dict(num_layers=1, hidden_size=32, num_heads=2, intermediate_size=64, vocab_size=64,
                    dropout=0.0, attention_dropout=0.0, max_positions=4200,
                    attention={"type": "bigbird_itc", "block_size": 16, "window_blocks": 3,
                               "num_random_blocks": 2, "random_mode": "uniform"})
    settings.update(overrides)
    return tiny(**settings)


def ids(batch, length, seed=0, vocab=64):
    return torch.randint(5, vocab, (batch, length), generator=torch.Generator().manual_seed(seed))


def test_padded_positions_do_not_change_real_outputs():
    encoder = Encoder(small(num_layers=2), seed=1).eval()
    tokens = ids(2, 200)
    mask = torch.ones(2, 200, dtype=torch.bool)
    mask[0, 150:] = False
    garbage = tokens.clone()
    garbage[0, 150:] = ids(1, 50, seed=9)
    with torch.no_grad():
        a, b = encoder(tokens, mask), encoder(garbage, mask)
        alone = encoder(tokens[:1], mask[:1])  # the same padded length without its batch neighbour
    assert torch.equal(a[0, :150], b[0, :150])
    torch.testing.assert_close(alone[0, :150], a[0, :150], rtol=0, atol=1e-6)
    # the padded content does reach padded rows, so the comparison above is not vacuous
    assert not torch.equal(a[0, 150:], b[0, 150:])


def test_reach_is_global_through_cls_and_sparse_elsewhere():
    config = small(attention={"type": "bigbird_itc", "block_size": 64, "window_blocks": 3,
                              "num_random_blocks": 3, "random_mode": "uniform"})
    encoder = Encoder(config, seed=0).eval()
    length, block = 4096, 64
    captured = {}
    encoder.embeddings.register_forward_hook(lambda module, args, out: captured.setdefault("x", out))
    hidden = encoder(ids(1, length))
    x = captured["x"]
    far = 4000
    probe = torch.randn(config.hidden_size, generator=torch.Generator().manual_seed(1))  # LN rows sum to 0
    grad_cls = torch.autograd.grad(hidden[0, 0] @ probe, x, retain_graph=True)[0][0]  # [L, H]
    assert grad_cls[far].abs().sum() > 0  # [CLS] (global block 0) sees token 4000
    # a query far from both ends, and a key block it reads in no head (not window, global or random)
    layout = config.pattern().layout(length // block, layer_seed(config, 0, 0, training=False))
    query_block = 30
    read = set(layout.key_blocks[:, query_block].flatten().tolist()) | {0, length // block - 1}
    key_block = next(b for b in range(40, 60) if b not in read)
    query, key = query_block * block + 5, key_block * block + 7
    grad = torch.autograd.grad(hidden[0, query] @ probe, x)[0][0]
    assert torch.count_nonzero(grad[key]) == 0  # exactly zero: the model is sparse
    reads = sorted(read - {query_block - 1, query_block, query_block + 1, 0, length // block - 1})
    assert grad[reads[0] * block].abs().sum() > 0  # while a random block it reads does reach it


def test_layer_seeds_follow_base_seed_layer_and_step():
    config = small()
    train = {layer_seed(config, layer, step, True) for layer in range(3) for step in range(3)}
    assert len(train) == 9
    assert layer_seed(config, 1, 0, False) == layer_seed(config, 1, 5, False)
    assert layer_seed(config, 1, 0, False) not in train
    assert layer_seed(small(base_seed=1), 1, 0, True) != layer_seed(config, 1, 0, True)
    fixed = small(reseed_each_step=False, base_seed=10)
    assert [layer_seed(fixed, 2, step, mode) for step in (0, 7) for mode in (True, False)] == [12] * 4


def test_random_layout_changes_with_step_in_training_only():
    encoder = Encoder(small(), seed=0)
    tokens = ids(1, 400)
    with torch.no_grad():
        step0, step1 = encoder.train()(tokens, step=0), encoder(tokens, step=1)
        eval0, eval1 = encoder.eval()(tokens, step=0), encoder(tokens, step=1)
    assert not torch.allclose(step0, step1)
    assert torch.equal(eval0, eval1)


def test_gradient_checkpointing_gives_same_gradients():
    model = PretrainingModel(small(num_layers=2), seed=0).train()
    tokens = ids(2, 160)
    labels = torch.full_like(tokens, -100)
    labels[:, 20:40] = tokens[:, 20:40]

    def grads():
        model.zero_grad()
        model(tokens, mlm_labels=labels, nsp_labels=torch.tensor([0, 1]), step=3).loss.backward()
        return {n: p.grad.clone() for n, p in model.named_parameters()}

    plain = grads()
    model.encoder.gradient_checkpointing = True
    checkpointed = grads()
    for name, grad in plain.items():
        torch.testing.assert_close(checkpointed[name], grad, rtol=0, atol=1e-6, msg=name)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_autocast(dtype):
    encoder = Encoder(small(), seed=0).eval()
    tokens = ids(2, 160)
    with torch.no_grad():
        reference = encoder(tokens)
        with torch.autocast("cpu", dtype=dtype):
            low = encoder(tokens)
    assert not torch.equal(low.float(), reference)  # the low-precision path really ran
    torch.testing.assert_close(low.float(), reference, rtol=0, atol=0.1)


def test_longformer_layers_carry_global_projections():
    config = small(attention={"type": "longformer", "window": 32, "block_size": 16})
    encoder = Encoder(config, seed=0).eval()
    attention = encoder.layers[0].attention
    for local, global_ in ((attention.query, attention.global_query), (attention.key, attention.global_key),
                           (attention.value, attention.global_value)):
        assert torch.equal(local.weight, global_.weight) and torch.equal(local.bias, global_.bias)
    tokens = ids(1, 128)
    with torch.no_grad():
        before = encoder(tokens, global_positions=(0,))
        attention.global_query.weight.normal_(0, 0.5, generator=torch.Generator().manual_seed(0))
        after = encoder(tokens, global_positions=(0,))
    assert not torch.allclose(before[0, 0], after[0, 0])  # the global row uses the global projections
    with pytest.raises(ParameterError, match="global_positions"):
        Encoder(small(), seed=0)(tokens, global_positions=(0,))


@pytest.mark.parametrize("pre_norm", [False, True])
def test_a_layer_with_full_attention_matches_torch_transformer_encoder_layer(pre_norm):
    config = small(pre_norm=pre_norm, activation="gelu", layer_norm_eps=1e-5,
                   attention={"type": "full"})
    ours = Encoder(config, seed=3).layers[0].eval()
    peer = torch.nn.TransformerEncoderLayer(32, 2, 64, dropout=0.0, activation="gelu", batch_first=True,
                                            norm_first=pre_norm).eval()
    with torch.no_grad():
        for param in ours.parameters():  # not LayerNorm's 1 / 0: the peer must read every tensor
            param.normal_(0, 0.3, generator=torch.Generator().manual_seed(param.numel()))
        attn = ours.attention
        peer.self_attn.in_proj_weight.copy_(torch.cat([attn.query.weight, attn.key.weight, attn.value.weight]))
        peer.self_attn.in_proj_bias.copy_(torch.cat([attn.query.bias, attn.key.bias, attn.value.bias]))
        for mine, theirs in ((attn.output, peer.self_attn.out_proj), (ours.ffn_in, peer.linear1),
                             (ours.ffn_out, peer.linear2), (ours.attention_norm, peer.norm1),
                             (ours.ffn_norm, peer.norm2)):
            theirs.load_state_dict(mine.state_dict())
        x = torch.randn(2, 48, 32, generator=torch.Generator().manual_seed(0))
        expected = peer(x)
        out = ours(x, None, config.pattern(), seed=0)
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-5)


def test_pre_norm_encoder_ends_with_a_layer_norm():
    encoder = Encoder(small(pre_norm=True), seed=0).eval()
    with torch.no_grad():
        hidden = encoder(ids(2, 64))
    torch.testing.assert_close(hidden.mean(-1), torch.zeros(2, 64), rtol=0, atol=1e-5)
    torch.testing.assert_close(hidden.var(-1, unbiased=False), torch.ones(2, 64), rtol=0, atol=1e-3)
    assert Encoder(small(), seed=0).final_norm is None


@pytest.mark.parametrize("positional", ["rotary", "learned"])
def test_rotary_encoder_sees_relative_positions_only(positional):
    def hidden(offset):
        config = small(positional=positional, position_offset=offset, attention={"type": "full"})
        with torch.no_grad():
            return Encoder(config, seed=0).eval()(ids(2, 64))

    moved = (hidden(0) - hidden(300)).abs().max()
    if positional == "rotary":
        assert moved < 1e-4  # the same tokens further along: nothing changes
    else:
        assert moved > 0.1  # learned absolute positions do change it (the test can fail)


def test_rotary_encoder_has_no_position_table_and_no_hugging_face_form():
    from dnabird.errors import ConfigError
    from dnabird.model.hf import hf_config_dict

    model = PretrainingModel(small(positional="rotary"), seed=0)
    assert not [name for name in model.state_dict() if "position" in name]
    for config in (small(positional="rotary"), small(pre_norm=True), small(mlm_transform=False),
                   small(pooling="mean")):
        with pytest.raises(ConfigError, match="learned positions, post-LN blocks, an MLM transform and a "
                                              r"\[CLS\] pooler"):
            hf_config_dict(config)
    with pytest.raises(ParameterError, match="positional"):
        small(positional="alibi")


def test_fan_in_init_scales_layer_linears_with_their_width():
    config = small(hidden_size=128, num_heads=4, intermediate_size=512, init="fan_in",
                   attention={"type": "full"})
    model = PretrainingModel(config, seed=0)
    layer = model.encoder.layers[0]
    for linear, fan_in in ((layer.attention.query, 128), (layer.ffn_in, 128), (layer.ffn_out, 512)):
        bound = fan_in ** -0.5  # U(-b, b): std b / sqrt(3)
        for param in (linear.weight, linear.bias):
            assert param.abs().max() <= bound
        assert abs(linear.weight.std().item() - bound / 3 ** 0.5) < 0.05 * bound
        assert linear.bias.abs().mean() > bound / 4  # not BERT's zero biases
    embeddings = model.encoder.embeddings.word.weight[1:]  # row 0 is [PAD]
    assert abs(embeddings.std().item() - config.initializer_range) < 0.002  # N(0, 0.02) as with "bert"
    assert torch.equal(PretrainingModel(config, seed=0).encoder.layers[0].ffn_in.bias, layer.ffn_in.bias)
    bert = PretrainingModel(small(hidden_size=128, num_heads=4, intermediate_size=512,
                                  attention={"type": "full"}), seed=0).encoder.layers[0]
    assert abs(bert.ffn_in.weight.std().item() - 0.02) < 0.001 and not bert.ffn_in.bias.any()
    with pytest.raises(ParameterError, match="init"):
        small(init="xavier")


def test_inputs_longer_than_positions_fail_clearly():
    encoder = Encoder(small(max_positions=128), seed=0)
    with pytest.raises(ParameterError, match="input length=129"):
        encoder(ids(1, 129))


def test_construction_leaves_global_rng_alone():
    state = torch.random.get_rng_state()
    PretrainingModel(small(), seed=0)
    assert torch.equal(state, torch.random.get_rng_state())
    a, b = Encoder(small(), seed=5), Encoder(small(), seed=5)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


def test_each_layer_calls_attention_with_its_own_pattern():
    from dnabird.attention import BigBirdITC, Full
    from dnabird.model.encoder import layer_seed

    config = small(num_layers=2, layer_attention=[{"type": "full"}, {"block_size": 8, "num_random_blocks": 1}])
    encoder = Encoder(config, seed=3).eval()
    tokens = ids(1, 128)
    expected_patterns = [Full(num_heads=2), BigBirdITC(num_heads=2, block_size=8, window_blocks=3,
                                                       num_random_blocks=1)]
    with torch.no_grad():
        x = encoder.embeddings(tokens, torch.zeros_like(tokens))
        for index, (layer, pattern) in enumerate(zip(encoder.layers, expected_patterns, strict=True)):
            x = layer(x, None, pattern, layer_seed(config, index, 0, training=False))
        got = encoder(tokens)
    torch.testing.assert_close(got, x, rtol=0, atol=1e-6)
    # with one pattern for both layers the output differs, so the comparison above is not vacuous
    with torch.no_grad():
        y = encoder.embeddings(tokens, torch.zeros_like(tokens))
        for index, layer in enumerate(encoder.layers):
            y = layer(y, None, expected_patterns[1], layer_seed(config, index, 0, training=False))
    assert not torch.allclose(got, y, atol=1e-4)


def causal_config(**overrides):
    """Two causal Longformer layers, the window growing with depth, dilation in the first layer's second head."""
    settings = dict(num_layers=2, causal=True, activation="gelu",
                    attention={"type": "longformer", "window": 8, "block_size": 16},
                    layer_attention=[{"dilation": [1, 2]}, {"window": 16}])
    return small(**{**settings, **overrides})


def reference_forward(encoder, tokens, real, windows=(8, 16), dilations=((1, 2), (1, 1))):
    """The post-LN encoder written out with an explicit causal sliding-window mask, from its parameters."""
    config = encoder.config
    x = encoder.embeddings(tokens, torch.zeros_like(tokens))
    length = tokens.shape[1]
    i, j = torch.arange(length)[:, None], torch.arange(length)[None, :]
    for layer, window, dilation in zip(encoder.layers, windows, dilations, strict=True):
        attn = layer.attention
        heads = []
        for h, d in enumerate(dilation):
            allowed = (j <= i) & (i - j <= d * window // 2) & ((i - j) % d == 0)  # [L, L]
            allowed = allowed[None] & real[:, None, :]  # [B, L, L]
            cols = slice(h * config.head_size, (h + 1) * config.head_size)
            q = x @ attn.query.weight[cols].T + attn.query.bias[cols]
            k = x @ attn.key.weight[cols].T + attn.key.bias[cols]
            v = x @ attn.value.weight[cols].T + attn.value.bias[cols]
            scores = (q @ k.transpose(1, 2)) / config.head_size ** 0.5
            probs = torch.softmax(scores.masked_fill(~allowed, float("-inf")), -1).nan_to_num(0.0)  # padded rows: 0
            heads.append(probs @ v)
        x = layer.attention_norm(x + attn.output(torch.cat(heads, -1)))
        x = layer.ffn_norm(x + layer.ffn_out(torch.nn.functional.gelu(layer.ffn_in(x))))
    return x


def test_causal_encoder_equals_a_dense_causal_masked_reference():
    encoder = Encoder(causal_config(), seed=2).eval()
    tokens = ids(2, 70)
    real = torch.ones(2, 70, dtype=torch.bool)
    real[1, 55:] = False
    ours = encoder(tokens, real)
    expected = reference_forward(encoder, tokens, real)
    torch.testing.assert_close(ours[real], expected[real], rtol=0, atol=2e-5)
    probe = torch.randn(ours.shape, generator=torch.Generator().manual_seed(4)) * real[..., None]
    params = list(encoder.parameters())
    grads = torch.autograd.grad((ours * probe).sum(), params, allow_unused=True)
    expected_grads = torch.autograd.grad((expected * probe).sum(), params, allow_unused=True)
    for (name, _), got, want in zip(encoder.named_parameters(), grads, expected_grads, strict=True):
        if want is None:  # pooler and the (unused) global projections
            assert got is None or not got.any(), name
            continue
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-4, msg=name)
    # the reference is not vacuous: with the non-causal pattern the outputs differ
    bidirectional = Encoder(causal_config(causal=False), seed=2).eval()
    assert not torch.allclose(bidirectional(tokens, real)[real], expected[real], atol=1e-3)


def test_causal_output_at_t_ignores_every_later_token():
    encoder = Encoder(causal_config(positional="rotary", pre_norm=True), seed=0).eval()
    tokens = ids(1, 96)
    changed = tokens.clone()
    changed[0, 40:] = ids(1, 56, seed=7)
    with torch.no_grad():
        a, b = encoder(tokens), encoder(changed)
    assert torch.equal(a[0, :40], b[0, :40])
    assert not torch.allclose(a[0, 40:], b[0, 40:])


def test_causal_needs_a_pattern_with_a_causal_form():
    with pytest.raises(ParameterError, match="causal.*bigbird_itc"):
        small(causal=True)
    small(causal=True, attention={"type": "full"})


def test_per_example_global_attention_equals_a_batch_of_one():
    config = small(num_layers=2, attention={"type": "longformer", "window": 16, "block_size": 16})
    encoder = Encoder(config, seed=1).eval()
    with torch.no_grad():
        for layer in encoder.layers:  # global projections unlike the local ones, so they matter
            layer.attention.global_query.weight.mul_(-1.5)
    tokens = ids(3, 120)
    real = torch.ones(3, 120, dtype=torch.bool)
    real[2, 100:] = False
    own = [(0, 1, 2, 3), (0, 60), (0,)]  # e.g. [CLS] and each example's question tokens
    global_mask = torch.zeros(3, 120, dtype=torch.bool)
    for index, positions in enumerate(own):
        global_mask[index, list(positions)] = True
    with torch.no_grad():
        batched = encoder(tokens, real, global_attention_mask=global_mask)
        for index, positions in enumerate(own):
            alone = encoder(tokens[index:index + 1], real[index:index + 1], global_positions=positions)
            keep = real[index]
            torch.testing.assert_close(batched[index][keep], alone[0][keep], rtol=0, atol=1e-5)
        shared = encoder(tokens, real, global_positions=(0,))
    assert not torch.allclose(batched[0][real[0]], shared[0][real[0]], atol=1e-3)


def test_attention_density_counts_the_blocks_each_query_reads():
    from dnabird.model.encoder import attention_density

    # ITC, 32 blocks of 16: the 2 global rows read all 32 blocks; rows 1 and 30 read their window (which
    # holds a global block), the other global block and 3 random blocks (7); rows 2-29 read 3 + 2 + 3 = 8
    expected = (2 * 32 + 2 * 7 + 28 * 8) / 32 ** 2
    config = tiny(attention={"block_size": 16})
    assert attention_density(config, 512) == pytest.approx(expected)
    assert attention_density(tiny(attention={"type": "full"}), 300) == 1.0


def test_encoder_builds_its_patterns_once_not_per_call(monkeypatch):
    import dnabird.attention

    config = small(num_layers=2, layer_attention=[{}, {"num_random_blocks": 1}])
    encoder = Encoder(config, seed=0)
    assert [p.num_random_blocks for p in encoder.patterns] == [2, 1]
    built = []
    build = dnabird.attention.pattern_from_dict
    monkeypatch.setattr(dnabird.attention, "pattern_from_dict", lambda spec: built.append(spec) or build(spec))
    with torch.no_grad():
        encoder.eval()(ids(1, 64))
        encoder.train()(ids(1, 64), step=3)
    assert built == []
