"""Reference genome access: FASTA windows, liftover, BED records."""
