"""Running a model over DNA, whatever the question: what `dnabird.variants` (variant effects) and
`dnabird.prediction` (a head over sequences, regions and tiles) both stand on.

`predictor` (a loaded model, its tokenizer, task, device and precision: logits, masked log-likelihoods,
pooled vectors of padded `[CLS] window [SEP]` rows), `windows` (genome windows read with their contig-end
padding and N runs flagged), `chunks` (a run saved chunk by chunk in OUT.partial/, resumed after an
interruption, its fingerprint checked) and `tables` (atomic TSV, parquet and HDF5 writers of tables that
arrive chunk by chunk).
"""
