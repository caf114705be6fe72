"""dralint: lint and migrate Kubernetes manifests for Dynamic Resource Allocation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["FixError", "MigrateResult", "ParseError", "__version__", "fix_text", "lint_paths", "lint_text",
           "migrate_text"]

if TYPE_CHECKING:
    from dralint.api import FixError, MigrateResult, ParseError, fix_text, lint_paths, lint_text, migrate_text


def __getattr__(name: str) -> Any:
    # the API pulls in the whole engine: import it on first use, so `import dralint` (and the CLI's
    # start-up) stays cheap
    if name in ("FixError", "MigrateResult", "ParseError", "fix_text", "lint_paths", "lint_text", "migrate_text"):
        from dralint import api

        return getattr(api, name)
    raise AttributeError(f"module 'dralint' has no attribute {name!r}")
