"""The click application: the ``dralint`` group with every command (``check``, ``fix``, ``migrate``,
``report``, ``rules``, ``explain``; one module each), and the entry points.

`main(argv) -> int` is the testable entry point; `entry()` is the console script. Exit codes:
0 nothing at or above ``--fail-on``; 1 findings; 2 usage or configuration error; 3 internal error.
"""

from __future__ import annotations

import importlib
import io
import os
import sys
from collections.abc import Sequence

import click

from dralint import __version__
from dralint.cli.options import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE
from dralint.engine import memory
from dralint.engine.config import ConfigError
from dralint.report.escaping import echo_err

#: command -> (module in dralint.cli, attribute: a command, or a function that makes one). A command's
#: module is imported when that command runs (or help lists them): a pre-commit `check` of one file
#: should not pay for importing the migration planner.
COMMANDS = {
    "check": ("check", "check"),
    "rules": ("rules", "rules_cmd"),
    "explain": ("rules", "explain"),
    "report": ("report", "command"),
    "fix": ("fix", "command"),
    "migrate": ("migrate", "command"),
}


class _Commands(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        if cmd_name not in self.commands:
            module, attr = COMMANDS[cmd_name]
            made = getattr(importlib.import_module(f"dralint.cli.{module}"), attr)
            self.commands[cmd_name] = made if isinstance(made, click.Command) else made()
        return self.commands[cmd_name]


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dralint")
def cli() -> None:
    """Lint Kubernetes manifests for Dynamic Resource Allocation and migrate them off the device plugin."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (never raises for bad input)."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="dralint", standalone_mode=False)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else EXIT_USAGE)
    except click.exceptions.Abort:
        echo_err("Aborted.")
        return EXIT_USAGE
    except click.ClickException as e:
        shown = io.StringIO()  # click quotes the offending argument (a file name, say): escape it too
        e.show(file=shown)
        echo_err(shown.getvalue().rstrip("\n"))
        return EXIT_USAGE
    except ConfigError as e:
        echo_err(f"dralint: error: {e}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug: say so plainly, with a pointer to the traceback switch
        echo_err(f"dralint: internal error: {type(e).__name__}: {e} (set DRALINT_DEBUG=1 for a traceback)")
        if os.environ.get("DRALINT_DEBUG"):
            raise
        return EXIT_INTERNAL
    return EXIT_OK


def entry() -> None:
    memory.leave_without_teardown()  # see below
    code = main()
    if sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)  # a profiler or coverage tool writes its report at normal exit
    # A large run holds millions of small objects (the parse trees); freeing them one by one at exit
    # took a tenth of a whole check. Everything has been written by now: flush, and skip the teardown.
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):
        pass  # a closed pipe (`dralint check | head`): what was not read is gone either way
    os._exit(code)
