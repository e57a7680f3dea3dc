"""Reference genome access: FASTA windows (`Genome`), liftover (`Liftover`), BED records."""

from dnabird.genome.liftover import Liftover
from dnabird.genome.reference import Genome, Window

__all__ = ["Genome", "Liftover", "Window"]
