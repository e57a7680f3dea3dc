"""dnabird: long-range DNA language modelling with block-sparse BigBird attention."""

from dnabird.errors import DnabirdError

__version__ = "0.1.0.dev0"
__all__ = ["DnabirdError", "__version__"]
