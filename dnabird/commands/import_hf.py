"""`dnabird import-hf`: convert a Hugging Face BigBird, Longformer, LED or BigBird-Pegasus directory into a dnabird
checkpoint."""

from __future__ import annotations

import argparse

from dnabird.commands import add_command


def run(args: argparse.Namespace) -> None:
    """convert a Hugging Face save_pretrained directory

    Convert a Hugging Face BigBird, Longformer, LED or BigBird-Pegasus directory (written by save_pretrained) into a
    dnabird checkpoint directory, with its tokenizer and, for a classifier, its task.json."""
    from dnabird.model import from_hf_longformer, save_checkpoint
    from dnabird.model.hf_seq2seq import import_encoder_decoder
    from dnabird.model.hub_import import TaskOptions, import_hub_checkpoint

    if args.architecture != "bigbird":
        if args.architecture == "longformer":
            model = from_hf_longformer(args.source)
            save_checkpoint(model, args.output)
        else:  # the encoder-decoders (led, bigbird_pegasus), with their tokenizer
            model = import_encoder_decoder(args.architecture, args.source, args.output)
        print(f"wrote {args.output} ({sum(p.numel() for p in model.parameters()):,} parameters)")
        return
    labels = tuple(args.labels.split(",")) if args.labels else None
    task = TaskOptions(labels=labels, window_bp=args.window, anchor=args.anchor, strand_rule=args.strand_rule,
                       eval_length=args.eval_length, task=args.task)
    made = import_hub_checkpoint(args.source, args.output, tokenizer=args.tokenizer, task=task,
                                 bp_per_token=args.bp_per_token)
    print(f"wrote {args.output} ({sum(p.numel() for p in made['model'].parameters()):,} parameters; "
          f"{made['heads']}; tokenizer: {made['tokenizer'] or 'none, see the warning above'})")
    if made["bp_per_token"] is not None:
        print(f"bp per token: {made['bp_per_token'].value} ({made['bp_per_token'].source}), sizes default mlm_llr "
              "windows")


def register(subparsers) -> None:
    parser = add_command(subparsers, "import-hf", run)
    parser.add_argument("source", help="directory written by transformers' save_pretrained (config.json, "
                                       "model.safetensors or pytorch_model.bin, tokenizer.json)")
    parser.add_argument("output", help="dnabird checkpoint directory to write")
    parser.add_argument("--architecture", choices=("bigbird", "longformer", "led", "bigbird_pegasus"),
                        default="bigbird")
    bigbird = parser.add_argument_group("BigBird: tokenizer, and the task.json of a classifier")
    bigbird.add_argument("--tokenizer", help="the model's tokenizer (tokenizer.json with special_tokens_map.json "
                                             "beside it, or a .model) when SOURCE has none")
    bigbird.add_argument("--bp-per-token", type=float,
                         help="the tokenizer's mean bp per token on the model's genome, stored with the checkpoint "
                              "to size default mlm_llr windows (default: measured on a fixed random sequence)")
    bigbird.add_argument("--labels", help="classifier: comma-separated output names, one per logit")
    bigbird.add_argument("--window", type=int, help="classifier: input window in bp")
    bigbird.add_argument("--anchor", help="classifier: 'centre' or 'tss:-U:+D' (where the window sits)")
    bigbird.add_argument("--strand-rule", choices=("both", "forward", "feature"),
                         help="classifier: default 'both' (RC-averaged) for a centre anchor, else 'feature'")
    bigbird.add_argument("--eval-length", type=int, help="classifier: padded token length (default: the "
                                                         "model's positions)")
    bigbird.add_argument("--task", default="imported", help="classifier: task name for task.json")
