"""The head called directly, as the reference `predict` is compared against: windows read with pyfaidx,
reverse-complemented and tokenized here, `[CLS] ids [SEP]` padded by hand to the head's eval_length, the
`SequenceClassifier` called on them, sigmoid / softmax / the target transform's inverse applied by hand."""

import numpy as np
import pyfaidx
import pytest
import torch

from dnabird.model.checkpoint import load_checkpoint, read_task, read_tokenizer

COMPLEMENT = str.maketrans("ACGTN", "TGCAN")


def reverse_complement(sequence: str) -> str:
    return sequence.translate(COMPLEMENT)[::-1]


class DirectHead:
    """A checkpoint's model, tokenizer and task, run on one window at a time."""

    def __init__(self, directory):
        self.model = load_checkpoint(directory).eval()
        self.tokenizer, self.task = read_tokenizer(directory), read_task(directory)

    @torch.no_grad()
    def logits(self, sequence: str) -> np.ndarray:
        t, length = self.tokenizer, self.task.eval_length
        ids = [t.cls_id, *t.encode(sequence), t.sep_id]
        mask = [1] * len(ids) + [0] * (length - len(ids))
        ids = torch.tensor([ids + [t.pad_id] * (length - len(ids))])
        out = self.model(ids, torch.tensor([mask])).logits.double().reshape(1, -1)
        return out[0].numpy()

    def scaled(self, sequence: str) -> np.ndarray:
        """The head's outputs on one window in the user's scale, computed by hand."""
        x = self.logits(sequence)
        if self.task.problem == "regression":
            spec = self.task.target_transform
            return np.expm1(x * np.array(spec["std"]) + np.array(spec["mean"])) if spec["log1p"] else x
        if self.task.problem == "multiclass":
            return np.exp(x) / np.exp(x).sum()
        return 1 / (1 + np.exp(-x))

    def both_strands(self, sequence: str) -> np.ndarray:
        return (self.scaled(sequence) + self.scaled(reverse_complement(sequence))) / 2


@pytest.fixture(scope="session")
def chromatin_head(embedded_default):
    return DirectHead(embedded_default.chromatin / "model")


@pytest.fixture(scope="session")
def promoter_head(embedded_default):
    return DirectHead(embedded_default.promoter / "model")


@pytest.fixture(scope="session")
def bases(embedded_default):
    """genome[chrom][start:end], upper case, read with pyfaidx."""
    fasta = pyfaidx.Fasta(str(embedded_default.fasta))
    return lambda chrom, start, end: str(fasta[chrom][start:end]).upper()
