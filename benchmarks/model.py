"""Encoder benchmark: dnabird vs transformers' BigBird, forward + backward on CPU (batch 1).

Whole pretraining models (MLM with 15 % masked positions + NSP) for the `tiny` and `bigbird-base`
presets, and one encoder layer (hidden 768) vs transformers' `BigBirdLayer`; tokens/s and the peak
resident memory added by a step, each cell in its own process, ratios against the faster
transformers version. transformers 4.x runs in a second interpreter given by --hf4-python.
`gena` is the layout of GENA-LM's published `gena-lm-bigbird-base-t2t` (`BigBirdForMaskedLM`, 12 x 768,
32,000 ids, block 64, 3 random blocks) in inference: forward only under `torch.inference_mode`, eval mode,
full MLM logits, as a user scoring variants with imported GENA-LM weights runs it; its rows add
sequences/s. (The weights are random: speed does not depend on them.)
"dense" (the dense parts) is the dnabird model with its attention call replaced by a pass-through of v: what a
step costs without attention, the limit of any attention speed-up on this CPU. The table gives the
step's time over it (the attention share of a step is 1 − 1 / that) and names the CPU and the
vector ISA torch's kernels use.

    python benchmarks/model.py --hf4-python PATH/TO/venv-with-transformers-4/bin/python
    python benchmarks/model.py --models tiny --lengths 1024 --repeat 1     # smoke run
    python benchmarks/model.py --models gena --lengths 4096 --hf4-python PY # GENA-LM's layout, inference
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("dnabird", "dense-parts", "hf")
# the config.json of GENA-LM's gena-lm-bigbird-base-t2t (the fields that shape the computation)
GENA_LAYOUT = dict(vocab_size=32000, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                   intermediate_size=3072, max_position_embeddings=4096, hidden_act="gelu_new",
                   attention_type="block_sparse", block_size=64, num_random_blocks=3, pad_token_id=3,
                   rescale_embeddings=False, type_vocab_size=2, layer_norm_eps=1e-12, hidden_dropout_prob=0.1,
                   attention_probs_dropout_prob=0.1)


def _batch(config, length):
    import torch

    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, config.vocab_size, (1, length), generator=g)
    masked = torch.randperm(length, generator=g)[: int(0.15 * length)]
    labels = torch.full_like(ids, -100)
    labels[0, masked] = ids[0, masked]
    return ids, torch.ones_like(ids), labels, torch.tensor([0])


def _without_attention() -> None:
    """Replace the encoder's attention call by a pass-through of v (same shapes, gradients still flow)."""
    import dnabird.model.encoder

    dnabird.model.encoder.attention = lambda q, k, v, pattern, **options: v


def _model_step(kind, config, length):
    """A callable running one forward + backward of the whole pretraining model."""
    import torch

    ids, mask, labels, nsp = _batch(config, length)
    if kind == "dense-parts":
        _without_attention()
    if kind in ("dnabird", "dense-parts"):
        from dnabird.model import PretrainingModel

        model = PretrainingModel(config).train()
        return lambda i: model(ids, mask, mlm_labels=labels, nsp_labels=nsp, step=i).loss.backward()
    from transformers import BigBirdConfig, BigBirdForPreTraining

    from dnabird.model.hf import hf_config_dict

    with torch.random.fork_rng():
        model = BigBirdForPreTraining(BigBirdConfig(**hf_config_dict(config))).train()
    return lambda i: model(input_ids=ids, attention_mask=mask, labels=labels,
                           next_sentence_label=nsp).loss.backward()


def _layer_step(kind, config, length):
    """A callable running one forward + backward of a single encoder layer on random hidden states."""
    import torch

    x = torch.randn(1, length, config.hidden_size, generator=torch.Generator().manual_seed(0),
                    requires_grad=True)
    if kind == "dense-parts":
        _without_attention()
    if kind in ("dnabird", "dense-parts"):
        from dnabird.model.encoder import EncoderLayer, materialise

        pattern = config.pattern()
        with torch.device("meta"):
            layer = EncoderLayer(config, pattern)
        layer.config = config
        materialise(layer, 0)
        layer.train()
        return lambda i: layer(x, None, pattern, i).square().mean().backward()
    from transformers import BigBirdConfig
    from transformers.models.big_bird.modeling_big_bird import BigBirdLayer, BigBirdModel

    from dnabird.model.hf import hf_config_dict

    with torch.random.fork_rng():
        layer = BigBirdLayer(BigBirdConfig(**hf_config_dict(config)), seed=0).train()
    blocked, band, from_mask, to_mask = BigBirdModel.create_masks_for_block_sparse_attn(
        torch.ones(1, length), config.pattern().block_size)

    def step(i):
        out = layer(x, band_mask=band, from_mask=from_mask, to_mask=to_mask, blocked_encoder_mask=blocked)
        (out[0] if isinstance(out, tuple) else out).square().mean().backward()

    return step


