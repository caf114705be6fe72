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

A checked-in ``.dralint_cache/`` is attacker-controlled (SECURITY.md, promise 3), so:

- the cache directory must be inside the project or the user cache directory (`cache_location`);
- no part of the path from the cache directory down is ever followed as a symlink: directories are
  checked with ``lstat``, files are opened with ``O_NOFOLLOW`` and created with ``O_EXCL``. A
  symlink or a non-directory where a directory should be turns the cache off for the run;
- only real directories that carry `MARKER` (written into every salt directory this code creates)
  are ever deleted, and only with a ``shutil.rmtree`` that does not follow links inside them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import time
from functools import cache
from pathlib import Path

from dralint import __version__
from dralint.knowledge.catalog import read_regular, user_cache_dir

#: bump when the summary layout changes (3: entries are named by what they hold, `SUFFIX`)
FORMAT = 3
#: file name ending per kind of entry: a summary is a JSON line followed by JSON texts, which is not
#: one JSON document, so it must not be named like one (tools that check every ``*.json`` choke on it)
SUFFIX = {"summary": ".summary", "results": ".json"}

_GITIGNORE = b"# created by dralint: cached index summaries, safe to delete\n*\n"
_TAG = b"Signature: 8a477f597d28d172789f06886806bc55\n# dralint cache (see https://bford.info/cachedir/)\n"
#: in every salt directory dralint made; a directory without it is never deleted
MARKER = ".dralint-salt-dir"
_MARKER_TEXT = b"made by dralint; another dralint build may delete this directory\n"

#: without O_NOFOLLOW a symlinked entry cannot be refused safely, so there is no cache at all
_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)


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


def cache_location(directory: Path, project: Path) -> tuple[Path, str | None]:
    """Where a cache asked for at ``directory`` really is, and why it may not be used (None: it may).

    The parents are resolved, so the containment check sees the real place; the last part is kept
    as it is, so that a symlink there is seen (and refused) by `SummaryCache`. Allowed: strictly
    below the project root (never the root itself, which would get the cache's ``.gitignore``), or
    the user cache directory and below.
    """
    path = os.path.abspath(directory)
    real = Path(os.path.realpath(os.path.dirname(path))) / os.path.basename(path)
    root = Path(os.path.realpath(project))
    user = user_cache_dir()
    user = Path(os.path.realpath(user.parent)) / user.name
    if (real != root and real.is_relative_to(root)) or real.is_relative_to(user):
        return real, None
    return real, f"{real} is neither inside the project ({root}) nor inside the user cache directory ({user})"


