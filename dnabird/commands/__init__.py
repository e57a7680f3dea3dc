"""One module per `dnabird` subcommand; see `dnabird.cli`."""
