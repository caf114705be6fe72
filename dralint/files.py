"""Finding and reading the files to lint.

Directories are walked recursively for ``.yaml``/``.yml``/``.json`` files, skipping VCS folders,
virtualenvs and excluded globs. Symlinks are followed only while they stay inside the given roots,
and only regular files are read (a FIFO would block; a device would never end). Read errors become
findings, not exceptions.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dralint.config import DEFAULT_EXCLUDES, matches_glob
from dralint.load import Limits, LoadProblem, SourceFile, load_bytes
from dralint.model import Span

EXTENSIONS = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class FileRef:
    display: str  # as the user will see it in reports
    path: Path  # what to open
    explicit: bool = False  # named on the command line (lint it whatever its extension)


def _rel(p: Path, root: Path) -> str:
    try:
        return _resolve(p).relative_to(_resolve(root)).as_posix()
    except ValueError:
        return p.as_posix()


def _excluded(rel: str, excludes: Iterable[str]) -> bool:
    return any(matches_glob(rel, pat) for pat in excludes)


def discover(
    paths: Iterable[str],
    excludes: Iterable[str] = (),
    root: Path | None = None,
    follow_symlinks: bool = False,
) -> tuple[list[FileRef], list[str]]:
    """Files to lint, plus messages about paths that do not exist.

    Inside a directory, a symlink (to a file or a directory) is used only when it resolves inside
    that directory, unless ``follow_symlinks``; symlinked directories are then walked once each, so a
    link loop ends. Paths named explicitly are always used: the user asked for them.
    """
    root = root or Path.cwd()
    excludes = list(excludes)
    out: list[FileRef] = []
    missing: list[str] = []
    seen: set[str] = set()
    for given in paths:
        p = Path(given)
        if not p.exists() and not p.is_symlink():
            missing.append(given)
            continue
        if p.is_dir():
            top = _resolve(p)
            walked: set[tuple[int, int]] = set()
            for dirpath, dirnames, filenames in os.walk(p, followlinks=follow_symlinks):
                d = Path(dirpath)
                try:
                    st = os.stat(d)
                except OSError:
                    dirnames[:] = []
                    continue
                if (st.st_dev, st.st_ino) in walked:  # reached again through a link: a loop or a duplicate
                    dirnames[:] = []
                    continue
                walked.add((st.st_dev, st.st_ino))
                dirnames[:] = sorted(
                    n for n in dirnames
                    if n not in DEFAULT_EXCLUDES
                    and not (d / n / "pyvenv.cfg").exists()
                    and not _excluded(_rel(d / n, root), excludes)
                    and (not (d / n).is_symlink() or follow_symlinks or _inside(d / n, top))
                )
                for name in sorted(filenames):
                    if not name.lower().endswith(EXTENSIONS):
                        continue
                    f = d / name
                    if f.is_symlink() and not follow_symlinks and not _inside(f, top):
                        continue
                    rel = _rel(f, root)
                    if _excluded(rel, excludes):
                        continue
                    key = str(_resolve(f))
                    if key not in seen:
                        seen.add(key)
                        out.append(FileRef(_display(f), f))
        else:
            rel = _rel(p, root)
            if _excluded(rel, excludes):
                continue
            key = str(_resolve(p))
            if key not in seen:
                seen.add(key)
                out.append(FileRef(_display(p), p, explicit=True))
    return out, missing


def _resolve(p: Path) -> Path:
    """``p.resolve()`` that survives symlink loops (they resolve to themselves)."""
    try:
        return p.resolve()
    except (OSError, RuntimeError):
        return p.absolute()


def _display(p: Path) -> str:
    s = p.as_posix()
    return s[2:] if s.startswith("./") else s


def _inside(p: Path, top: Path) -> bool:
    try:
        target = p.resolve()
    except RuntimeError:  # a link loop leads nowhere (so not outside); reading it reports the loop
        return True
    except OSError:
        return False
    return target == top or top in target.parents


def read_raw(ref: FileRef, limits: Limits) -> bytes | SourceFile:
    """The bytes of one file, or a `SourceFile` holding the DRA005 problem when it cannot be read.

    Only regular files are opened (a FIFO would block, a device would never end), and never more
    than the size limit is read, even from a file that grows while we read it.
    """
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
            return fh.read(limits.max_file_bytes + 1)
    except OSError as e:
        return _unreadable(ref, f"cannot read file: {e.strerror or e}")


def read_file(ref: FileRef, limits: Limits) -> SourceFile:
    """Read and parse one file; unreadable or special files become a DRA005 finding."""
    raw = read_raw(ref, limits)
    if isinstance(raw, SourceFile):
        return raw
    return load_bytes(ref.display, raw, limits)


def _unreadable(ref: FileRef, message: str) -> SourceFile:
    sf = SourceFile(path=ref.display, raw=b"")
    sf.problems.append(LoadProblem("DRA005", message, Span(1, 1, 1, 1)))
    return sf


def _too_big(ref: FileRef, size: int, limits: Limits) -> SourceFile:
    return _unreadable(
        ref,
        f"file is {size:,} bytes, over the {limits.max_file_bytes:,}-byte limit (raise it with --max-file-size)",
    )