def _gena_forward(kind, length):
    """A callable running one inference forward pass (full MLM logits) of GENA-LM's layout."""
    import torch

    ids = torch.randint(6, GENA_LAYOUT["vocab_size"], (1, length), generator=torch.Generator().manual_seed(0))
    mask = torch.ones_like(ids)
    if kind == "dense-parts":
        _without_attention()
    if kind in ("dnabird", "dense-parts"):
        from dnabird.model import PretrainingModel
        from dnabird.model.hf import config_from_hf

        model = PretrainingModel(config_from_hf(GENA_LAYOUT), nsp=False).eval()  # what from_hf_bigbird builds

        def step(i):
            with torch.inference_mode():
                model(ids, mask)

        return step
    from transformers import BigBirdConfig, BigBirdForMaskedLM

    with torch.random.fork_rng():
        model = BigBirdForMaskedLM(BigBirdConfig(**GENA_LAYOUT)).eval()

    def step(i):
        with torch.inference_mode():
            model(input_ids=ids, attention_mask=mask)

    return step


def run_cell(kind: str, what: str, length: int, repeat: int, threads: int, clock: str = "wall") -> dict:
    """Time one cell in this process; `what` is a preset name, "layer" (bigbird-base's layer) or "gena"."""
    import torch

    now = time.process_time if clock == "cpu" else time.perf_counter
    from dnabird.model.config import preset

    torch.set_num_threads(threads)
    if what == "gena":
        step = _gena_forward(kind, length)
    else:
        config = preset("bigbird-base" if what == "layer" else what)
        step = (_layer_step if what == "layer" else _model_step)(kind, config, length)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # model and inputs built, no step yet
    step(0)  # warm-up
    start = now()
    for i in range(repeat):
        step(i + 1)
    seconds = (now() - start) / repeat
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    version = "dnabird"
    if kind == "hf":
        import transformers

        version = transformers.__version__
    return {"seconds": seconds, "tokens_per_s": length / seconds, "sequences_per_s": 1 / seconds,
            "peak_mb": peak / 1024, "version": version}


def _spawn(python: str, kind: str, what: str, length: int, repeat: int, threads: int, clock: str) -> dict | str:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS=str(threads))
    cmd = [python, str(Path(__file__).resolve()), "--cell", kind, what, str(length), "--repeat", str(repeat),
           "--threads", str(threads), "--clock", clock]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        return "OOM" if result.returncode in (-9, 137) else f"failed ({result.stderr.strip().splitlines()[-1:]})"
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["tiny", "bigbird-base", "layer"],
                        help="presets to time, and/or 'layer' (one bigbird-base encoder layer), and/or 'gena' "
                             "(GENA-LM's layout, inference: forward only)")
    parser.add_argument("--lengths", nargs="+", type=int, default=[1024, 4096])
    parser.add_argument("--repeat", type=int, default=2, help="timed steps per cell (after one warm-up)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time steps by the wall clock, or by the process's CPU time (use with --threads 1)")
    parser.add_argument("--hf4-python", help="interpreter with transformers 4.x (e.g. 4.57.6); omit to skip")
    parser.add_argument("--cell", nargs=3, metavar=("KIND", "WHAT", "LENGTH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cell:
        kind, what, length = args.cell
        print(json.dumps(run_cell(kind, what, int(length), args.repeat, args.threads, args.clock)))
        return 0
    from dnabird.provenance import cpu_description

    runners = [("dnabird", "dnabird", sys.executable), ("dense", "dense-parts", sys.executable),
               ("hf5", "hf", sys.executable)]
    if args.hf4_python:
        runners.append(("hf4", "hf", args.hf4_python))
    header = f"{'model':<13}{'L':>6}" + "".join(f"{name + ' tok/s':>16}{name + ' MB':>11}" for name, _, _ in runners)
    described = cpu_description()
    print(f"forward+backward ('gena': forward only, inference_mode), batch 1, {args.threads} threads, {args.clock} "
          f"clock, fp32, on {described['cpu']}; torch's kernels: {described['cpu kernels']}; MB = peak RSS added "
          "by the steps (activations, gradients); seq/s = 1 / seconds per sequence")
    print(header + f"{'speed-up vs faster HF':>23}{'step / dense parts':>20}")
    for what in args.models:
        for length in args.lengths:
            cells = {name: _spawn(py, kind, what, length, args.repeat, args.threads, args.clock)
                     for name, kind, py in runners}
            row = f"{what:<13}{length:>6}"
            for name, _, _ in runners:
                cell = cells[name]
                row += (f"{cell['tokens_per_s']:>16.0f}{cell['peak_mb']:>11.0f}" if isinstance(cell, dict)
                        else f"{cell:>27}")
            hf = [c["tokens_per_s"] for n, c in cells.items() if n.startswith("hf") and isinstance(c, dict)]
            ours, dense = cells["dnabird"], cells["dense"]
            ratio = f"{ours['tokens_per_s'] / max(hf):.2f}x" if hf and isinstance(ours, dict) else "n/a"
            share = f"{dense['tokens_per_s'] / ours['tokens_per_s']:.2f}x" \
                if isinstance(ours, dict) and isinstance(dense, dict) else "n/a"
            per_sequence = "  seq/s: " + ", ".join(f"{name} {c['sequences_per_s']:.3f}" for name, c in cells.items()
                                                   if isinstance(c, dict)) if what == "gena" else ""
            print(row + f"{ratio:>23}{share:>20}" + per_sequence, flush=True)
    versions = {name: c["version"] for name, c in cells.items() if isinstance(c, dict) and name.startswith("hf")}
    print("versions:", versions)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
