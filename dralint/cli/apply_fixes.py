"""The fix run behind ``dralint fix`` and ``dralint check --fix``: apply recorded fixes, verified, atomically.

Exit codes follow ruff: 0 nothing is left at or above ``--fail-on`` (every such finding was fixed,
or there was none); 1 findings remain, or ``--diff`` would change a file, or (with
``--exit-non-zero-on-fix``, the old behaviour, for scripts that must notice a rewrite) a file was
changed; 2 usage error or a fix that failed its gates (then that file is left untouched); 3 internal
error. pre-commit notices rewritten files by itself, so a hook needs no non-zero exit for them.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from dralint.cli.options import build_run_config, read_stdin, report_problems, use_color
from dralint.engine import rendered_targets
from dralint.engine.config import ConfigError
from dralint.fix.loop import FixRun, fix_paths
from dralint.fix.write import ReportWriteError, atomic_write, unified_diff, write_report_file
from dralint.model import Severity
from dralint.report import ReportOptions, get_formatter
from dralint.report.escaping import echo_err, log_guard, visible

EXIT_OK, EXIT_CHANGED, EXIT_USAGE = 0, 1, 2


def run_fix(paths: Sequence[str], kw: dict[str, Any], *, unsafe: bool = False, diff: bool = False,
            fmt: str = "text", fail_on: str | None = None, exit_zero: bool = False, color: str = "auto",
            output: str | None = None, statistics: bool = False, exit_non_zero_on_fix: bool = False) -> int:
    """The body of ``fix`` / ``check --fix``; returns the exit code."""
    targets = list(paths)
    stdin: tuple[str, bytes] | None = None
    try:
        cfg = build_run_config(kw, paths)
        if "-" in targets:
            targets.remove("-")
            stdin = (kw.get("stdin_filename") or "-", read_stdin(cfg))
    except ConfigError as e:
        echo_err(f"dralint: error: {e}")
        return EXIT_USAGE
    unsafe = unsafe or cfg.unsafe_fixes  # `unsafe-fixes: true` in the configuration file
    if stdin is None and not targets:
        targets = ["."]
    # charts and overlays are rendered, never rewritten: say so, and report their findings
    rendered = rendered_targets.split(targets, cfg)
    for note in rendered_targets.refusals("fix", rendered):
        echo_err(f"dralint: note: {visible(note)}")
    from dralint.cli.outputs import progress_bar
    from dralint.engine import progress

    with progress.listening(progress_bar(kw)):
        run, missing = fix_paths(rendered.plain, cfg, kw.get("context") or (), stdin, unsafe,
                                 bool(kw.get("follow_symlinks")))
    run.result.missing = missing
    try:
        rendered_targets.add_rendered_findings(run.result, rendered, cfg, kw)
    except ConfigError as e:
        echo_err(f"dralint: error: {e}")
        return EXIT_USAGE
    problem = report_problems(run.result)
    if missing:
        return problem  # a mistyped path: write nothing, and print no report that could read as success
    failed = _write(run, diff, stdin[0] if stdin else None)
    to_stderr = stdin is not None or diff
    stream = sys.stderr if to_stderr else sys.stdout
    opts = ReportOptions(color=use_color(color, stream), statistics=statistics, verbose=bool(kw.get("verbose")),
                         quiet=bool(kw.get("quiet")), unsafe_fixes=unsafe)
    if output:
        try:
            write_report_file(output, get_formatter(fmt)(run.result, ReportOptions(statistics=statistics)))
        except ReportWriteError as e:
            echo_err(f"dralint: error: {e}")
            return 2
        fmt = "text"
    report = get_formatter(fmt)(run.result, opts if fmt in ("text", "full") else ReportOptions(statistics=statistics))
    if not kw.get("silent"):
        click.echo(report, nl=False, err=to_stderr, color=opts.color)
    fixed = sum(sum(f.applied.values()) for f in run.changed())
    if fixed and not (kw.get("quiet") or kw.get("silent")):
        verb = "Would fix" if diff else "Fixed"
        echo_err(f"{verb} {fixed} finding{'s' if fixed != 1 else ''} in {len(run.changed())} "
                 f"file{'s' if len(run.changed()) != 1 else ''}.")
    if failed:
        return EXIT_USAGE
    if problem:
        return problem
    if run.changed() and (diff or exit_non_zero_on_fix):
        return EXIT_CHANGED
    threshold = fail_on or cfg.fail_on
    if exit_zero or threshold == "never":
        return EXIT_OK
    level = Severity.parse(threshold)
    return EXIT_CHANGED if any(f.severity >= level for f in run.result.findings) else EXIT_OK


def _write(run: FixRun, diff: bool, stdin_name: str | None) -> bool:
    """Write (or show) each changed file; report gate failures and notes. True when a gate failed."""
    failed = False
    for fo in run.files:
        for gf in fo.failures:
            failed = True
            echo_err(f"dralint: error: not fixing {fo.path}: {', '.join(gf.rules) or 'fix'}: {gf.reason}; "
                     "the file was left unchanged (this is a bug in the rule's fix; please report it)")
        for note in fo.notes:
            echo_err(f"{fo.path}: note: {note}")
        is_stdin = stdin_name is not None and fo.path == stdin_name
        if is_stdin and not diff:
            sys.stdout.buffer.write(fo.after if fo.changed else fo.before)
            sys.stdout.flush()
            continue
        if not fo.changed:
            continue
        if diff:
            # the file's own bytes stay as they are (the diff must apply); its name is input text
            click.echo(log_guard(unified_diff(visible(fo.path), fo.before, fo.after)), nl=False)
            continue
        try:
            atomic_write(run.write_to.get(fo.path, fo.path), fo.after, run.roots)
        except OSError as e:
            failed = True
            echo_err(f"dralint: error: cannot write {fo.path}: {e.strerror or e}")
            continue
        echo_err(fo.summary())
    return failed
