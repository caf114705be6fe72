"""The Python API: lint, fix or migrate manifest text without the command line.

>>> import dralint
>>> findings = dralint.lint_text(text, kubernetes_version="1.35", select="DRA2")
>>> [f.to_dict() for f in findings]            # the JSON contract, JSON-serialisable
>>> fixed = dralint.fix_text(text, unsafe=True)  # raises dralint.ParseError on text that does not parse
>>> migrated = dralint.migrate_text(text)       # .text and .summary

Profile and configuration keywords are the `.dralint.yaml` keys with underscores:
``kubernetes_version``, ``feature_gates``, ``runtime_config``, ``drivers``, ``inventory``,
``select``, ``ignore``, ``extend_select``, ``severity``, ``rules``… They are validated like a
configuration file (a bad key raises `dralint.engine.config.ConfigError`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dralint.engine.config import Config, build_config
from dralint.engine.runner import limits_for, lint_files
from dralint.inputs.load import SourceFile, load_bytes
from dralint.model import Finding

__all__ = ["FixError", "MigrateResult", "ParseError", "fix_text", "lint_paths", "lint_text", "migrate_text"]

#: the options that hold lists of codes: a string is read as a comma-separated list
_CODE_LISTS = ("select", "extend_select", "ignore")
#: what makes a text unusable for fixing or migrating: it does not parse, or was refused as input
_UNPARSABLE = ("DRA001", "DRA005")


class ParseError(ValueError):
    """The text does not parse as YAML/JSON (or was refused as input); ``finding`` is the DRA001
    (or DRA005) finding with the line and column, and the message says the same."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(f"{finding.path}:{finding.span.line}:{finding.span.column}: {finding.message}")
        self.finding = finding


@dataclass
class MigrateResult:
    """What `migrate_text` returns: the migrated text and the summary ``dralint migrate --format json`` prints."""

    text: str
    summary: dict[str, Any]
    changed: bool


class FixError(RuntimeError):
    """A fix failed its checks (the text is left as it was); ``rules`` names the rules involved."""

    def __init__(self, message: str, rules: list[str]) -> None:
        super().__init__(message)
        self.rules = rules


def _config(options: Mapping[str, Any]) -> Config:
    from pathlib import Path

    options = {k: [c.strip() for c in v.split(",") if c.strip()] if k in _CODE_LISTS and isinstance(v, str) else v
               for k, v in options.items()}
    raw = {k.replace("_", "-"): v for k, v in options.items() if v is not None}
    return build_config(raw, None, Path.cwd())


def _raw(text: str | bytes) -> bytes:
    return text.encode("utf-8") if isinstance(text, str) else text


def lint_text(text: str | bytes, *, path: str = "-", context: Mapping[str, str | bytes] | None = None,
              **options: Any) -> list[Finding]:
    """Lint one manifest text; ``context`` maps other file names to their text (for cross-references)."""
    cfg = _config(options)
    limits = limits_for(cfg)
    ctx = [load_bytes(name, _raw(t), limits) for name, t in (context or {}).items()]
    return lint_files([load_bytes(path, _raw(text), limits)], ctx, cfg).findings


def fix_text(text: str | bytes, unsafe: bool = False, *, path: str = "-",
             context: Mapping[str, str | bytes] | None = None, **options: Any) -> str:
    """The text with the fixes applied (safe ones, or all with ``unsafe=True``); raises `FixError`."""
    from dralint.fix.loop import fix_files

    cfg = _config(options)
    limits = limits_for(cfg)
    ctx = [load_bytes(name, _raw(t), limits) for name, t in (context or {}).items()]
    raw = _raw(text)
    target = load_bytes(path, raw, limits)
    _refuse_unparsable(target, cfg)
    run = fix_files([target], ctx, cfg, unsafe=unsafe or cfg.unsafe_fixes)
    outcome = run.files[0]
    if outcome.failures:
        f = outcome.failures[0]
        raise FixError(f"{', '.join(f.rules)}: {f.reason}", f.rules)
    return outcome.after.decode("utf-8")


def _refuse_unparsable(target: SourceFile, cfg: Config) -> None:
    """Raise `ParseError` for text that does not parse, rather than hand it back unchanged."""
    from dataclasses import replace

    if not target.problems:
        return
    check = replace(cfg, select=list(_UNPARSABLE), extend_select=[], ignore=[], per_file_ignores={})
    for f in lint_files([target], [], check).findings:
        if f.rule in _UNPARSABLE:
            raise ParseError(f)


def lint_paths(paths: str | Sequence[str], *, cache_dir: str | None = None, **options: Any) -> list[Finding]:
    """Lint files and directories as ``dralint check`` does (same discovery and excludes). A library call
    writes nothing unless asked: the summary cache is used only with ``cache_dir``."""
    from dralint.engine.pipeline import lint_paths as run

    cfg = _config(options)
    cfg.use_cache = cache_dir is not None
    if cache_dir is not None:
        cfg.cache_dir = cache_dir
    result = run([paths] if isinstance(paths, str) else list(paths), cfg)
    if result.missing:
        raise FileNotFoundError(f"no such file or directory: {', '.join(result.missing)}")
    return result.findings


def migrate_text(text: str | bytes, *, path: str = "-", keep_extended_resources: bool = False,
                 convert_node_selectors: bool = False, template_name_pattern: str = "{workload}-gpu",
                 context: Mapping[str, str | bytes] | None = None, **options: Any) -> MigrateResult:
    """Move one manifest text off the device plugin, as ``dralint migrate`` does; raises `ParseError`
    for text that does not parse and `FixError` when the migrated text fails the fixer's checks."""
    from dralint.migrate.records import MigrateOptions
    from dralint.migrate.run import migrate_files

    cfg = _config(options)
    limits = limits_for(cfg)
    target = load_bytes(path, _raw(text), limits)
    _refuse_unparsable(target, cfg)
    ctx = [load_bytes(name, _raw(t), limits) for name, t in (context or {}).items()]
    opts = MigrateOptions(template_name_pattern=template_name_pattern, keep_extended_resources=keep_extended_resources,
                          convert_node_selectors=convert_node_selectors)
    report = migrate_files([target], ctx, cfg, opts)
    outcome = report.files[0]
    if outcome.failures:
        f = outcome.failures[0]
        raise FixError(f"{', '.join(f.rules)}: {f.reason}", f.rules)
    return MigrateResult(outcome.after.decode("utf-8"), report.as_json(), outcome.changed)
