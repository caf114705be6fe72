"""gitignore-style path patterns: ``exclude``/``extend-exclude``, ``per-file-ignores`` and ``.gitignore``.

Patterns follow git's rules (through `pathspec`, which implements them), so what works in a
``.gitignore`` works here: ``vendor/`` (a directory anywhere), ``/build`` (only at the root of
the project), ``**/ignored/**``, ``*.tmpl.yaml``, ``!keep.yaml``. One addition, as in ruff:
``./ignored`` means ``/ignored`` (relative to the directory of the configuration file).

Paths are matched relative to that directory, with ``/`` separators; a directory is matched with
a trailing ``/`` so that ``ignored/`` excludes it (and the walk does not enter it).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

#: a .gitignore larger than this is not read (a hostile tree must not make the walk slow)
MAX_GITIGNORE_BYTES = 256 * 1024


def _normalise(pattern: str) -> str:
    pattern = pattern.strip().replace("\\", "/")
    if pattern.startswith("!./"):
        return "!/" + pattern[3:]
    if pattern.startswith("./"):
        return "/" + pattern[2:].lstrip("/")
    return pattern


@lru_cache(maxsize=512)
def compile_patterns(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """One spec for a list of patterns (compiled once per distinct list)."""
    import pathspec  # imported when there are patterns: most runs have none

    return pathspec.GitIgnoreSpec.from_lines([_normalise(p) for p in patterns if p.strip()])


def _clean(rel: str) -> str:
    # a file name that is not UTF-8 arrives with surrogate escapes, which the matcher (RE2 when
    # installed) cannot encode: its undecodable bytes become U+FFFD, which no pattern in a UTF-8
    # config or .gitignore can name anyway
    rel = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace").replace("\\", "/")
    while rel.startswith("./"):
        rel = rel[2:]
    return rel.lstrip("/")


def matches(rel: str, patterns: Iterable[str], is_dir: bool = False) -> bool:
    """Whether the path ``rel`` (relative to the patterns' base) is matched by ``patterns``."""
    patterns = tuple(patterns)
    if not patterns:  # the usual case, asked for every file and directory of a walk
        return False
    spec = compile_patterns(patterns)
    path = _clean(rel)
    if not path or path == ".":
        return False
    return bool(spec.match_file(path + "/" if is_dir and not path.endswith("/") else path))


def read_gitignore(directory: str) -> tuple[str, ...]:
    """The patterns of ``directory/.gitignore``; nothing when it is absent, not a regular file (a
    symlink is not followed: it could point out of the tree), too large, or not text."""
    path = os.path.join(directory, ".gitignore")
    try:
        st = os.lstat(path)
    except OSError:
        return ()
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_GITIGNORE_BYTES:
        return ()
    try:
        with open(path, "rb") as fh:
            text = fh.read(MAX_GITIGNORE_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return ()
    return tuple(line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))


class GitignoreLayers:
    """The ``.gitignore`` files that apply in one directory: (real directory + ``/``, patterns),
    outermost first.

    A path is ignored when a layer matches it relative to that layer's directory. Negations work
    within one file; a ``!pattern`` in a deeper file does not re-include what a shallower one ignored
    (a simplification of git's rule, said in the README).
    """

    def __init__(self, layers: tuple[tuple[str, tuple[str, ...]], ...] = ()) -> None:
        self.layers = layers

    @classmethod
    def above(cls, top_real: str, root_real: str) -> GitignoreLayers:
        """The layers of ``root_real`` and each directory below it down to ``top_real``'s parent (the
        ones that apply to a walk starting at ``top_real``); none when ``top_real`` is outside the root."""
        layers = cls()
        root = root_real.rstrip("/")
        if not top_real.startswith(root + "/"):
            return layers  # the root itself (walked as the top) or outside it: nothing above applies
        d = root or "/"
        layers = layers.enter(d)
        for part in top_real[len(root) + 1:].split("/")[:-1]:
            d = os.path.join(d, part)
            layers = layers.enter(d)
        return layers

    def enter(self, real_dir: str, listed: bool = True) -> GitignoreLayers:
        """The layers that apply inside ``real_dir``; ``listed``: False when the directory's listing
        has no ``.gitignore`` (a walk knows it, and saves a system call per directory)."""
        own = read_gitignore(real_dir) if listed else ()
        return GitignoreLayers((*self.layers, (real_dir.rstrip("/") + "/", own))) if own else self

    def ignored(self, real: str, is_dir: bool = False) -> bool:
        for base, patterns in self.layers:
            if real.startswith(base) and matches(real[len(base):], patterns, is_dir):
                return True
        return False
