"""Shared inputs of the variant-scoring tests: a small DNA tokenizer, a hand-made genome, and a stand-in
classifier whose outputs are motif counts (so every expected score can be worked out by hand)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from dnabird.data.tokenizer import Tokenizer
from dnabird.model.config import tiny
from dnabird.model.heads import ClassifierOutput
from dnabird.model.task_spec import TaskSpec

# 40 bp; GATA at 4, 13 and 28; TATC (GATA on the minus strand) at 21
CHR1 = "ACGTGATAAC" "CTTGATACGG" "TTATCGCCGA" "TACGTTTAAC"
CHRM = "ACGTACGTAC"
STUB_LABELS = ("GATA", "first_GATA", "centre_A")


def write_fasta(path, records: dict[str, str]):
    path.write_text("".join(f">{name}\n{seq}\n" for name, seq in records.items()))
    return path


@pytest.fixture(scope="session")
def tokenizer(tmp_path_factory):
    """A 64-piece BPE tokenizer trained on random DNA (N included)."""
    rng = np.random.default_rng(0)
    sentences = ["".join(rng.choice(list("ACGT"), size=300)) for _ in range(200)]
    return Tokenizer.train(sentences, tmp_path_factory.mktemp("tok") / "dna.model", vocab_size=64,
                           max_piece_length=4, sample_size=200, num_threads=1)


@pytest.fixture
def hand_genome(tmp_path):
    return write_fasta(tmp_path / "hand.fa", {"chr1": CHR1, "chrM": CHRM})


class MotifCounter(nn.Module):
    """Stand-in classifier: reads each input back as DNA and returns [number of GATA, index of the first
    GATA (-1 when none), 1 if the middle base (index len // 2) is A else 0] as its three logits."""

    def __init__(self, tokenizer: Tokenizer):
        super().__init__()
        self.config = tiny(vocab_size=tokenizer.vocab_size)
        self.tokenizer = tokenizer
        self.batch_sizes: list[int] = []

    def forward(self, input_ids, attention_mask=None, **_):
        self.batch_sizes.append(len(input_ids))
        rows = []
        for ids in input_ids.tolist():
            dna = self.tokenizer.decode(ids)
            rows.append([dna.count("GATA"), dna.find("GATA"), float(dna[len(dna) // 2] == "A")])
        return ClassifierOutput(None, torch.tensor(rows, dtype=torch.float32))


def stub_task(anchor="centre", window=11, strand_rule="both") -> TaskSpec:
    return TaskSpec(task="stub", problem="multilabel", labels=STUB_LABELS, eval_length=64, window_length=window,
                    anchor=anchor, strand_rule=strand_rule, label_groups={"motif": ["GATA", "first_GATA"]})


def stub_outputs(window: str) -> np.ndarray:
    """What `MotifCounter` returns for one window, worked out on the string."""
    return np.array([window.count("GATA"), window.find("GATA"), float(window[len(window) // 2] == "A")])
