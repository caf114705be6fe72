"""``dralint fix``: apply recorded fixes, verified, atomically (the run itself is `dralint.cli.apply_fixes`)."""

from __future__ import annotations

import sys
from typing import Any

import click

from dralint.cli.apply_fixes import run_fix
from dralint.cli.options import common_lint_options


def command() -> click.Command:
    @click.command("fix")
    @click.argument("paths", nargs=-1, type=click.Path())
    @common_lint_options
    @click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that change behaviour.")
    @click.option("--diff", is_flag=True, help="Print a unified diff of the fixes and write nothing.")
    @click.option("--fail-on", type=click.Choice(["error", "warning", "info", "never"]),
                  help="Lowest severity of a remaining finding that makes the exit code 1 (default: warning).")
    @click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
    @click.option("--exit-non-zero-on-fix", is_flag=True,
                  help="Exit 1 when a file was changed, even if no finding remains.")
    @click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
    @click.option("-q", "--quiet", is_flag=True, help="Print the remaining findings only, no summary.")
    @click.option("--silent", is_flag=True, help="Print nothing but errors (the exit code tells).")
    def fix(paths: tuple[str, ...], unsafe_fixes: bool, diff: bool, fail_on: str | None, exit_zero: bool,
            exit_non_zero_on_fix: bool, color: str, **kw: Any) -> None:
        """Apply fixes to manifests (files, directories, or - for stdin: fixed text on stdout).

        Safe fixes by default; --unsafe-fixes adds the ones that change behaviour. A file is written
        only if every fix in it re-parses, leaves untouched documents byte-identical and keeps object
        identities; Helm-rendered documents are never rewritten. Exits 0 when no finding at or
        above --fail-on remains, 1 when one does (or --diff would change a file).
        """
        sys.exit(run_fix(paths, kw, unsafe=unsafe_fixes, diff=diff, fail_on=fail_on, exit_zero=exit_zero,
                         color=color, exit_non_zero_on_fix=exit_non_zero_on_fix))

    return fix
