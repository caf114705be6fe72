from dralint.cli import entry

entry()
