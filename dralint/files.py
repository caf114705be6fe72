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
        return p.resolve().relative_to(root.resolve()).as_posix()
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
    """Files to lint, plus messages about paths that do not exist."""
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
            top = p.resolve()
            for dirpath, dirnames, filenames in os.walk(p, followlinks=False):
                d = Path(dirpath)
                dirnames[:] = sorted(
                    n for n in dirnames
                    if n not in DEFAULT_EXCLUDES
                    and not (d / n / "pyvenv.cfg").exists()
                    and not _excluded(_rel(d / n, root), excludes)
                    and (follow_symlinks or not (d / n).is_symlink() or _inside((d / n), top))
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
                    key = str(f.resolve())
                    if key not in seen:
                        seen.add(key)
                        out.append(FileRef(_display(f), f))
        else:
            rel = _rel(p, root)
            if _excluded(rel, excludes):
                continue
            key = str(p.resolve())
            if key not in seen:
                seen.add(key)
                out.append(FileRef(_display(p), p, explicit=True))
    return out, missing


def _display(p: Path) -> str:
    s = p.as_posix()
    return s[2:] if s.startswith("./") else s


def _inside(p: Path, top: Path) -> bool:
    try:
        p.resolve().relative_to(top)
        return True
    except (ValueError, OSError, RuntimeError):
        return False


def read_file(ref: FileRef, limits: Limits) -> SourceFile:
    """Read and parse one file; unreadable or special files become a DRA005 finding."""
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
            raw = fh.read(limits.max_file_bytes + 1)
    except OSError as e:
        return _unreadable(ref, f"cannot read file: {e.strerror or e}")
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
