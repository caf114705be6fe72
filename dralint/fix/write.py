"""Writing fixed files and reports: atomically (a temporary file in the same directory, the original's
mode, then ``os.replace``), only real files (never through a symlink), or as a unified diff."""

from __future__ import annotations

import contextlib
import os
import stat

from dralint.inputs.roots import Roots


class WriteRefused(OSError):
    """The writer will not replace this path: a symlink, not a regular file, or outside the roots."""


def atomic_write(path: str | os.PathLike[str], data: bytes, roots: Roots | None = None) -> None:
    """Replace a real file's content atomically, keeping its mode (or create it).

    Only a real file is written: ``path`` itself must not be a symlink (nor a directory, FIFO or
    device), and with ``roots`` its real path must be inside them; otherwise `WriteRefused` and
    nothing is written. Callers that reach a file through a link inside the roots pass its real
    path. The temporary file is created next to the target with O_EXCL|O_NOFOLLOW, every step
    works on one open descriptor of the real parent directory, and the target is checked again
    with lstat right before the rename, so a link swapped in meanwhile is refused, not followed.
    """
    parent, name = os.path.split(os.path.abspath(path))
    real_parent = os.path.realpath(parent)
    if roots is not None and not roots.holds(os.path.join(real_parent, name)):
        raise WriteRefused("its real path is outside the linted directories and the project; not written")
    dfd: int | None = None
    if os.open in os.supports_dir_fd:
        dfd = os.open(real_parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))

    def here(n: str) -> str:  # a name in that directory: relative to its descriptor, or a full path without one
        return n if dfd is not None else os.path.join(real_parent, n)

    try:
        mode = _replaceable_mode(here(name), dfd)
        tmp = f".{name}.{os.urandom(6).hex()}.dralint-tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        # a new file gets the usual umask-based mode; an existing one its own mode, never wider meanwhile
        fd = os.open(here(tmp), flags, 0o600 if mode is not None else 0o666, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                if mode is not None:
                    os.chmod(fh.fileno(), mode)
                os.fsync(fh.fileno())
            if _replaceable_mode(here(name), dfd) != mode:  # replaced by a link (or created) meanwhile
                raise WriteRefused("the file changed while it was being written; not written")
            os.replace(here(tmp), here(name), src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(here(tmp), dir_fd=dfd)
            raise
    finally:
        if dfd is not None:
            os.close(dfd)


def write_report_file(path: str, text: str) -> None:
    """Write a report (``--output``) the way fixes are written: atomically and never through a symlink.

    The path comes from the command line, but the file at it may have been committed by a pull request
    (``report.sarif -> ~/.bashrc``), so a link there is refused, not followed. Any failure is a
    `ReportWriteError` whose message names the path; the CLI turns it into a usage error (exit 2).
    """
    try:
        atomic_write(path, text.encode("utf-8"))
    except OSError as e:
        why = str(e) if isinstance(e, WriteRefused) else (e.strerror or type(e).__name__)
        raise ReportWriteError(f"cannot write the report to {path}: {why}") from None


class ReportWriteError(Exception):
    """The ``--output`` file could not be written (message ready for the user)."""


def _replaceable_mode(name: str, dir_fd: int | None) -> int | None:
    """The permission bits of the regular file to replace, None when there is none yet."""
    try:
        st = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise WriteRefused("it is a symbolic link; not written")
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused("it is not a regular file; not written")
    return stat.S_IMODE(st.st_mode)


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    import difflib

    a = before.decode("utf-8", "replace").splitlines(keepends=True)
    b = after.decode("utf-8", "replace").splitlines(keepends=True)
    lines = list(difflib.unified_diff(a, b, fromfile=f"a/{path}", tofile=f"b/{path}"))
    return "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines)
