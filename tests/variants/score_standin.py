"""`dnabird` as a subprocess that stalls once its first chunk is saved, for the SIGKILL test of resumable
scoring: after writing chunk_000000.h5 it creates the file named by $BLOCKED_MARKER and sleeps."""

import os
import sys
import time
from pathlib import Path

from dnabird import cli
from dnabird.variants import resume

write_chunk = resume._write_chunk


def stalling(scores, path: Path) -> None:
    write_chunk(scores, path)
    if path.name == "chunk_000000.h5":
        Path(os.environ["BLOCKED_MARKER"]).touch()
        time.sleep(600)


resume._write_chunk = stalling
sys.exit(cli.main(sys.argv[1:]))
