"""Rule metadata and the packaged data files (``rules/`` and ``schemas/``).

In a checkout they live at the repository root; in an installed wheel they are copied into
``dralint/_data/``. `data_root()` finds whichever is present, so nothing reads files relative to
the working directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from dralint import __version__
from dralint.model import Applicability, Severity

#: the ``dralint`` package directory (this module lives in ``dralint/knowledge/``)
_PKG = Path(__file__).resolve().parent.parent


@cache
def data_root() -> Path:
    packaged = _PKG / "_data"
    if (packaged / "rules").is_dir():
        return packaged
    return _PKG.parent


def rules_dir() -> Path:
    return data_root() / "rules"


def schemas_dir() -> Path:
    return data_root() / "schemas"


_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/dralint``, else ``~/.cache/dralint`` (a relative XDG_CACHE_HOME is ignored,
    as the XDG base directory specification says)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dralint"


@cache
def load_data(name: str) -> Any:
    """A YAML data file under ``schemas/`` (loaded once per process)."""
    return _load_yaml(f"schemas/{name}", schemas_dir() / name)


def _load_yaml(name: str, path: Path) -> Any:
    """A data file's value: from the decoded copy of them all (`decoded_data`), else from its YAML."""
    known = decoded_data().get(name, _MISSING)
    if known is not _MISSING:
        return known
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_FAST_LOADER)


_MISSING = object()


def _data_files() -> list[tuple[str, Path]]:
    """Every YAML data file a run may read, by its name under the data root: ``rules/*/rule.yaml``
    and ``schemas/**.yaml``, in a fixed order."""
    out: list[tuple[str, Path]] = []
    root = data_root()
    for top, pattern in (("rules", "*/rule.yaml"), ("schemas", "**/*.yaml")):
        base = root / top
        if base.is_dir():
            out += [(p.relative_to(root).as_posix(), p) for p in sorted(base.glob(pattern))]
    return out


#: whether `decoded_data` may read and write its copy (the CLI's ``--no-cache`` turns it off)
_COPY = {"enabled": True}


def use_copy(enabled: bool) -> None:
    """Whether this process reads the data files' copy (and writes it when missing); False decodes
    them from their YAML (``--no-cache``: a run that writes no cache anywhere, as the GitHub Action's)."""
    if _COPY["enabled"] != enabled:
        _COPY["enabled"] = enabled
        decoded_data.cache_clear()


@cache
def decoded_data() -> dict[str, Any]:
    """Every data file decoded, from a JSON copy in the user cache directory, made on first use.

    The C YAML loader still builds each value in Python: the ~60 files took about 25 ms of every
    run, their JSON copy about 1 ms. The copy is named by dralint's version and the size and mtime
    of every file, so an edited or added file makes a new copy; only values JSON gives back exactly
    are kept (anything else is read from its YAML). The user cache directory is the user's own, never
    the linted tree's; a copy that is missing, unreadable or damaged is made again, and one that
    cannot be written only costs the time.
    """
    if not _COPY["enabled"]:
        return {}
    files = _data_files()
    h = hashlib.blake2b(__version__.encode(), digest_size=12)
    for name, path in files:
        try:
            st = path.stat()
        except OSError:
            return {}
        h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    directory = user_cache_dir() / "data"
    target = directory / f"{h.hexdigest()}.json"
    got = _read_copy(target)
    if got is not None:
        return got
    out: dict[str, Any] = {}
    for name, path in files:
        try:
            value = yaml.load(path.read_text(encoding="utf-8"), Loader=_FAST_LOADER)
            if json.loads(json.dumps(value)) == value:
                out[name] = value
        except (OSError, UnicodeDecodeError, yaml.YAMLError, TypeError, ValueError, RecursionError):
            continue
    _write_copy(directory, target, out)
    return out


def read_regular(path: str | Path) -> bytes | None:
    """The bytes of a regular file that is not a symlink; None for anything else (a FIFO planted
    there does not block the open: fstat then refuses it). Caches use it for every entry."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            return fh.read()
    except OSError:
        return None


def _read_copy(path: Path) -> dict[str, Any] | None:
    raw = read_regular(path)
    try:
        value = json.loads(raw) if raw is not None else None
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _write_copy(directory: Path, target: Path, value: dict[str, Any]) -> None:
    """Write the copy atomically (a temporary file renamed into place) and drop older copies."""
    tmp = directory / f".tmp-{os.getpid()}-{target.name}"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(value, fh, separators=(",", ":"))
        os.replace(tmp, target)
        for old in directory.glob("*.json"):  # copies of other versions or data: ours, never needed again
            if old != target and len(old.stem) == 24:
                old.unlink()
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


@dataclass(frozen=True)
class RuleMeta:
    code: str
    name: str
    severity: Severity
    summary: str
    category: str
    enabled_by_default: bool
    fix_availability: str  # none | sometimes | always
    fix_applicability: Applicability | None
    why: str
    fix_safety: str
    options: dict[str, Any]
    references: tuple[str, ...]
    folder: Path
    since: str = "0.1.0"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def fixable(self) -> bool:
        return self.fix_availability != "none"

    def option_defaults(self) -> dict[str, Any]:
        props = self.options.get("properties", {}) if self.options else {}
        return {k: v["default"] for k, v in props.items() if isinstance(v, dict) and "default" in v}

    def examples(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for p in sorted(self.folder.glob("*.yaml")):
            if p.name != "rule.yaml":
                out[p.name] = p.read_text(encoding="utf-8")
        return out


def _meta(folder: Path) -> RuleMeta:
    # every run reads all rule.yaml files: from the decoded copy, else with the C loader
    raw = _load_yaml(f"rules/{folder.name}/rule.yaml", folder / "rule.yaml")
    fix = raw.get("fix") or {}
    applic = fix.get("applicability")
    return RuleMeta(
        code=raw["code"],
        name=raw["name"],
        severity=Severity.parse(raw["severity"]),
        summary=raw["summary"].strip(),
        category=raw.get("category", ""),
        enabled_by_default=bool(raw.get("enabled_by_default", True)),
        fix_availability=fix.get("availability", "none"),
        fix_applicability={"safe": Applicability.SAFE, "unsafe": Applicability.UNSAFE,
                           "display-only": Applicability.DISPLAY_ONLY}.get(applic) if applic else None,
        why=(raw.get("why") or "").strip(),
        fix_safety=(raw.get("fix_safety") or "").strip(),
        options=raw.get("options") or {},
        references=tuple(raw.get("references") or ()),
        folder=folder,
        since=str(raw.get("since", "0.1.0")),
        extra={k: v for k, v in raw.items() if k not in {
            "code", "name", "severity", "summary", "category", "enabled_by_default", "fix", "why",
            "fix_safety", "options", "references", "since"}},
    )


@cache
def catalog() -> dict[str, RuleMeta]:
    """All rules by code, from ``rules/<CODE>-<name>/rule.yaml``."""
    out: dict[str, RuleMeta] = {}
    root = rules_dir()
    if not root.is_dir():
        return out
    for folder in sorted(root.iterdir()):
        if (folder / "rule.yaml").is_file():
            meta = _meta(folder)
            out[meta.code] = meta
    return out


def by_name() -> dict[str, RuleMeta]:
    return {m.name: m for m in catalog().values()}
