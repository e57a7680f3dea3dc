"""Every dnabird error survives pickling (multiprocessing pools and torch.distributed send them between
processes; an error that cannot be rebuilt there hangs the pool)."""

from __future__ import annotations

import pickle

import pytest

from dnabird import errors

CASES = [
    errors.ParameterError("batch_size", 0, "a positive integer"),
    errors.InputFormatError("bad line", path="a.vcf", line=3, record="chr1:5"),
    errors.UnscorableVariantError("REF mismatch", "the genome has A"),
    errors.BackendUnavailableError("xformers", ["no CUDA", "float64"]),
    errors.DownloadError("hg19.fa.gz", ["url1: 404", "url2: timeout"]),
    errors.CheckpointError("model/: checkpoint directory not found"),
]


@pytest.mark.parametrize("error", CASES, ids=lambda e: type(e).__name__)
def test_errors_pickle_with_their_message_and_attributes(error):
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert vars(copy) == vars(error)
    assert isinstance(copy, errors.DnabirdError)
