"""Stage `labelled_data`: two planted-motif sequence tables to fine-tune the `labelled` task on
(`dnabird.datasets.planted_motifs`; nothing is downloaded): windows of the genome — `genome`, else the `fetch`
stage's when the pipeline has one, else random DNA — with a motif written 0 to `max_copies` times.

Outputs `binary` (`motif_binary.csv`: does the window carry the motif) and `regression` (`motif_regression.csv`:
its copies plus Gaussian noise), in GUE's `sequence,label` layout.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from dnabird.datasets import planted_motifs
from dnabird.errors import check_positive_ints, reject
from dnabird.genome.reference import Genome
from dnabird.pipeline import RunContext, Stage
from dnabird.stages import optional_output


@dataclass
class LabelledDataConfig:
    """count: sequences per table; length: bp each; max_copies, noise: the regression table's motif copies
    (0 to max_copies) and the s.d. of the noise added; genome: the FASTA windows are drawn from (null: the
    fetch stage's, else random DNA); seed: the draw."""

    count: int = 2000
    length: int = 300
    max_copies: int = 3
    noise: float = 0.3
    genome: str | None = None
    seed: int = 0

    def __post_init__(self):
        check_positive_ints(self, ("count", "length", "max_copies"))
        reject(self.noise < 0, "noise", self.noise, "a standard deviation >= 0")
        reject(self.max_copies * len(planted_motifs.MOTIF) > self.length, "max_copies", self.max_copies,
               f"at most {self.length // len(planted_motifs.MOTIF)} copies of the motif in {self.length} bp")


def _genome(config: LabelledDataConfig, context: RunContext) -> Path | None:
    return Path(config.genome) if config.genome is not None else optional_output(context, "fetch", "fasta")


def inputs(config: LabelledDataConfig, context: RunContext) -> list[Path]:
    genome = _genome(config, context)
    return [] if genome is None else [genome]


def run(config: LabelledDataConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    path = _genome(config, context)
    with Genome(path, soft_mask="upper") if path is not None else contextlib.nullcontext() as genome:
        return planted_motifs.write_tables(stage_dir, count=config.count, length=config.length, seed=config.seed,
                                           genome=genome, max_copies=config.max_copies, noise=config.noise)


STAGE = Stage("labelled_data", LabelledDataConfig, inputs, run)
