"""Every Python block of README.md and docs/*.md runs, against the embedded-default fixture's run folder
(linked as `runs/demo`, the demo's own layout), in a fresh namespace and an empty working directory. A block
that summarises with `led/` and `report.txt` (docs/summarisation.md) gets them: a small random transformers
LED with a byte-level BPE tokenizer, imported to `led/` by `dnabird import-hf`, and a short report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
REPORT = "The trial enrolled forty patients. The treatment shortened recovery by two days. No side effects were seen."


def _blocks() -> list:
    found = []
    for page in PAGES:
        text = page.read_text()
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(pytest.param(match.group(1), id=f"{page.relative_to(ROOT)}:{line}"))
    return found


def _imported_led(folder: Path) -> None:
    """A small random `LEDForConditionalGeneration` with a BPE tokenizer, imported by dnabird to `folder/led`."""
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    import torch

    from dnabird.cli import main

    source = folder / "hf_led"
    config = transformers.LEDConfig(vocab_size=300, d_model=32, encoder_layers=1, decoder_layers=1,
                                    encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                                    decoder_ffn_dim=64, max_encoder_position_embeddings=256,
                                    max_decoder_position_embeddings=260, attention_window=[16])
    with torch.random.fork_rng():
        torch.manual_seed(0)
        transformers.LEDForConditionalGeneration(config).save_pretrained(source)
    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator([REPORT] * 20, vocab_size=290, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(str(source))
    assert main(["-q", "import-hf", "--architecture", "led", str(source), str(folder / "led")]) == 0


def test_the_pages_have_python_blocks():
    assert len(_blocks()) >= 5


@pytest.mark.parametrize("code", _blocks())
def test_python_block_runs(code, embedded_default, tmp_path, monkeypatch):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "demo").symlink_to(embedded_default.root, target_is_directory=True)
    if '"led/"' in code:
        _imported_led(tmp_path)
    if '"report.txt"' in code:
        (tmp_path / "report.txt").write_text(REPORT + "\n")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "<snippet>", "exec"), {"__name__": "__snippet__"})
