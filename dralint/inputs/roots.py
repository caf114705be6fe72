"""Where a run may read and write: its roots, and the symlinks that lead out of them.

A pull request can commit a symlink (``a.yaml -> ~/.aws/credentials``, ``.dralint.yaml -> ...``).
Linting that checkout must neither print the file behind it (a parse error quoting its first line
ends up in public CI logs) nor rewrite it. The roots are real directories: the working directory,
the project root (where the configuration lives) and the directories named on the command line.
A path *leads out* when it is reached through a symlink and its real path is in none of them; a path
that is outside without any link on the way was named by the user, who may read what they like.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass


def printable(name: str) -> str:
    """A file name as reports can print it: bytes that are not UTF-8 (kept by the OS as surrogate
    escapes) are shown as ``\\xNN``, so no report writer fails on a hostile file name."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


@dataclass(frozen=True)
class Roots:
    dirs: tuple[str, ...]  # real paths (of directories, or of single files named by the user)
    #: ``--follow-symlinks``: the user vouches for every link (reads only; writes never leave the roots)
    follow: bool = False

    @classmethod
    def of(cls, dirs: Iterable[str | os.PathLike[str]], follow: bool = False) -> Roots:
        real: list[str] = []
        for d in dirs:
            r = os.path.realpath(d)
            if r not in real:
                real.append(r)
        return cls(tuple(real), follow)

    def with_dirs(self, dirs: Iterable[str | os.PathLike[str]]) -> Roots:
        return Roots.of([*self.dirs, *dirs], self.follow)

    def holds(self, real: str) -> bool:
        """Whether a real (resolved) path is one of the roots or below one."""
        return any(real == d or real.startswith(d.rstrip("/") + "/") for d in self.dirs)

    def leads_out(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` is reached through a symlink (its own name, or a linked directory on the
        way) and really lies outside every root. Always False with ``follow``."""
        if self.follow:
            return False
        p = os.fspath(path)
        if self.holds(os.path.realpath(p)):
            return False
        # outside: through a link when the name itself is one, or when the path as written is inside
        return os.path.islink(p) or self.holds(os.path.abspath(p))

    def refusal(self, path: str | os.PathLike[str], what: str, hint: bool = True) -> str | None:
        """The error for a non-manifest input (configuration, values, inventory) that leads out, or
        None; ``hint`` where ``--follow-symlinks`` would allow it."""
        if not self.leads_out(path):
            return None
        allow = " (pass --follow-symlinks to allow it)" if hint else ""
        return (f"{printable(os.fspath(path))}: the {what} is a symbolic link that points outside the project; "
                f"it was not read{allow}")


def project_roots(project_root: str | os.PathLike[str] | None = None, follow: bool = False) -> Roots:
    """The working directory and the project root: the roots of inputs that are not manifests."""
    return Roots.of([os.getcwd(), *([project_root] if project_root is not None else [])], follow)
