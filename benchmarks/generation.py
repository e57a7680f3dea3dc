"""Generation speed on CPU: an LED-shaped encoder-decoder (Longformer encoder, global attention on the first
token) summarising one 4,096-token input, greedy, with the decoder's KV cache vs recomputing the whole prefix
at every step. Both runs generate exactly `--tokens` tokens (the end token is made unreachable) from the
same encoder states; the table gives the encoder's time once and, per mode, the generation time and
generated tokens/s, and the cache's speed-up (target: ≥ 5× at 256 tokens).

    python benchmarks/generation.py                       # 4,096 tokens in, 256 out
    python benchmarks/generation.py --tokens 32 --hidden 128   # smoke run
"""

from __future__ import annotations

import argparse
import time

import torch

from dnabird.model.config import tiny
from dnabird.model.generation import GenerationSettings, _greedy
from dnabird.model.seq2seq import EncoderDecoder, Seq2SeqConfig


def build(hidden: int, layers: int, heads: int, window: int, length: int, tokens: int) -> EncoderDecoder:
    encoder = tiny(vocab_size=8000, hidden_size=hidden, num_layers=layers, num_heads=heads,
                   intermediate_size=4 * hidden, max_positions=length, pooling="mean", dropout=0.0,
                   attention={"type": "longformer", "window": window, "block_size": 64, "global_positions": [0]})
    config = Seq2SeqConfig(encoder=encoder, decoder_layers=layers, decoder_heads=heads,
                           decoder_intermediate_size=4 * hidden, max_decoder_positions=tokens + 1,
                           decoder_start_token_id=0, eos_token_id=3)
    model = EncoderDecoder(config).eval()
    with torch.no_grad():
        model.logits_bias[3] = -1e4  # the end token never wins: every run generates `tokens` tokens
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=4096, help="input tokens")
    parser.add_argument("--tokens", type=int, default=256, help="tokens generated")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2, help="encoder layers, and as many decoder layers")
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--window", type=int, default=256, help="the encoder's Longformer window")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model = build(args.hidden, args.layers, args.heads, args.window, args.length, args.tokens)
    ids = torch.randint(5, 8000, (1, args.length), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        start = time.perf_counter()
        hidden = model.encode(ids)
        encoder_s = time.perf_counter() - start
        rows, outputs = {}, {}
        for use_cache in (True, False):
            settings = GenerationSettings(max_length=args.tokens, use_cache=use_cache)
            start = time.perf_counter()
            outputs[use_cache] = _greedy(model, hidden, None, settings)
            rows[use_cache] = time.perf_counter() - start
    assert outputs[True] == outputs[False] and len(outputs[True][0]) == args.tokens
    print(f"{args.length}-token input, {args.tokens} tokens generated greedily; hidden {args.hidden}, "
          f"{args.layers}+{args.layers} layers, {args.heads} heads, window {args.window}; {args.threads} threads; "
          f"encoder {encoder_s:.2f} s (once, not in the rows)\n")
    print("| decoder | generation (s) | tokens/s | speed-up |")
    print("|---|---|---|---|")
    for use_cache, name in ((True, "KV cache"), (False, "recompute the prefix")):
        print(f"| {name} | {rows[use_cache]:.2f} | {args.tokens / rows[use_cache]:.1f} | "
              f"{rows[False] / rows[use_cache]:.1f}× |")


if __name__ == "__main__":
    main()
