"""What `check` and `fix` share for output beyond the main report: extra report files from the same
run (``--output-file FORMAT=PATH``) and the progress bar on stderr."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from dralint.cli.options import UsageError
from dralint.engine.runner import Result
from dralint.fix.write import ReportWriteError, write_report_file
from dralint.report import ReportOptions, format_names, get_formatter
from dralint.report.progress import Bar, wanted


def parse_output_files(values: Sequence[str]) -> list[tuple[str, str]]:
    """``sarif=out.sarif`` -> ``("sarif", "out.sarif")``; a bad spelling is a usage error (exit 2)."""
    out: list[tuple[str, str]] = []
    for v in values:
        fmt, sep, path = v.partition("=")
        fmt = fmt.strip().lower()
        if not sep or not path.strip():
            raise UsageError(f"--output-file {v!r}: expected FORMAT=PATH, e.g. sarif=dralint.sarif")
        if fmt not in format_names():
            raise UsageError(f"--output-file {v!r}: unknown format {fmt!r}; choose from {', '.join(format_names())}")
        out.append((fmt, path))
    return out


def write_outputs(result: Result, outputs: Sequence[tuple[str, str]], opts: ReportOptions) -> list[str]:
    """Write each extra report and return the errors, one per path that could not be written: the other
    reports are still written (a CI job keeps its SARIF when the step-summary path is bad, say)."""
    errors: list[str] = []
    for fmt, path in outputs:
        try:
            write_report_file(path, get_formatter(fmt)(result, opts))
        except ReportWriteError as e:
            errors.append(str(e))
    return errors


def progress_bar(kw: dict[str, Any]) -> Bar | None:
    """A bar on stderr when it is a terminal (the bar itself waits for a run of more than 200 files)."""
    if kw.get("quiet") or kw.get("silent") or not wanted(sys.stderr):
        return None
    return Bar(sys.stderr)
