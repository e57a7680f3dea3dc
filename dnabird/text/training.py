"""What the text recipes' pipeline stages share around the one recipe shell (`dnabird.train.recipe`): whether a
run folder holds a checkpoint to resume from."""

from __future__ import annotations

from pathlib import Path

from dnabird.train import TrainConfig


def resumable(train_config: TrainConfig) -> bool:
    """Whether `out_dir` holds a checkpoint to resume from, its own or a training phase's (`phase_<k>/`, staged
    MLM); a pipeline stage resumes when it does."""
    out_dir = Path(train_config.out_dir)
    return any(out_dir.glob("checkpoints/step_*")) or any(out_dir.glob("phase_*/checkpoints/step_*"))
