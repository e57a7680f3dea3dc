"""Prediction: a fine-tuned head over sequences, regions of a genome or tiles of its contigs. `predict`
returns `Predictions` (one row per input, one column per output in the user's scale, and the inputs not
predicted with their reasons); `predict_to_files` writes them chunk by chunk, resumable, with bigWig and
bedGraph tracks for tiles. Modules: `inputs` (reading the inputs), `run` (windows, strands, the model's
passes), `predictions`, `files` (the chunked run and its outputs), `tracks` (per-base averages of tiles)."""

from dnabird.prediction.files import predict_to_files
from dnabird.prediction.predictions import Predictions
from dnabird.prediction.run import predict

__all__ = ["Predictions", "predict", "predict_to_files"]
