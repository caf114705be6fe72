"""One lint run, several reports: the entry point the GitHub Action (``action.yml``) calls.

``python -m dralint.cli.action [check options] --format github --output-file sarif=dralint.sarif
--output-file markdown=summary.md -- PATHS`` lints once and renders every report from that one
`Result`. Running ``dralint check`` once per format (what the action did before) parsed, rendered
and judged the repository three times, and a change between the runs (a chart rendered
differently, a file written by an earlier step) could make the annotations, the SARIF upload and
the job summary disagree.

The log format goes to stdout; every ``--output-file`` is written like ``check --output``: atomically
and never through a symbolic link (the workspace is the pull request's checkout). A report that
cannot be written is a usage error (exit 2), but the other reports are still written, so the job log
keeps its annotations. The exit code is otherwise ``check``'s.
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any

import click

from dralint.cli.check import exit_code
from dralint.cli.options import EXIT_INTERNAL, EXIT_USAGE, common_lint_options, run_lint
from dralint.engine.config import ConfigError
from dralint.fix.write import ReportWriteError, write_report_file
from dralint.report import ReportOptions, format_names, get_formatter
from dralint.report.escaping import echo_err


def parse_output_file(value: str) -> tuple[str, str]:
    """``FORMAT=PATH`` → (format, path); a usage error names the accepted formats."""
    fmt, sep, path = value.partition("=")
    fmt = fmt.strip().lower()
    if not sep or not path:
        raise click.BadParameter(f"{value!r}: expected FORMAT=PATH, e.g. sarif=dralint.sarif")
    if fmt not in format_names():
        raise click.BadParameter(f"{fmt!r} is not a format; choose from {', '.join(format_names())}")
    return fmt, path


def _output_files(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> list[tuple[str, str]]:
    return [parse_output_file(v) for v in values]


@click.command("action", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path())
@common_lint_options
@click.option("--format", "fmt", type=click.Choice(format_names()), default="github", show_default=True,
              help="What stdout (the job log) shows.")
@click.option("--output-file", "outputs", multiple=True, callback=_output_files, metavar="FORMAT=PATH",
              help="Also write the report in FORMAT to PATH, from the same run (repeatable).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info", "never"]),
              help="Lowest severity that makes the exit code 1 (default: the config's, else warning).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Show a count per rule.")
@click.option("--helm-chart", "helm_charts", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="Render this Helm chart offline and lint the output.")
@click.option("-f", "--values", "helm_values", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Values file for --helm-chart (repeatable).")
@click.option("--set", "helm_set", multiple=True, help="Value for --helm-chart, as helm --set (repeatable).")
def action(paths: tuple[str, ...], fmt: str, outputs: list[tuple[str, str]], fail_on: str | None,
           exit_zero: bool, statistics: bool, **kw: Any) -> None:
    """Lint once; print FORMAT and write every --output-file from that run."""
    try:
        result, cfg, _ = run_lint(paths, kw)
    except ConfigError as e:
        echo_err(f"dralint: error: {e}")
        sys.exit(EXIT_USAGE)
    opts = ReportOptions(statistics=statistics)
    # the reports first: a path that cannot be written is reported after the log has its annotations
    click.echo(get_formatter(fmt)(result, opts), nl=False)
    code = exit_code(result, fail_on or cfg.fail_on, exit_zero)
    for out_fmt, path in outputs:
        try:
            write_report_file(path, get_formatter(out_fmt)(result, opts))
        except ReportWriteError as e:
            echo_err(f"dralint: error: {e}")
            code = max(code, EXIT_USAGE)
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run the command and return its exit code; bad input is a message and exit 2, never a traceback."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        action.main(args=args, prog_name="python -m dralint.cli.action", standalone_mode=False)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else EXIT_USAGE)
    except click.ClickException as e:
        shown = io.StringIO()  # click quotes the offending argument (a file name, say): escape it too
        e.show(file=shown)
        echo_err(shown.getvalue().rstrip("\n"))
        return EXIT_USAGE
    except click.exceptions.Abort:
        return EXIT_USAGE
    except Exception as e:  # a bug: the same plain message as the dralint command gives
        echo_err(f"dralint: internal error: {type(e).__name__}: {e} (set DRALINT_DEBUG=1 for a traceback)")
        if os.environ.get("DRALINT_DEBUG"):
            raise
        return EXIT_INTERNAL
    return 0


if __name__ == "__main__":
    sys.exit(main())
