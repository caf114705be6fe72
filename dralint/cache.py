"""On-disk cache of per-file index summaries, keyed by file content.

Cross-file rules need every file of the repository in the index, but a pre-commit hook or an
editor lints one changed file. Parsing the other 2,000 files again on every run would cost seconds,
so each file's *summary* (what the index needs: object identities, plus the full data of the few
kinds other objects refer to, see `dralint.engine.summarize`) is stored here after its first parse.

- The key is a hash of the file's bytes, salted with everything else that shapes a summary: the
  dralint version and a fingerprint of its code and data files, the input limits, and whether the
  file is read as JSON. Editing a file, upgrading dralint or changing a limit is a miss, never a
  stale hit. Paths are not part of the key: a renamed file is still a hit.
- Entries are JSON, never pickle: the cache directory lives inside the repository and a checked-in
  (hostile) cache must not be able to run code. A corrupt entry is a miss.
- Writes go to a temporary file and are renamed into place, so concurrent runs (pre-commit runs
  hooks in parallel) never see half an entry. Any I/O error turns the cache off for the run; the
  result is the same, only slower.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from functools import cache
from pathlib import Path
from typing import Any

from dralint import __version__

#: bump when the summary layout changes
FORMAT = 1

_GITIGNORE = "# created by dralint: cached index summaries, safe to delete\n*\n"
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# dralint cache (see https://bford.info/cachedir/)\n"


@cache
def code_fingerprint() -> str:
    """dralint's version plus the size and mtime of its code and data, so a development checkout
    (where the version string does not move) never reuses summaries made by older code."""
    from dralint.catalog import rules_dir, schemas_dir

    h = hashlib.blake2b(f"{__version__}/{FORMAT}".encode(), digest_size=16)
    roots = [Path(__file__).resolve().parent, rules_dir(), schemas_dir()]
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".pyc", ".pyo")):
                    continue
                try:
                    st = os.stat(os.path.join(dirpath, name))
                except OSError:
                    continue
                h.update(f"{dirpath}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


class SummaryCache:
    """A directory of JSON summaries: ``<dir>/v<FORMAT>/<salt>/<key[:2]>/<key>.json``."""

    def __init__(self, directory: Path, salt: str) -> None:
        self.root = directory
        self.salt = hashlib.blake2b(f"{code_fingerprint()}|{salt}".encode(), digest_size=8).hexdigest()
        self.dir = directory / f"v{FORMAT}" / self.salt
        self._dir = str(self.dir)
        self._tmp = f".tmp-{os.getpid()}-"
        self._n = 0
        self.enabled = True
        self.hits = 0
        self.misses = 0
        self.writes = 0

    # -- keys ---------------------------------------------------------------------------------
    def key(self, raw: bytes, is_json: bool) -> str:
        h = hashlib.blake2b(raw, digest_size=20, person=b"dralint-json" if is_json else b"dralint-yaml")
        return h.hexdigest()

    def _path(self, key: str) -> str:
        return os.path.join(self._dir, key[:2], key + ".json")

    # -- read ---------------------------------------------------------------------------------
    def get(self, key: str) -> Any | None:
        """The stored summary (plain JSON data), or None on a miss or an unreadable entry."""
        if not self.enabled:
            return None
        try:
            with open(self._path(key), "rb") as fh:
                data = json.loads(fh.read())
        except (OSError, ValueError, RecursionError):
            self.misses += 1
            return None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            self.misses += 1
            return None
        self.hits += 1
        return data

    def has(self, key: str) -> bool:
        return self.enabled and os.path.exists(self._path(key))

    # -- write --------------------------------------------------------------------------------
    def prepare(self) -> bool:
        """Create the directory (with a .gitignore and CACHEDIR.TAG) and drop other salts' entries."""
        if not self.enabled:
            return False
        try:
            first = not self.root.exists()
            self.dir.mkdir(parents=True, exist_ok=True)
            if first or not (self.root / ".gitignore").exists():
                (self.root / ".gitignore").write_text(_GITIGNORE, encoding="utf-8")
                (self.root / "CACHEDIR.TAG").write_text(_TAG, encoding="utf-8")
            version_dir = self.dir.parent
            for other in version_dir.iterdir():
                if other.name != self.salt and other.is_dir():
                    shutil.rmtree(other, ignore_errors=True)  # made by another dralint build
        except OSError:
            self.enabled = False
        return self.enabled

    def put(self, key: str, text: bytes) -> None:
        """Store one summary (already serialised JSON with ``"format"``)."""
        if not self.enabled:
            return
        target = self._path(key)
        self._n += 1
        tmp = os.path.join(os.path.dirname(target), f"{self._tmp}{self._n}")
        try:
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileNotFoundError:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(text)
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            self.writes += 1
        except OSError:
            self.enabled = False  # read-only checkout, full disk: lint on without the cache


def default_cache_dir(root: Path) -> Path:
    return root / ".dralint_cache"
