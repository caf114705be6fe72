"""On-disk cache of per-file index summaries, keyed by file content.

Cross-file rules need every file of the repository in the index, but a pre-commit hook or an
editor lints one changed file. Parsing the other 2,000 files again on every run would cost seconds,
so each file's *summary* (what the index needs: object identities, plus the full data of the few
kinds other objects refer to, see `dralint.engine.summary.summarize`) is stored here after its first parse.

- The key is a hash of the file's bytes, salted with everything else that shapes a summary: the
  dralint version and a fingerprint of its code and data files, the input limits, and whether the
  file is read as JSON. Editing a file, upgrading dralint or changing a limit is a miss, never a
  stale hit. Paths are not part of the key: a renamed file is still a hit.
- Entries are JSON text, never pickle: the cache directory lives inside the repository and a
  checked-in (hostile) cache must not be able to run code. A corrupt entry is a miss.
- Files whose size, mtime and inode match the previous run are not even read: ``paths.json``
  remembers their key (files changed in the last two seconds are not remembered, as their mtime
  could still move within one clock tick).
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
import time
from functools import cache
from pathlib import Path

from dralint import __version__

#: bump when the summary layout changes
FORMAT = 2

_GITIGNORE = "# created by dralint: cached index summaries, safe to delete\n*\n"
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# dralint cache (see https://bford.info/cachedir/)\n"


@cache
def code_fingerprint() -> str:
    """dralint's version plus the size and mtime of its code and data, so a development checkout
    (where the version string does not move) never reuses summaries made by older code."""
    from dralint.knowledge.catalog import rules_dir, schemas_dir

    h = hashlib.blake2b(f"{__version__}/{FORMAT}".encode(), digest_size=16)
    # the whole dralint package (this module lives in dralint/engine/), then the data files
    roots = [Path(__file__).resolve().parent.parent, rules_dir(), schemas_dir()]
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
    """A directory of summaries: ``<dir>/v<FORMAT>/<salt>/<key[:2]>/<key>.json``."""

    def __init__(self, directory: Path, salt: str) -> None:
        self.root = directory
        self.salt = hashlib.blake2b(f"{code_fingerprint()}|{salt}".encode(), digest_size=8).hexdigest()
        self.dir = directory / f"v{FORMAT}" / self.salt
        self._dir = str(self.dir)
        self._tmp = f".tmp-{os.getpid()}-"
        self._n = 0
        self._paths: dict[str, object] = {}
        self._paths_dirty = False
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
    def get(self, key: str) -> bytes | None:
        """The stored entry, or None on a miss (the caller validates what it reads)."""
        if not self.enabled:
            return None
        try:
            with open(self._path(key), "rb") as fh:
                data = fh.read()
        except OSError:
            self.misses += 1
            return None
        self.hits += 1
        return data

    # -- the stat index: skip reading files that did not change -----------------------------
    def _paths_file(self) -> str:
        return os.path.join(self._dir, "paths.json")

    def load_paths(self) -> None:
        """Read the remembered (size, mtime, inode) -> key of each path (a miss when unreadable)."""
        try:
            with open(self._paths_file(), "rb") as fh:
                data = json.loads(fh.read())
            self._paths = data if isinstance(data, dict) else {}
        except (OSError, ValueError, RecursionError):
            self._paths = {}

    def known_key(self, real_path: str, st: os.stat_result) -> str | None:
        """The content key of a file whose size, mtime and inode match what was recorded for it."""
        rec = self._paths.get(real_path)
        if (
            isinstance(rec, list) and len(rec) == 4 and rec[0] == st.st_size and rec[1] == st.st_mtime_ns
            and rec[2] == st.st_ino and isinstance(rec[3], str)
        ):
            return rec[3]
        return None

    def remember(self, real_path: str, st: os.stat_result, key: str) -> None:
        # a file modified in the last two seconds could change again within the same mtime tick
        # (coarse filesystem clocks): record it next time, as git does with "racy" entries
        if time.time_ns() - st.st_mtime_ns < 2_000_000_000:
            return
        rec = [st.st_size, st.st_mtime_ns, st.st_ino, key]
        if self._paths.get(real_path) != rec:
            self._paths[real_path] = rec
            self._paths_dirty = True

    def save_paths(self) -> None:
        if not self.enabled or not self._paths_dirty:
            return
        self._n += 1
        tmp = os.path.join(self._dir, f"{self._tmp}{self._n}")
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(self._paths, fh, separators=(",", ":"))
            os.replace(tmp, self._paths_file())
            self._paths_dirty = False
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

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
        """Store one summary (`dralint.engine.summary.FileSummary.to_bytes`)."""
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
