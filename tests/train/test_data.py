import pytest

from dnabird.errors import ParameterError
from dnabird.train.data import accumulation_steps, rank_slice, step_batches


@pytest.mark.parametrize("world", [1, 2, 4])
def test_rank_slices_are_disjoint_and_cover_each_global_batch(world):
    for step in range(5):
        seen = [i for r in range(world) for i in rank_slice(step, 8, r, world)]
        assert sorted(seen) == list(range(step * 8, step * 8 + 8))


def test_step_batches_resume_in_the_middle_and_split_micro_batches():
    steps = list(step_batches(list(range(1000)), start_step=3, stop_step=5, global_batch=8, micro_batch=2,
                              rank=1, world_size=2, collate_fn=list))
    # rank 1 of 2 reads the second half of each global batch of 8, in micro-batches of 2
    assert steps == [[[28, 29], [30, 31]], [[36, 37], [38, 39]]]


def test_global_batch_must_split_evenly():
    assert accumulation_steps(256, 8, 4) == 8
    with pytest.raises(ParameterError, match="global_batch_size"):
        accumulation_steps(10, 4, 1)
