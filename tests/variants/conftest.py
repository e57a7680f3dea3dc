"""Shared inputs of the variant-scoring tests: a small DNA tokenizer, a hand-made genome, and a stand-in
classifier whose outputs are motif counts (so every expected score can be worked out by hand)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from dnabird.data.tokenizer import Tokenizer
from dnabird.model.checkpoint import save_checkpoint
from dnabird.model.config import tiny
from dnabird.model.heads import ClassifierOutput, SequenceClassifier
from dnabird.model.task_spec import TaskSpec

# 40 bp; GATA at 4, 13 and 28; TATC (GATA on the minus strand) at 21
CHR1 = "ACGTGATAAC" "CTTGATACGG" "TTATCGCCGA" "TACGTTTAAC"
CHRM = "ACGTACGTAC"
STUB_LABELS = ("GATA", "first_GATA", "centre_A")
WINDOW, LENGTH = 301, 448  # 7 blocks of 64: sparse attention with random blocks


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


@pytest.fixture(scope="session")
def genome_and_vcf(tmp_path_factory):
    """Two random 900-bp chromosomes and a VCF of 13 SNVs (some near the ends) and an insertion + <DEL>."""
    folder = tmp_path_factory.mktemp("inputs")
    rng = np.random.default_rng(5)
    chroms = {name: "".join(rng.choice(list("ACGT"), size=900)) for name in ("chr1", "chr2")}
    genome = write_fasta(folder / "g.fa", chroms)
    lines = []
    for n, pos in enumerate(range(100, 880, 60)):
        chrom = "chr1" if n % 2 else "chr2"
        ref = chroms[chrom][pos - 1]
        lines.append(f"{chrom}\t{pos}\tv{n}\t{ref}\t{'ACGT'[('ACGT'.index(ref) + 1) % 4]}\t.\tPASS\tDP={n}")
    lines.append(f"chr1\t450\tins\t{chroms['chr1'][449]}\t{chroms['chr1'][449]}T,<DEL>\t.\tPASS\tDP=1")
    vcf = folder / "v.vcf"
    vcf.write_text("##fileformat=VCFv4.2\n##INFO=<ID=DP,Number=1,Type=Integer,Description=\"depth\">\n"
                   "##contig=<ID=chr1>\n##contig=<ID=chr2>\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
                   + "\n".join(lines) + "\n")
    return genome, vcf, chroms


@pytest.fixture(scope="session")
def classifier_dir(tokenizer, tmp_path_factory):
    """A tiny random SequenceClassifier saved with its tokenizer and a chromatin-like task.json."""
    config = tiny(vocab_size=tokenizer.vocab_size, dropout=0.0, attention_dropout=0.0, num_layers=1)
    task = TaskSpec(task="chromatin", problem="multilabel", labels=["K562|DNase|None", "GM12878|CTCF|None"],
                    label_groups={"DNase": ["K562|DNase|None"], "TF": ["GM12878|CTCF|None"]}, eval_length=LENGTH,
                    window_length=WINDOW, anchor="centre", strand_rule="both", tokenizer_hash=tokenizer.hash)
    return save_checkpoint(SequenceClassifier(config, 2, problem="multilabel", seed=4),
                           tmp_path_factory.mktemp("ckpt") / "classifier", tokenizer_files=(tokenizer.path,), task=task)
