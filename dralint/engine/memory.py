"""The garbage collector around a run: parse trees are built with it paused and checked with them
frozen out of its sight (large runs only)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: how many `quiet_gc` blocks are open (a command that loads its files itself and then lints them)
_depth = 0


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """Build parse trees with the cyclic garbage collector paused, then check with it frozen out.

    Trees are acyclic and live for the whole run; with the collector on, every full collection
    walks all of them again (measured: more than half of the load time on a 28 MB repository).
    Rules still get a working collector for their own short-lived garbage: `freeze` moves the
    trees out of its sight. Everything is restored on exit (library callers keep a normal GC).
    Blocks nest: only the outermost one unfreezes, so that the trees an outer block froze (the
    files `migrate` loaded) stay out of sight through every lint inside it.
    """
    global _depth
    was = gc.isenabled()
    gc.disable()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth:
            gc.unfreeze()
        if was:
            gc.enable()


#: below this much parsed text, a full collection walking the trees costs less than freezing does
#: to a long-running library caller: `freeze` also takes that process's garbage of the moment out of
#: sight, and after `unfreeze` it sits in the oldest generation, which is rarely collected (a fuzz
#: loop calling `lint_text` grew by gigabytes)
FREEZE_MIN_CHARS = 1_000_000


def trees_built(chars: int = FREEZE_MIN_CHARS) -> None:
    """Called by `quiet_gc` users once the trees (of ``chars`` characters of text) exist: hide large
    ones from the collector, turn it back on."""
    if chars >= FREEZE_MIN_CHARS:
        gc.freeze()
    gc.enable()


#: what `linger` keeps, in a process that ends without a teardown (see `leave_without_teardown`)
_lingering: list[object] | None = None


def leave_without_teardown() -> None:
    """Called by the console script, which ends with `os._exit` once everything is written: from now
    on `linger` keeps what it is given to the end of the process."""
    global _lingering
    if _lingering is None:
        _lingering = []


def linger(obj: object) -> None:
    """Keep ``obj`` (parse trees, an index) alive to the end of a process that ends without a teardown,
    instead of freeing it object by object when its last user returns (0.13 s of `migrate` on the bench
    corpus, and with workers a page fault for every page it touches, as they were shared with them).
    A library caller (no `leave_without_teardown`) gets the memory back as usual."""
    if _lingering is not None:
        _lingering.append(obj)
