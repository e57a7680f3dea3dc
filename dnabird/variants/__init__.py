"""Variant effects: `score_variants` (a fine-tuned head or zero-shot `mlm_llr`; `score_variants_to_files`
chunked and resumable, `score_background` for calibrated quantiles), `saturation_mutagenesis` and `embed`.
Inputs: a checkpoint directory, a FASTA, a VCF (or `Variant` objects, 1-based `pos`)."""

from dnabird.variants.background import score_background
from dnabird.variants.embed import embed
from dnabird.variants.ism import saturation_mutagenesis
from dnabird.variants.records import Variant
from dnabird.variants.resume import score_variants_to_files
from dnabird.variants.score import score_variants
from dnabird.variants.scores import VariantScores

__all__ = ["Variant", "VariantScores", "embed", "saturation_mutagenesis", "score_background", "score_variants",
           "score_variants_to_files"]
