"""The command line: the click app and one module per command; shared options in `dralint.cli.options`.

``dralint.cli:entry`` is the console script and ``dralint.cli.main(argv)`` the testable entry point;
both live in `dralint.cli.app`."""

from dralint.cli.app import cli, entry, main

__all__ = ["cli", "entry", "main"]
