"""A one-line progress bar on stderr for long runs (``check``, ``fix``, ``migrate``).

Shown only when stderr is a terminal and the run has more than `MIN_FILES` files (a short run
would only flicker), and drawn at most `REDRAW_SECONDS` apart so that drawing never costs more than
the work. The bar appears as soon as the engine knows the file count; the remaining time is
estimated from the average rate so far and left out until there is a rate worth the name (a
second of work and a few percent done), so the first guess is not wildly wrong.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

MIN_FILES = 200
REDRAW_SECONDS = 0.1
WIDTH = 30


def wanted(stream: TextIO) -> bool:
    """Whether a bar may be drawn on ``stream``: a terminal, not a dumb one."""
    if os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def eta_text(done: int, total: int, elapsed: float) -> str:
    """``ETA 0:12`` from the average rate so far; empty while the estimate would be a guess."""
    if done <= 0 or total <= 0 or elapsed < 1.0 or done / total < 0.02:
        return ""
    left = max(0.0, elapsed * (total - done) / done)
    minutes, seconds = divmod(int(left + 0.5), 60)
    return f"ETA {minutes}:{seconds:02d}"


def line(done: int, total: int, elapsed: float, what: str) -> str:
    done = min(done, total)
    frac = done / total if total else 1.0
    filled = int(WIDTH * frac)
    bar = "#" * filled + "-" * (WIDTH - filled)
    eta = eta_text(done, total, elapsed)
    return f"[{bar}] {done}/{total} {what} {int(frac * 100):3d}%" + (f"  {eta}" if eta else "")


class Bar:
    """A `dralint.engine.progress.Listener` that draws on ``stream`` (stderr by default)."""

    def __init__(self, stream: TextIO | None = None, min_files: int = MIN_FILES,
                 clock: object = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.min_files = min_files
        self.clock = clock
        self.total = 0
        self.done = 0
        self.what = "files"
        self.t0 = 0.0
        self.last = -1.0
        self.active = False
        self.drawn = False

    def _now(self) -> float:
        return float(self.clock())  # type: ignore[operator]

    def start(self, total: int, what: str) -> None:
        self.total, self.what, self.done = total, what, 0
        self.active = total > self.min_files
        self.t0 = self._now()
        if self.active:
            self._draw(force=True)  # at once: the user sees the run has started

    def advance(self, n: int = 1) -> None:
        if not self.active:
            return
        self.done += n
        self._draw(force=self.done >= self.total)
        if self.done >= self.total:
            self.active = False  # a fix run lints again after applying: the bar covers the first pass

    def _draw(self, force: bool = False) -> None:
        now = self._now()
        if not force and now - self.last < REDRAW_SECONDS:
            return
        self.last = now
        self.stream.write("\r" + line(self.done, self.total, now - self.t0, self.what) + "\x1b[K")
        self.stream.flush()
        self.drawn = True

    def finish(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")  # leave the line empty for what follows
            self.stream.flush()
        self.active = self.drawn = False
