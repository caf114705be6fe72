"""docs/rules is generated from rules/: the committed pages must match what the generator writes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from dralint.knowledge.catalog import catalog

from .conftest import REPO


def test_rule_docs_are_current(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.generate(tmp_path)
    committed = REPO / "docs" / "rules"
    fresh = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()}
    have = {p.name: p.read_text(encoding="utf-8") for p in committed.iterdir()}
    assert sorted(have) == sorted(fresh), "run `python scripts/gen_docs.py`"
    stale = [n for n in fresh if fresh[n] != have[n]]
    assert stale == [], f"stale docs {stale}: run `python scripts/gen_docs.py`"
    assert {f"{c}.md" for c in catalog()} <= set(fresh)
