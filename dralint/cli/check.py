"""``dralint check``: lint manifests and report the findings (``--fix``/``--diff`` hand over to the fix run)."""

from __future__ import annotations

import sys
from typing import Any

import click

from dralint import __version__
from dralint.cli.options import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    common_lint_options,
    report_problems,
    run_lint,
    use_color,
)
from dralint.cli.outputs import parse_output_files, progress_bar, write_outputs
from dralint.engine import progress
from dralint.engine.config import Config, ConfigError
from dralint.engine.runner import Result
from dralint.fix.write import ReportWriteError, write_report_file
from dralint.inputs import load
from dralint.inputs.load import HAVE_LIBYAML
from dralint.knowledge.classes import describe_unknown
from dralint.knowledge.profile import newest_minor
from dralint.model import Severity
from dralint.report import ReportOptions, format_names, get_chunks, get_formatter
from dralint.report.escaping import echo_err

#: results of this process's lint runs, kept until `entry` exits without freeing them (see there)
_KEEP_ALIVE: list[object] = []


def exit_code(result: Result, fail_on: str, exit_zero: bool) -> int:
    forced = report_problems(result)
    if forced:
        return forced
    if exit_zero or fail_on == "never":
        return EXIT_OK
    threshold = Severity.parse(fail_on)
    return EXIT_FINDINGS if any(f.severity >= threshold for f in result.findings) else EXIT_OK


def verbose_header(cfg: Config, result: Result, seconds: float) -> None:
    p = cfg.profile
    echo_err(f"dralint {__version__}: config {cfg.path or '(none)'}")
    echo_err(f"  target Kubernetes {p.kubernetes_version}; feature gates {p.feature_gates or '{}'}; "
             f"runtime-config {p.runtime_config or '{}'}")
    newest = newest_minor()
    if p.minor > tuple(int(x) for x in newest.split(".")):
        echo_err(f"  note: dralint has no data for Kubernetes {p.kubernetes_version}; judging with {newest}")
    if p.drivers:
        echo_err("  drivers: " + ", ".join(f"{d.name}={d.version or 'newest'}" for d in p.drivers))
        for line in describe_unknown(p):
            echo_err(f"    {line}")
    if p.device_classes:
        echo_err("  declared device classes: " + ", ".join(p.device_classes))
    if not HAVE_LIBYAML:
        echo_err("  warning: PyYAML without libyaml: parsing is ~9x slower")
    if load.NATIVE is None:
        echo_err(f"  note: the native loader is {load.NATIVE_MISSING}; parsing takes about twice as long")
    # objects of the targets only: counting the whole index would parse the targets again
    echo_err(f"  {len(result.files)} files, {result.target_objects()} objects in them, {len(result.selected)} rules, "
             f"{seconds:.2f}s")
    if cfg.jobs_requested is not None:
        echo_err(f"  jobs: {cfg.jobs_requested} requested, capped at {cfg.jobs} (the usable CPU cores)")
    if result.stats:
        echo_err("  run: " + ", ".join(f"{k} {v}" for k, v in result.stats.items()))


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@common_lint_options
@click.option("--format", "--output-format", "fmt", default="text", show_default=True,
              type=click.Choice(format_names()), help="Output format (shell completion lists them).")
@click.option("--output-file", "output_files", multiple=True, metavar="FORMAT=PATH",
              help="Also write the report in FORMAT to PATH, from the same run (repeatable), "
                   "e.g. --output-file sarif=out.sarif --output-file markdown=$GITHUB_STEP_SUMMARY.")
@click.option("-q", "--quiet", is_flag=True, help="Print the findings only, no summary.")
@click.option("--silent", is_flag=True, help="Print nothing on stdout (the exit code tells); errors go to stderr.")
@click.option("--output", "output", type=click.Path(dir_okay=False, writable=True),
              help="Write the report in --format to this file; text still goes to the terminal.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info", "never"]),
              help="Lowest severity that makes the exit code 1 (default: warning).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Show a count per rule.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
