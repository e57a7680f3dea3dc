"""Stage `predict`: a fine-tuned head over tiles of a few regions (`dnabird.prediction.predict_to_files`), its
tracks and a plot of a few of them.

The model is a checkpoint directory or an earlier stage's output written `<stage>:<output>` (null: the chromatin
stage's model); the genome a FASTA (null: the fetch stage's). Outputs: the tiles table (`tiles.<format>`), the
inputs not predicted (`tiles.<format>.unpredicted.tsv`), a bigWig and a bedGraph per output
(`tiles.<format>.tracks/`), `tiles.<format>.json` (`predict_to_files`' record), `tracks.png` (the `plot`
lines along each region) and `report.json` (counts, scale, tiles per second, wall time, the plotted lines).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from dnabird.errors import ParameterError, check_int, reject
from dnabird.io import write_json_atomic
from dnabird.pipeline import RunContext, Stage
from dnabird.stages import filled

SOURCES = {"model": ("chromatin", "model"), "genome": ("fetch", "fasta")}  # a null field -> (stage, output)
FORMATS = {"tsv": "tsv", "parquet": "parquet", "hdf5": "h5"}  # table format -> file extension
PLOTTED_OUTPUTS = 4  # lines drawn by default for a head without label groups


@dataclass
class PredictConfig:
    """model, genome: paths or `<stage>:<output>` (null: module docstring). region: the spans tiled, "chrom" or
    "chrom:start-end" (1-based inclusive). step: bp between tile starts (null: the head's window, no overlap).
    strand: the strand a strand-specific head (the promoter head) tiles, "+" or "-" (null: "+").
    plot: the lines of `tracks.png`, each an output or a label group (drawn as the median of its outputs'
    tracks); null: every label group of the head, or its first four outputs when it has none. format: the
    table's ("tsv", "parquet" or "hdf5"). batch_size: windows per model call. device: "cpu", "auto", "cuda" …"""

    model: str | None = None
    genome: str | None = None
    region: list[str] = field(default_factory=lambda: ["chr1:100001-130000"])
    step: int | None = None
    strand: str | None = None
    plot: list[str] | None = None
    format: str = "tsv"
    batch_size: int = 16
    device: str = "cpu"

    def __post_init__(self):
        reject(not isinstance(self.region, list) or not self.region or not all(isinstance(r, str) for r in self.region),
               "predict.region", self.region, 'a non-empty list of "chrom" or "chrom:start-end"')
        if self.step is not None:
            check_int("predict.step", self.step)
        check_int("predict.batch_size", self.batch_size)
        reject(self.format not in FORMATS, "predict.format", self.format, f"one of {tuple(FORMATS)}")
        reject(self.plot is not None and (not isinstance(self.plot, list) or not self.plot), "predict.plot",
               self.plot, "null or a non-empty list of outputs and label groups")


def inputs(config: PredictConfig, context: RunContext) -> list[Path]:
    resolved = filled(config, context, None, SOURCES)
    return [Path(resolved.model), Path(resolved.genome)]


def plot_lines(plot: list[str] | None, labels: list[str], groups: dict[str, list[str]]) -> dict[str, list[str]]:
    """Line name -> the outputs whose median it draws: a group's members, or an output alone."""
    if plot is None:
        return {f"{g} (median of {len(m)})": m for g, m in groups.items()} if groups else \
            {label: [label] for label in labels[:PLOTTED_OUTPUTS]}
    unknown = [name for name in plot if name not in groups and name not in labels]
    if unknown:
        raise ParameterError("predict.plot", unknown, f"outputs of the head or its label groups ({', '.join(groups)}"
                             f"{'; ' if groups else ''}{len(labels)} outputs, e.g. {labels[0]!r})")
    return {f"{name} (median of {len(groups[name])})" if name in groups else name:
            groups[name] if name in groups else [name] for name in plot}


def run(config: PredictConfig, context: RunContext, stage_dir: Path) -> dict[str, Path]:
    from dnabird.genome.reference import Genome
    from dnabird.model.checkpoint import read_task
    from dnabird.prediction import predict_to_files
    from dnabird.prediction.inputs import tile_spans
    from dnabird.prediction.tracks import plot_tracks

    config = filled(config, context, None, SOURCES)
    task = read_task(config.model)
    reject(task is None, "predict.model", config.model, "a fine-tuned head's checkpoint directory (with task.json)")
    lines = plot_lines(config.plot, list(task.labels), dict(task.label_groups))
    spans = tile_spans(Genome(config.genome), config.region)
    table = stage_dir / f"tiles.{FORMATS[config.format]}"
    started = time.perf_counter()
    record = predict_to_files(config.model, table, tiles=config.region, genome=config.genome, step=config.step,
                              strand=config.strand, format=config.format, batch_size=config.batch_size,
                              device=config.device)
    seconds = time.perf_counter() - started
    tracks = table.with_name(record["files"]["tracks"]["folder"])
    by_output = record["files"]["tracks"]["by_output"]
    plot_tracks({o: tracks / files["bigwig"] for o, files in by_output.items()}, lines, spans, record["scale"],
                stage_dir / "tracks.png")
    predicted = record["summary"]["predicted"]
    report = {"model": config.model, "genome": config.genome, "regions": config.region,
              "step": record["settings"]["step"], "window_bp": record["settings"]["window_bp"],
              "scale": record["scale"], "outputs": len(record["outputs"]), "summary": record["summary"],
              "seconds": round(seconds, 2), "tiles_per_second": round(predicted / max(seconds, 1e-9), 2),
              "plot": {"file": "tracks.png", "lines": lines},
              "files": {"table": table.name, "unpredicted": record["files"]["unpredicted"],
                        "tracks": tracks.name, "record": f"{table.name}.json"}}
    write_json_atomic(stage_dir / "report.json", report)
    return {"table": table, "tracks": tracks, "plot": stage_dir / "tracks.png", "report": stage_dir / "report.json"}


STAGE = Stage("predict", PredictConfig, inputs, run)
