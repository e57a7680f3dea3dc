"""The BigBird encoder, its heads, configs, checkpoints and Hugging Face weight import."""

from dnabird.labels import IGNORE_INDEX
from dnabird.model.checkpoint import (
    LoadReport,
    load_checkpoint,
    load_encoder_for_finetuning,
    read_config,
    save_checkpoint,
)
from dnabird.model.config import PRESETS, EncoderConfig, bigbird_base, preset, tiny
from dnabird.model.encoder import Encoder, layer_seed
from dnabird.model.heads import PretrainingModel, SequenceClassifier
from dnabird.model.hf import from_hf_bigbird, to_hf_bigbird
from dnabird.model.hf_longformer import from_hf_longformer
from dnabird.model.task_spec import TaskSpec

__all__ = [
    "IGNORE_INDEX", "PRESETS", "Encoder", "EncoderConfig", "LoadReport", "PretrainingModel",
    "SequenceClassifier", "TaskSpec", "bigbird_base", "from_hf_bigbird", "from_hf_longformer", "layer_seed",
    "load_checkpoint",
    "load_encoder_for_finetuning", "preset", "read_config", "save_checkpoint", "tiny", "to_hf_bigbird",
]