@click.option("--helm-chart", "helm_charts", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="Render this Helm chart offline (helm binary or dralint[helm]) and lint the output.")
@click.option("-f", "--values", "helm_values", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Values file for --helm-chart (repeatable).")
@click.option("--set", "helm_set", multiple=True, help="Value for --helm-chart, as helm --set (repeatable).")
@click.option("--set-string", "helm_set_string", multiple=True,
              help="String value for the charts, as helm --set-string (repeatable).")
@click.option("--release-name", "helm_release_name", help="Release name the charts render with (default: dralint).")
@click.option("--namespace", "helm_namespace", help="Release namespace the charts render with (default: default).")
@click.option("--api-versions", "helm_api_versions", multiple=True,
              help="Extra API version for .Capabilities.APIVersions, as helm --api-versions (repeatable).")
@click.option("--fix", "apply_fixes", is_flag=True, help="Apply safe fixes (same as `dralint fix`).")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff: also apply unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option("--exit-non-zero-on-fix", is_flag=True,
              help="With --fix: exit 1 when a file was changed, even if no finding remains.")
def check(paths: tuple[str, ...], fmt: str, output: str | None, fail_on: str | None, exit_zero: bool,
          statistics: bool, color: str, exit_non_zero_on_fix: bool, **kw: Any) -> None:
    """Lint manifests (files, directories, or - for stdin)."""
    extra_outputs = parse_output_files(kw.pop("output_files"))
    apply_fixes, unsafe_fixes, diff = kw.pop("apply_fixes"), kw.pop("unsafe_fixes"), kw.pop("diff")
    if apply_fixes or diff:
        from dralint.cli.apply_fixes import run_fix  # the fixer is imported only when it is asked for

        sys.exit(run_fix(paths, kw, unsafe=unsafe_fixes, diff=diff, fmt=fmt, fail_on=fail_on,
                         exit_zero=exit_zero, color=color, output=output, statistics=statistics,
                         exit_non_zero_on_fix=exit_non_zero_on_fix))
    try:
        with progress.listening(progress_bar(kw)):
            result, cfg, seconds = run_lint(paths, kw)
    except ConfigError as e:
        echo_err(f"dralint: error: {e}")
        sys.exit(EXIT_USAGE)
    _KEEP_ALIVE.append(result)
    if result.missing:
        # a path that does not exist is a usage error: a report ("All checks passed") above the error
        # would read as a success to whoever skims the log
        sys.exit(report_problems(result))
    if kw.get("verbose"):
        verbose_header(cfg, result, seconds)
    stream = sys.stdout
    opts = ReportOptions(color=use_color(color, stream), statistics=statistics,
                         verbose=bool(kw.get("verbose")), quiet=bool(kw.get("quiet")))
    # the extra reports are written after the main one, so a path that cannot be written is reported
    # after the log already shows the findings (a CI job keeps its annotations)
    code = exit_code(result, fail_on or cfg.fail_on, exit_zero)
    if kw.get("silent"):
        sys.exit(_write_extra(result, extra_outputs, statistics, code))
    if output:
        file_opts = ReportOptions(statistics=statistics)
        try:
            write_report_file(output, get_formatter(fmt)(result, file_opts))
        except ReportWriteError as e:
            echo_err(f"dralint: error: {e}")
            sys.exit(EXIT_USAGE)
        click.echo(get_formatter("text")(result, opts), nl=False, color=opts.color)
    else:
        fmt_opts = opts if fmt in ("text", "full") else ReportOptions(statistics=statistics, quiet=opts.quiet)
        for piece in get_chunks(fmt)(result, fmt_opts):  # written as made: a large report is never whole
            click.echo(piece, nl=False, color=opts.color)
    sys.exit(_write_extra(result, extra_outputs, statistics, code))


def _write_extra(result: Result, outputs: list[tuple[str, str]], statistics: bool, code: int) -> int:
    """Write the --output-file reports; any that fails is an error message and exit 2."""
    errors = write_outputs(result, outputs, ReportOptions(statistics=statistics))
    for e in errors:
        echo_err(f"dralint: error: {e}")
    return max(code, EXIT_USAGE) if errors else code
