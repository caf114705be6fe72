"""A rule's ``when=``: the engine does not call a rule on the kinds it says it finds nothing on,
and every rule that says so finds nothing there when called anyway (on real files)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dralint.checks.registry import REGISTRY, Context, RuleImpl, load_checks
from dralint.engine.config import build_config
from dralint.inputs.index import Index, K8sObject, file_units
from dralint.inputs.load import load_bytes
from dralint.model import Violation
from tests.conftest import CORPUS, EXAMPLES, REPO, lint_text

load_checks()
WHEN_RULES = sorted(code for code, impl in REGISTRY.items() if impl.when is not None)


def _objects(roots: list[Path]) -> Iterator[K8sObject]:
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.suffix in (".yaml", ".yml", ".json") and p.is_file() and not p.is_symlink():
                sf = load_bytes(str(p), p.read_bytes())
                yield from (u for u in file_units(sf) if isinstance(u, K8sObject))


def test_the_rules_that_judge_every_object_say_where_they_can_find_something() -> None:
    assert {"DRA111", "DRA209", "DRA210", "DRA501"} <= set(WHEN_RULES)


@pytest.mark.parametrize("code", WHEN_RULES)
def test_a_rule_finds_nothing_where_its_when_says_it_cannot(code: str) -> None:
    """Over the examples and, when present, the shared corpus (operators' custom resources, charts'
    output, driver demos): wherever ``when`` is False the rule, called directly, yields nothing."""
    roots = [EXAMPLES, *([CORPUS] if CORPUS.is_dir() else [])]
    impl = REGISTRY[code]
    assert impl.when is not None
    ctx = Context(index=Index(), profile=build_config({}, None, REPO).profile)
    skipped = called = 0
    for obj in _objects(roots):
        if impl.kinds is not None and obj.kind not in impl.kinds:
            continue
        if impl.when(obj.kind, obj.facets, ctx):
            called += 1
            continue
        skipped += 1
        assert list(impl.fn(obj, ctx)) == [], f"{code} finds something on {obj.file.path} {obj.kind}"
    assert skipped > 0  # the test looked at objects the engine skips


def test_the_engine_does_not_call_a_rule_where_when_is_false(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str | None] = []

    def spy(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
        seen.append(obj.kind)
        yield Violation("seen", ())

    def only_jobs(kind: str | None, facets: int, ctx: Any) -> bool:
        return kind == "Job"

    impl = REGISTRY["DRA209"]
    monkeypatch.setitem(REGISTRY, "DRA209", RuleImpl(impl.code, spy, impl.scope, impl.kinds, impl.needs, only_jobs))
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
            "      containers: [{name: c, image: x}]\n---\n"
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n")
    result = lint_text(text, select=["DRA209"])
    assert seen == ["Job"]
    assert [(f.rule, f.line) for f in result.findings] == [("DRA209", 5)]
