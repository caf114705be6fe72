"""The Python API: lint or fix manifest text without the command line.

>>> import dralint
>>> findings = dralint.lint_text(text, kubernetes_version="1.35")
>>> fixed = dralint.fix_text(text, unsafe=True)

Profile and configuration keywords are the `.dralint.yaml` keys with underscores:
``kubernetes_version``, ``feature_gates``, ``runtime_config``, ``drivers``, ``inventory``,
``select``, ``ignore``, ``extend_select``, ``severity``, ``rules``… They are validated like a
configuration file (a bad key raises `dralint.engine.config.ConfigError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dralint.engine.config import Config, build_config
from dralint.engine.runner import limits_for, lint_files
from dralint.inputs.load import load_bytes
from dralint.model import Finding

__all__ = ["FixError", "fix_text", "lint_text"]


class FixError(RuntimeError):
    """A fix failed its checks (the text is left as it was); ``rules`` names the rules involved."""

    def __init__(self, message: str, rules: list[str]) -> None:
        super().__init__(message)
        self.rules = rules


def _config(options: Mapping[str, Any]) -> Config:
    from pathlib import Path

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
    run = fix_files([load_bytes(path, raw, limits)], ctx, cfg, unsafe=unsafe or cfg.unsafe_fixes)
    outcome = run.files[0]
    if outcome.failures:
        f = outcome.failures[0]
        raise FixError(f"{', '.join(f.rules)}: {f.reason}", f.rules)
    return outcome.after.decode("utf-8")
