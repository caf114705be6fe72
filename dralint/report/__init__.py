"""Output formats. Each formatter turns a lint `Result` into text; the CLI picks one by name.

A format is one module plus one entry in `_FORMATS`; a run imports only the format it writes.
The migration-readiness report (`readiness`) and the rule documentation (`docs`) are rendered here too.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from dralint.engine.memory import quiet_gc
from dralint.engine.runner import Result


@dataclass(frozen=True)
class ReportOptions:
    color: bool = False
    show_source: bool = False
    statistics: bool = False
    verbose: bool = False
    show_fixes: bool = True
    #: the command name to suggest for fixes
    fix_command: str = "dralint fix"
    #: findings only: no summary line (``-q/--quiet``)
    quiet: bool = False
    #: unsafe fixes were applied in this run, so none is left to suggest
    unsafe_fixes: bool = False


Formatter = Callable[[Result, ReportOptions], str]


#: format name -> (module under dralint.report, its render function): a run imports only its own format
_FORMATS = {"text": ("text", "render"), "json": ("json_report", "render"), "concise": ("text", "render_concise"),
            "full": ("full", "render"), "github": ("github", "render"), "sarif": ("sarif", "render"),
            "markdown": ("markdown", "render"), "junit": ("junit", "render")}


def _quietly(formatter: Formatter) -> Formatter:
    """``formatter`` with the cyclic garbage collector paused: a report of a large run builds a few
    objects per finding (none in a cycle), and the collections they set off walked the whole heap."""

    def render(result: Result, opts: ReportOptions) -> str:
        with quiet_gc():
            return formatter(result, opts)

    return render


FORMATTERS: dict[str, Formatter] = {}


def get_formatter(name: str) -> Formatter:
    """The formatter called ``name`` (`KeyError` for an unknown one), its module imported on first use."""
    if name not in FORMATTERS:
        module, attr = _FORMATS[name]
        FORMATTERS[name] = _quietly(getattr(importlib.import_module(f"dralint.report.{module}"), attr))
    return FORMATTERS[name]


Chunks = Callable[[Result, ReportOptions], Iterable[str]]


def get_chunks(name: str) -> Chunks:
    """The formatter called ``name`` as pieces of text to write one after another: a format that
    can make its report piece by piece (``render_chunks``) never holds the whole of a large one."""
    module, _ = _FORMATS[name]
    whole = get_formatter(name)
    pieces = getattr(importlib.import_module(f"dralint.report.{module}"), "render_chunks", None)
    if pieces is None:
        return lambda result, opts: [whole(result, opts)]

    def render(result: Result, opts: ReportOptions) -> Iterator[str]:
        with quiet_gc():
            yield from pieces(result, opts)

    return render


def format_names() -> list[str]:
    return sorted(_FORMATS)
