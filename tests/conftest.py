"""Shared test helpers: lint text or files in-process, locate the shared corpus."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from dralint.engine.config import build_config
from dralint.engine.runner import Result, lint_files
from dralint.inputs.load import load_bytes

REPO = Path(__file__).resolve().parent.parent
RULES = REPO / "rules"
EXAMPLES = REPO / "examples"
SHARED = Path(os.environ.get("DRALINT_SHARED", REPO.parent / "shared"))
CORPUS = SHARED / "corpus"


def lint_text(text: str | bytes, path: str = "test.yaml", select: Sequence[str] | None = None,
              context: Sequence[tuple[str, str]] = (), **config: Any) -> Result:
    raw = text.encode() if isinstance(text, str) else text
    cfg_raw = dict(config)
    if select is not None:
        cfg_raw["select"] = list(select)
    cfg = build_config(cfg_raw, None, REPO)
    targets = [load_bytes(path, raw)]
    ctx = [load_bytes(p, t.encode()) for p, t in context]
    return lint_files(targets, ctx, cfg)


def codes(result: Result) -> list[str]:
    return [f.rule for f in result.findings]


@pytest.fixture
def lint() -> Callable[..., Result]:
    return lint_text


requires_shared = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")
