"""How a long run tells whoever watches how far it got, without knowing who watches.

The engine calls `start(total)` once it knows how many units of work there are, then `advance(n)`
as units finish; `finish()` at the end. By default nobody listens and the calls cost a global
lookup. The command line installs a `Listener` (`dralint.report.progress.Bar`) with `listening`
for the duration of one command; the engine never imports the report layer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class Listener(Protocol):
    def start(self, total: int, what: str) -> None: ...
    def advance(self, n: int = 1) -> None: ...
    def finish(self) -> None: ...


_current: Listener | None = None


@contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Send this block's progress to ``listener`` (None: to nobody)."""
    global _current
    before = _current
    _current = listener
    try:
        yield
    finally:
        if listener is not None:
            listener.finish()
        _current = before


def start(total: int, what: str = "files") -> None:
    if _current is not None:
        _current.start(total, what)


def advance(n: int = 1) -> None:
    if _current is not None:
        _current.advance(n)


def finish() -> None:
    if _current is not None:
        _current.finish()
