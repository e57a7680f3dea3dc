"""dnabird: long-range DNA language modelling with block-sparse BigBird attention."""

from dnabird.errors import DnabirdError

__version__ = "0.1.0.dev0"
__all__ = ["DnabirdError", "__version__", "score_variants"]


def __getattr__(name: str):
    if name == "score_variants":  # imported on first use: `import dnabird` stays light
        from dnabird.variants import score_variants

        return score_variants
    raise AttributeError(f"module 'dnabird' has no attribute {name!r}")
