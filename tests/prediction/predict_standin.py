"""`dnabird` as a subprocess that stalls once its first chunk is saved, for the SIGKILL test of resumable
prediction: after writing chunk_000000.h5 it creates the file named by $BLOCKED_MARKER and sleeps."""

import os
import sys
import time
from pathlib import Path

from dnabird import cli
from dnabird.prediction import files

save_frames = files.save_frames


def stalling(path: Path, frames, **attributes) -> None:
    save_frames(path, frames, **attributes)
    if Path(path).name == "chunk_000000.h5":
        Path(os.environ["BLOCKED_MARKER"]).touch()
        time.sleep(600)


files.save_frames = stalling
sys.exit(cli.main(sys.argv[1:]))
