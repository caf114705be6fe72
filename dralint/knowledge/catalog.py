"""Rule metadata and the packaged data files (``rules/`` and ``schemas/``).

In a checkout they live at the repository root; in an installed wheel they are copied into
``dralint/_data/``. `data_root()` finds whichever is present, so nothing reads files relative to
the working directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

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


@cache
def load_data(name: str) -> Any:
    """A YAML data file under ``schemas/`` (loaded once per process)."""
    with open(schemas_dir() / name, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=_FAST_LOADER)


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
    # the C loader: every run reads all rule.yaml files, and the pure-Python one took ~70 ms for them
    raw = yaml.load((folder / "rule.yaml").read_text(encoding="utf-8"), Loader=_FAST_LOADER)
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
