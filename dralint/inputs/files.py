"""Finding and reading the files to lint.

Directories are walked recursively for ``.yaml``/``.yml``/``.json`` files, skipping VCS folders,
virtualenvs and excluded globs. A symlink that leads outside the roots (`dralint.inputs.roots`) is never
opened: it becomes an info finding (DRA007) unless ``--follow-symlinks``. Only regular files are
read (a FIFO would block; a device would never end). Read errors become findings, not exceptions.
"""

from __future__ import annotations

import contextlib
import operator
import os
import stat
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from dralint.inputs.ignore import GitignoreLayers, matches
from dralint.inputs.load import Limits, LoadProblem, SourceFile, load_bytes
from dralint.inputs.roots import Roots, printable
from dralint.model import Span

__all__ = ["FileRef", "discover", "input_roots", "printable", "read_file", "read_raw"]

EXTENSIONS = (".yaml", ".yml", ".json")
SKIPPED_LINK = "DRA007"

_LINK_FILE = ("symbolic link to a file outside the linted directories and the project: not read "
              "(pass --follow-symlinks to lint it)")
_LINK_DIR = ("symbolic link to a directory outside the linted directories and the project: not entered "
             "(pass --follow-symlinks to lint it)")

#: directories never walked into (VCS, virtualenvs, tool caches)
DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", ".tox", ".nox", "__pycache__",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", ".dralint_cache",
)


#: directory listings of the current run (`one_walk`): path as walked -> its entries sorted by name
_LISTINGS: ContextVar[dict[str, list[os.DirEntry[str]]] | None] = ContextVar("dralint_listings", default=None)


@contextlib.contextmanager
def one_walk() -> Iterator[None]:
    """Within this block, each directory is listed once: finding the Helm charts under a path and
    discovering its files walk the same tree, and the second walk reads the first one's listings."""
    token = _LISTINGS.set({})
    try:
        yield
    finally:
        _LISTINGS.reset(token)


_NAME = operator.attrgetter("name")  # sorts a listing without a Python call per entry


def listing(path: str) -> list[os.DirEntry[str]]:
    """The entries of a directory sorted by name (raises `OSError`); listed once within `one_walk`."""
    memo = _LISTINGS.get()
    if memo is not None and path in memo:
        return memo[path]
    with os.scandir(path) as it:
        entries = sorted(it, key=_NAME)
    if memo is not None:
        memo[path] = entries
    return entries


def matches_glob(rel_path: str, pattern: str) -> bool:
    """gitignore matching (`dralint.inputs.ignore`): a pattern without '/' matches any path component."""
    return matches(rel_path, (pattern,))


@dataclass(frozen=True)
class FileRef:
    display: str  # as the user will see it in reports
    #: what to open; a walk keeps the listing's string (a `Path` per file was a quarter of a walk)
    path: str | Path
    explicit: bool = False  # named on the command line (lint it whatever its extension)
    key: str = ""  # the resolved path: the same file reached twice is linted once
    skipped: str = ""  # why it is not read (a link out of the roots): the DRA007 message


def _excluded(rel: str, excludes: Iterable[str], is_dir: bool = False) -> bool:
    return matches(rel, excludes, is_dir)


def input_roots(paths: Iterable[str], root: Path | None = None, follow_symlinks: bool = False) -> Roots:
    """The roots of a run: the working directory, the project root, and the directories and files
    named in ``paths`` (except one that is itself a link out of the others: it is reported instead).
    A named file is a root of its own, so that ``dralint fix /elsewhere/x.yaml`` may write it."""
    base = Roots.of([os.getcwd(), root or Path.cwd()], follow_symlinks)
    return base.with_dirs(p for p in paths if os.path.exists(p) and not base.leads_out(p))


