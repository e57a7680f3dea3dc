"""Variant effects: `score_variants` (a fine-tuned head or zero-shot `mlm_llr`), `saturation_mutagenesis`
and `embed`. Inputs: a checkpoint directory, a FASTA, a VCF (or `Variant` objects, 1-based `pos`)."""

from dnabird.variants.embed import embed
from dnabird.variants.ism import saturation_mutagenesis
from dnabird.variants.records import Variant
from dnabird.variants.score import score_variants
from dnabird.variants.scores import VariantScores

__all__ = ["Variant", "VariantScores", "embed", "saturation_mutagenesis", "score_variants"]