def default_cache_dir(root: Path) -> Path:
    return root / ".dralint_cache"


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _create(path: str, data: bytes) -> None:
    """Write a new file; fails (FileExistsError) if anything, a dangling symlink included, is there."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


class SummaryCache:
    """A directory of entries: ``<dir>/v<FORMAT>/<salt>/<key[:2]>/<key><SUFFIX[kind]>``.

    ``project`` is the project root: the cache must live below it or in the user cache directory.
    """

    def __init__(self, directory: Path, salt: str, project: Path) -> None:
        self.root, self.problem = cache_location(directory, project)
        self.salt = hashlib.blake2b(f"{code_fingerprint()}|{salt}".encode(), digest_size=8).hexdigest()
        self.dir = self.root / f"v{FORMAT}" / self.salt
        self._dir = str(self.dir)
        #: the directories from the cache root down to a salt's entries, each checked with lstat
        self._chain = [str(self.root), str(self.dir.parent), self._dir]
        self._real_dirs: set[str] = set()  # checked: a directory, not a symlink
        self._n = 0
        self._paths: dict[str, object] = {}
        self._paths_dirty = False
        self.enabled = self.problem is None
        self.hits = 0
        self.misses = 0
        self.writes = 0
        if not _NOFOLLOW:
            self._refuse("this platform cannot open files without following symlinks")
        self._dirs_ok(self._chain)  # a committed `v2 -> $HOME` turns the cache off before anything

    def _refuse(self, why: str) -> None:
        self.enabled = False
        self.problem = self.problem or why

    def _dirs_ok(self, chain: list[str]) -> bool:
        """Whether every directory of ``chain`` exists and is a real directory. A missing one is
        only a miss; a symlink or anything else than a directory turns the cache off."""
        for path in chain:
            if not self.enabled:
                return False
            if path in self._real_dirs:
                continue
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                return False
            except OSError as e:
                self._refuse(f"{path}: {e.strerror}")
                return False
            if not stat.S_ISDIR(st.st_mode):
                self._refuse(f"{path} is {'a symlink' if stat.S_ISLNK(st.st_mode) else 'not a directory'}")
                return False
            self._real_dirs.add(path)
        return True

    def _mkdir(self, path: str) -> bool:
        """Make a directory of the chain; True when this call created it. Raises OSError (which
        turns the cache off) when something else than a real directory is there."""
        try:
            os.mkdir(path)  # never follows a symlink in the last part: that is EEXIST
            self._real_dirs.add(path)
            return True
        except FileExistsError:
            if self._dirs_ok([path]):
                return False
            raise NotADirectoryError(path) from None

    def _replace(self, target: str, data: bytes) -> None:
        """Write ``target`` atomically: a new temporary file next to it, renamed over it (a rename
        replaces a symlink at ``target`` itself, never the file it points to)."""
        self._n += 1
        # the pid is taken here, not at construction: forked workers share the object
        tmp = os.path.join(os.path.dirname(target), f".tmp-{os.getpid()}-{self._n}")
        try:
            _create(tmp, data)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    # -- keys ---------------------------------------------------------------------------------
    def key(self, raw: bytes, is_json: bool) -> str:
        h = hashlib.blake2b(raw, digest_size=20, person=b"dralint-json" if is_json else b"dralint-yaml")
        return h.hexdigest()

    def _path(self, key: str, kind: str = "summary") -> str:
        return os.path.join(self._dir, key[:2], key + SUFFIX[kind])

    # -- read ---------------------------------------------------------------------------------
    def get(self, key: str, kind: str = "summary") -> bytes | None:
        """The stored entry, or None on a miss (the caller validates what it reads)."""
        if not self.enabled:
            return None
        path = self._path(key, kind)
        data = read_regular(path) if self._dirs_ok([*self._chain, os.path.dirname(path)]) else None
        if data is None:
            self.misses += 1
            return None
        self.hits += 1
        return data

    # -- the stat index: skip reading files that did not change -----------------------------
    def _paths_file(self) -> str:
        return os.path.join(self._dir, "paths.json")

    def load_paths(self) -> None:
        """Read the remembered (size, mtime, inode) -> key of each path (a miss when unreadable)."""
        self._paths = {}
        raw = read_regular(self._paths_file()) if self._dirs_ok(self._chain) else None
        if raw is None:
            return
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            return
        self._paths = data if isinstance(data, dict) else {}

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
        if not self.enabled or not self._paths_dirty or not self._dirs_ok(self._chain):
            return
        with contextlib.suppress(OSError):
            self._replace(self._paths_file(), json.dumps(self._paths, separators=(",", ":")).encode())
            self._paths_dirty = False

    # -- the context pack (`dralint.engine.pack`): every context file's summary in one entry ---
    def _pack_file(self) -> str:
        return os.path.join(self._dir, "context.pack")

    def get_pack(self) -> bytes | None:
        """The stored pack's bytes (the caller validates them), or None."""
        if not self._dirs_ok(self._chain):
            return None
        return read_regular(self._pack_file())

    def put_pack(self, data: bytes) -> None:
        """Replace the pack (atomically, as every entry): only in a directory `prepare` made usable."""
        if not self.enabled or not self._dirs_ok(self._chain):
            return
        try:
            self._replace(self._pack_file(), data)
            self.writes += 1
        except OSError as e:
            self._refuse(f"cannot write {self._pack_file()}: {e}")

    def has(self, key: str) -> bool:
        path = self._path(key)
        return self.enabled and self._dirs_ok([*self._chain, os.path.dirname(path)]) and _is_regular(path)

    # -- write --------------------------------------------------------------------------------
    def prepare(self) -> bool:
        """Create the directory (with a .gitignore and CACHEDIR.TAG) and drop other salts' entries."""
        if not self.enabled:
            return False
        root, version_dir, salt_dir = self._chain
        try:
            # the parents are outside the cache (already resolved by `cache_location`)
            os.makedirs(os.path.dirname(root), exist_ok=True)
            if self._mkdir(root):  # only a directory made here gets them: never an existing one's
                _create(os.path.join(root, ".gitignore"), _GITIGNORE)
                _create(os.path.join(root, "CACHEDIR.TAG"), _TAG)
            self._mkdir(version_dir)
            if self._mkdir(salt_dir):
                _create(os.path.join(salt_dir, MARKER), _MARKER_TEXT)
            self._drop_other_salts(version_dir)
            self._drop_other_versions()
        except OSError as e:
            self._refuse(f"cannot prepare {self.root}: {e}")
        return self.enabled

    def _drop_other_versions(self) -> None:
        """Entries of older layouts (``v2/``...): their marked salt directories go, then the version
        directory if that left it empty."""
        with os.scandir(self.root) as it:
            old = [e.path for e in it if e.name != f"v{FORMAT}" and e.name[:1] == "v" and e.name[1:].isdigit()
                   and e.is_dir(follow_symlinks=False)]
        for version_dir in old:
            self._drop_other_salts(version_dir)
            with contextlib.suppress(OSError):
                os.rmdir(version_dir)  # only when empty

    def _drop_other_salts(self, version_dir: str) -> None:
        """Delete the entries of other dralint builds: real directories with dralint's marker only."""
        if not shutil.rmtree.avoids_symlink_attacks:
            return  # this platform's rmtree could follow a link planted inside: keep them
        with os.scandir(version_dir) as it:
            stale = [e.path for e in it if e.name != self.salt and e.is_dir(follow_symlinks=False)]
        for path in stale:
            if _is_regular(os.path.join(path, MARKER)):
                shutil.rmtree(path, ignore_errors=True)

    def put(self, key: str, text: bytes, kind: str = "summary") -> None:
        """Store one summary (`dralint.engine.summary.FileSummary.to_bytes`)."""
        if not self.enabled or not self._dirs_ok(self._chain):
            return  # not prepared (or no longer usable): nothing is written
        target = self._path(key, kind)
        shard = os.path.dirname(target)
        try:
            if not self._dirs_ok([shard]):
                if not self.enabled:
                    return
                self._mkdir(shard)
            self._replace(target, text)
            self.writes += 1
        except OSError as e:
            self._refuse(f"cannot write {target}: {e}")  # read-only checkout, full disk: lint on without