def discover(
    paths: Iterable[str],
    excludes: Iterable[str] = (),
    root: Path | None = None,
    follow_symlinks: bool = False,
    respect_gitignore: bool = False,
    skip: Iterable[str] = (),
) -> tuple[list[FileRef], list[str]]:
    """Files to lint, plus messages about paths that do not exist.

    A symlink (named, met while walking, or a linked directory on the way) whose real path is
    outside the roots is returned with ``skipped`` set and is never opened, unless
    ``follow_symlinks``. A symlinked directory inside a walked one is not entered (its files are
    reached through the real directory); each directory is walked once, so a link loop ends.
    Order: a directory's files (sorted), then its subdirectories (sorted), depth first.
    ``excludes`` are gitignore patterns relative to ``root``; with ``respect_gitignore`` the
    ``.gitignore`` files of walked directories (and of their parents up to ``root``) apply too,
    to what the walk finds (a file named on the command line is linted whatever they say).
    ``skip``: resolved paths of directories a walk never enters (the run's cache).
    """
    paths = list(paths)
    root = root or Path.cwd()
    root_real = str(_resolve(root))
    roots = input_roots(paths, root, follow_symlinks)
    excludes = list(excludes)
    out: list[FileRef] = []
    missing: list[str] = []
    seen: set[str] = set()
    for given in paths:
        p = Path(given)
        if not p.exists() and not p.is_symlink():
            missing.append(given)
            continue
        is_dir = p.is_dir()
        if roots.leads_out(p):
            if not _excluded(p.as_posix(), excludes):
                _skip(out, seen, _display(p), p, _LINK_DIR if is_dir else _LINK_FILE)
            continue
        if is_dir:
            _walk_dir(p, root_real, roots, excludes, seen, out, respect_gitignore, frozenset(skip))
            continue
        real = str(_resolve(p))
        if _excluded(_rel_to(real, root_real, p.as_posix()), excludes):
            continue
        if real not in seen:
            seen.add(real)
            out.append(FileRef(_display(p), p, explicit=True, key=real))
    return out, missing


def _skip(out: list[FileRef], seen: set[str], display: str, path: Path, why: str) -> None:
    """A link out of the roots: a finding on the link's own name, and no key (so no cache lookup)."""
    mark = "link:" + os.path.abspath(path)
    if mark not in seen:
        seen.add(mark)
        out.append(FileRef(display, path, skipped=why))


def _walk_dir(top: Path, root_real: str, roots: Roots, excludes: list[str], seen: set[str],
              out: list[FileRef], respect_gitignore: bool = False, skip: frozenset[str] = frozenset()) -> None:
    """Walk one directory given on the command line (iteratively: deep trees do not recurse)."""
    top_real = str(_resolve(top))
    outer = GitignoreLayers.above(top_real, root_real) if respect_gitignore else GitignoreLayers()
    layers_of: dict[str, GitignoreLayers] = {top_real: outer}
    top_display = _display(top)
    walked: set[tuple[int, int]] = set()
    # (display prefix, path to open, resolved path) of directories still to list, in reverse order
    prefix = "" if top_display == "." else top_display if top_display.endswith("/") else top_display + "/"
    top_path = str(top)
    stack: list[tuple[str, str, str]] = [(prefix, top_path, top_real)]
    while stack:
        prefix, dir_path, dir_real = stack.pop()
        try:
            st = os.stat(dir_path)
            entries = listing(dir_path)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in walked:  # reached again through a link: a loop or a duplicate
            continue
        walked.add((st.st_dev, st.st_ino))
        layers = layers_of.pop(dir_real, outer)
        names = {e.name for e in entries}
        if dir_path != top_path and "pyvenv.cfg" in names:  # a virtualenv below the top: not ours to lint
            continue
        if respect_gitignore:
            layers = layers.enter(dir_real, ".gitignore" in names)
        subdirs: list[tuple[str, str, str]] = []
        for e in entries:
            name = e.name
            try:
                is_link = e.is_symlink()
                is_dir = e.is_dir()
            except OSError:
                is_link, is_dir = True, False
            if is_dir:
                if name in DEFAULT_EXCLUDES:
                    continue
                if is_link and roots.leads_out(e.path):
                    if not _excluded(prefix + name, excludes):
                        _skip(out, seen, prefix + printable(name), Path(e.path), _LINK_DIR)
                    continue
                if is_link and not roots.follow:
                    continue  # it points inside: its files are reached through the real directory
                real = str(_resolve(Path(e.path))) if is_link else f"{dir_real}/{name}"
                if real in skip:
                    continue
                # (no patterns, the usual case: no path is worked out to match against none)
                if excludes and _excluded(_rel_to(real, root_real, prefix + name), excludes, is_dir=True):
                    continue
                if layers.layers and layers.ignored(f"{dir_real}/{name}", is_dir=True):
                    continue
                layers_of[real] = layers
                subdirs.append((f"{prefix}{printable(name)}/", e.path, real))
                continue
            if not name.lower().endswith(EXTENSIONS):
                continue
            if is_link:
                if roots.leads_out(e.path):
                    if not _excluded(prefix + name, excludes):
                        _skip(out, seen, prefix + printable(name), Path(e.path), _LINK_FILE)
                    continue
                real = str(_resolve(Path(e.path)))
            else:
                real = f"{dir_real}/{name}"
            if excludes and _excluded(_rel_to(real, root_real, prefix + name), excludes):
                continue
            if layers.layers and layers.ignored(f"{dir_real}/{name}"):
                continue
            if real not in seen:
                seen.add(real)
                out.append(FileRef(prefix + printable(name), e.path, key=real))
        stack.extend(reversed(subdirs))


