"""dnabird: long-range DNA language modelling with block-sparse BigBird attention."""

from dnabird.errors import DnabirdError

__version__ = "0.1.0.dev0"
__all__ = ["DnabirdError", "Variant", "__version__", "predict", "predict_to_files", "score_variants"]


def __getattr__(name: str):
    if name in ("score_variants", "Variant"):  # imported on first use: `import dnabird` stays light
        import dnabird.variants

        return getattr(dnabird.variants, name)
    if name in ("predict", "predict_to_files"):
        import dnabird.prediction

        return getattr(dnabird.prediction, name)
    raise AttributeError(f"module 'dnabird' has no attribute {name!r}")
