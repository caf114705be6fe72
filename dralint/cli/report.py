"""``dralint report``: migration readiness per namespace and directory (`dralint.report.readiness`)."""

from __future__ import annotations

import sys
from typing import Any

import click

from dralint.cli.options import EXIT_USAGE, common_lint_options, report_problems, run_lint
from dralint.engine.config import ConfigError
from dralint.fix.write import ReportWriteError, write_report_file
from dralint.report.escaping import echo_err
from dralint.report.readiness import assess, render


def command() -> click.Command:
    """The ``report`` command (`dralint.cli.app` registers it)."""

    @click.command("report")
    @click.argument("paths", nargs=-1, type=click.Path())
    @common_lint_options
    @click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown", "html"]), default="text",
                  show_default=True)
    @click.option("--output", type=click.Path(dir_okay=False, writable=True),
                  help="Write the report to this file instead of stdout.")
    @click.option("--fail-if-not-ready", is_flag=True,
                  help="Exit 1 while any workload uses device-plugin resources or an error finding remains.")
    def report(paths: tuple[str, ...], fmt: str, output: str | None, fail_if_not_ready: bool, **kw: Any) -> None:
        """Migration readiness per namespace and directory (a repository or a `kubectl get -A -o json` dump)."""
        if kw.get("jobs") is None:
            # the report reads every target object after the lint; worker processes would keep those trees
            # to themselves and this process would parse every file a second time
            kw["jobs"] = 1
        try:
            result, _, _ = run_lint(paths, kw)
        except ConfigError as e:
            echo_err(f"dralint: error: {e}")
            sys.exit(EXIT_USAGE)
        forced = report_problems(result)
        readiness = assess(result)
        text = _html(result, readiness) if fmt == "html" else render(readiness, fmt)
        if output:
            try:
                write_report_file(output, text)
            except ReportWriteError as e:
                echo_err(f"dralint: error: {e}")
                sys.exit(EXIT_USAGE)
        else:
            click.echo(text, nl=False)
        if forced:
            sys.exit(forced)
        sys.exit(1 if fail_if_not_ready and not readiness.total.ready else 0)

    return report


def _html(result: Any, readiness: Any) -> str:
    """The self-contained page, with the workloads `dralint migrate` would skip (`dralint.report.html`)."""
    from dralint.migrate.preview import skipped_workloads
    from dralint.report.html import Skip, render_html

    legacy = {(w["path"], w["object"]["kind"], w["object"]["namespace"], w["object"]["name"]): w["uses_dra"]
              for w in readiness.legacy_workloads}
    skips = [Skip(w.path, w.line, w.kind, w.namespace, w.name, w.reason,
                  bool(legacy.get((w.path, w.kind, w.namespace, w.name))))
             for w in skipped_workloads(result, result.config)]
    return render_html(readiness, skips)
