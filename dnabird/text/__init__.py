"""The NLP track: the same attention core, encoder, checkpoints and training loop on long text.

`mlm` (masked-LM pretraining on packed documents, BPC), `classify` (long-document classification),
`qa` (extractive QA with global attention on the question; `qa_metrics`: EM/F1 with the official
normalisations), `charlm` (character-level causal LM, BPC on text8/enwik8-format files) and summarisation
(`summarisation`: `summarise(model_dir, documents)`; `summarise_task`: fine-tuning, ROUGE).
"""

from dnabird.text.summarisation import summarise

__all__ = ["summarise"]
