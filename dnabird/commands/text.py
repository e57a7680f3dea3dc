"""`dnabird text …`: the NLP track's commands (tokenizer, mlm, classify, qa, charlm, summarise,
triviaqa-to-squad); the training commands read a YAML of their config's keys, as the `dnabird run` stages do."""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from dnabird.commands import add_command, add_group, add_overrides, options, print_token_ids


def tokenizer_train(args: argparse.Namespace) -> None:
    from dnabird.data.text_tokenizer import SPECIAL_NAMES, TextTokenizerConfig, train_on_files

    config = TextTokenizerConfig(byte_fallback=not args.no_byte_fallback,
                                 **options(args, "vocab_size", "model_type", "sample_lines", "seed", "text_field"))
    tokenizer = train_on_files(args.files, args.out, config)
    specials = ", ".join(f"{name}={getattr(tokenizer, name + '_id')}" for name in SPECIAL_NAMES)
    print(f"wrote {args.out} (vocab {tokenizer.vocab_size}, sha256 {tokenizer.hash}; {specials})")


def tokenizer_encode(args: argparse.Namespace) -> None:
    from dnabird.data.text_tokenizer import TextTokenizer

    tokenizer = TextTokenizer.load(args.model)
    texts = args.texts or (line.rstrip("\n") for line in sys.stdin)
    print_token_ids(texts, lambda text, _: tokenizer.encode(text), tokenizer.offsets if args.offsets else None)


def _train(module: str, function: str):
    def run(args: argparse.Namespace) -> None:
        recipe = importlib.import_module(module)
        getattr(recipe, function)(recipe.load_config(args.config, args.overrides), resume=args.resume)
    return run


def triviaqa(args: argparse.Namespace) -> None:
    from dnabird.data.squad import triviaqa_to_squad

    counts = triviaqa_to_squad(args.qa_file, args.evidence_dir, args.out, max_words=args.max_words,
                               keep_unanswered=not args.answered_only)
    print(f"wrote {args.out}: {json.dumps(counts)}")


def summarise(args: argparse.Namespace) -> None:
    from dnabird.model.generation import GenerationSettings
    from dnabird.text.summarisation import Summariser, summarise_files

    settings = GenerationSettings(num_beams=args.num_beams, length_penalty=args.length_penalty,
                                  max_length=args.max_summary_tokens)
    summariser = Summariser.load(args.model, settings=settings, **options(args, "max_length", "on_long", "batch_size"))
    for written in summarise_files(summariser, args.inputs, document_field=args.document_field):
        print(f"wrote {written}")


TRAINING = {
    "mlm": ("dnabird.text.mlm", "pretrain_text", "masked-LM pretraining on plain text or JSONL (MLM only, BPC)"),
    "classify": ("dnabird.text.classify", "classify", "long-document classification (accuracy, F1)"),
    "qa": ("dnabird.text.qa", "answer_questions", "extractive QA on SQuAD-format files (EM, F1)"),
    "charlm": ("dnabird.text.charlm", "train_charlm", "character-level causal LM on text8/enwik8 files (BPC)"),
}


def register(subparsers) -> None:
    commands = add_group(subparsers, "text", help="the NLP track: text tokenizer, MLM, classification, QA, char LM",
                         description="The NLP track on the same attention core: a sentencepiece text tokenizer, "
                                     "masked-LM pretraining, document classification, question answering and a "
                                     "character-level causal LM.")

    tok = add_group(commands, "tokenizer", help="train a sentencepiece text tokenizer or encode text")
    trainer = add_command(tok, "train", tokenizer_train, help="train on plain-text or JSONL files")
    trainer.add_argument("files", nargs="+", help="text files or directories (*.txt, *.jsonl)")
    trainer.add_argument("--out", required=True, help="model file to write, e.g. text.model")
    trainer.add_argument("--vocab-size", type=int, default=32000, help="pieces incl. 5 specials (default: %(default)s)")
    trainer.add_argument("--model-type", default="unigram", choices=("unigram", "bpe", "word", "char"))
    trainer.add_argument("--no-byte-fallback", action="store_true", help="unseen characters become [UNK]")
    trainer.add_argument("--sample-lines", type=int, default=1_000_000, help="lines sampled for training")
    trainer.add_argument("--text-field", default="text", help="JSONL field holding a document")
    trainer.add_argument("--seed", type=int, default=0, help="sampling seed")
    encoder = add_command(tok, "encode", tokenizer_encode, help="print token ids of texts (arguments or stdin lines)")
    encoder.add_argument("--model", required=True, help="sentencepiece model (trained here or e.g. spiece.model)")
    encoder.add_argument("texts", nargs="*", help="texts; none: read stdin")
    encoder.add_argument("--offsets", action="store_true", help="print id:start-end character spans")

    for name, (module, function, help_text) in TRAINING.items():
        command = add_command(commands, name, _train(module, function), help=help_text)
        command.add_argument("--config", required=True, help="YAML with the keys of the run's config")
        add_overrides(command, resume=True)

    summary = add_command(commands, "summarise", summarise,
                          help="summarise documents with an encoder-decoder checkpoint")
    summary.add_argument("--model", required=True, help="encoder-decoder checkpoint (import-hf led|bigbird_pegasus, "
                                                        "or the summarise task's model/)")
    summary.add_argument("inputs", nargs="+", help="a .txt file (one document; writes <name>.summary.txt beside it) "
                                                   "or a .jsonl file (one document per record; writes "
                                                   "<name>.summaries.jsonl beside it)")
    summary.add_argument("--document-field", default="document", help="JSONL field holding a document")
    summary.add_argument("--num-beams", type=int, default=1, help="1: greedy (default); more: beam search")
    summary.add_argument("--length-penalty", type=float, default=1.0, help="beam scores / length ** this")
    summary.add_argument("--max-summary-tokens", type=int, default=128, help="tokens generated at most")
    summary.add_argument("--max-length", type=int, help="encoder tokens per document (default: the model's)")
    summary.add_argument("--on-long", choices=("truncate", "error"), default="truncate",
                         help="a document longer than --max-length: keep its first tokens (warning) or refuse")
    summary.add_argument("--batch-size", type=int, default=4, help="documents per forward pass")

    convert = add_command(commands, "triviaqa-to-squad", triviaqa,
                          help="convert TriviaQA (qa JSON + evidence) as Longformer does")
    convert.add_argument("qa_file", help="e.g. qa/wikipedia-dev.json")
    convert.add_argument("evidence_dir", help="the evidence/ folder (wikipedia/, web/)")
    convert.add_argument("out", help="SQuAD-format JSON to write")
    convert.add_argument("--max-words", type=int, default=4096, help="words kept per document (default: %(default)s)")
    convert.add_argument("--answered-only", action="store_true", help="drop documents without an answer")
