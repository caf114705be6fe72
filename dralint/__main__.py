from dralint.cli.app import entry

entry()