def _rel_to(real: str, root_real: str, fallback: str) -> str:
    """The path relative to the project root (for exclude globs), or ``fallback`` outside it."""
    if real.startswith(root_real.rstrip("/") + "/"):
        return real[len(root_real.rstrip("/")) + 1 :]
    if real == root_real:
        return "."
    return fallback


def _resolve(p: Path) -> Path:
    """``p.resolve()`` that survives symlink loops (they resolve to themselves)."""
    try:
        return p.resolve()
    except (OSError, RuntimeError):
        return p.absolute()


def _display(p: Path) -> str:
    s = printable(p.as_posix())
    return s[2:] if s.startswith("./") else s


def read_raw(ref: FileRef, limits: Limits) -> bytes | SourceFile:
    """The bytes of one file, or a `SourceFile` holding the DRA005 (or DRA007) problem when it is not read.

    A link out of the roots is not even looked at. Only regular files are opened (a FIFO would
    block, a device would never end), and never more than the size limit is read, even from a file
    that grows while we read it.
    """
    if ref.skipped:
        return _problem(ref, SKIPPED_LINK, ref.skipped)
    try:
        st = os.stat(ref.path)
    except OSError as e:
        return _unreadable(ref, f"cannot read file: {e.strerror or e}")
    if stat.S_ISDIR(st.st_mode):
        return _unreadable(ref, "is a directory, not a manifest file")
    if not stat.S_ISREG(st.st_mode):
        return _unreadable(ref, "not a regular file (FIFO, socket or device); skipped")
    if st.st_size > limits.max_file_bytes:
        return _too_big(ref, st.st_size, limits)
    try:
        with open(ref.path, "rb") as fh:
            # a buffer of the size just seen, not of the limit (16 MiB made and given back for each
            # file was a visible part of a check); a file that grew since is read on, to the limit
            raw = fh.read(st.st_size + 1)
            if len(raw) > st.st_size:
                raw += fh.read(limits.max_file_bytes + 1 - len(raw))
            return raw
    except OSError as e:
        return _unreadable(ref, f"cannot read file: {e.strerror or e}")


def read_file(ref: FileRef, limits: Limits) -> SourceFile:
    """Read and parse one file; unreadable or special files become a DRA005 finding."""
    raw = read_raw(ref, limits)
    if isinstance(raw, SourceFile):
        return raw
    return load_bytes(ref.display, raw, limits)


def _problem(ref: FileRef, code: str, message: str) -> SourceFile:
    sf = SourceFile(path=ref.display, raw=b"")
    sf.problems.append(LoadProblem(code, message, Span(1, 1, 1, 1)))
    return sf


def _unreadable(ref: FileRef, message: str) -> SourceFile:
    return _problem(ref, "DRA005", message)


def _too_big(ref: FileRef, size: int, limits: Limits) -> SourceFile:
    return _unreadable(
        ref,
        f"file is {size:,} bytes, over the {limits.max_file_bytes:,}-byte limit (raise it with --max-file-size)",
    )
