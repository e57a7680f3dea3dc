"""Data path: corpus of documents cut from the genome."""
