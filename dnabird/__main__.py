"""`python -m dnabird` runs the command-line interface."""

from dnabird.cli import main

raise SystemExit(main())
