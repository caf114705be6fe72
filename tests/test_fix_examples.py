"""Every ``bad*.fixed.yaml`` in rules/ is exactly what ``dralint fix --unsafe-fixes --select CODE`` makes of
its ``bad*.yaml``, and fixing the fixed file changes nothing (Polaris' failure -> mutated pairs)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dralint.engine.config import Config, build_config
from dralint.engine.runner import lint_files
from dralint.fix.loop import fix_files
from dralint.inputs.load import load_bytes
from dralint.knowledge.catalog import catalog

from .conftest import REPO, RULES


def _config(code: str, folder: Path) -> Config:
    raw: dict[str, object] = {"select": [code]}
    profile = folder / "config.yaml"  # the cluster profile an example needs, as test_rule_examples reads it
    if profile.is_file():
        raw.update(yaml.safe_load(profile.read_text(encoding="utf-8")))
    return build_config(raw, None, REPO)


def _pairs() -> list[tuple[str, Path, Path]]:
    out = []
    for fixed in sorted(RULES.glob("*/bad*.fixed.yaml")):
        code = fixed.parent.name.split("-", 1)[0]
        out.append((code, fixed.with_name(fixed.name.replace(".fixed.yaml", ".yaml")), fixed))
    return out


def _fix(code: str, path: Path, raw: bytes) -> tuple[bytes, list[str]]:
    cfg = _config(code, path.parent)
    run = fix_files([load_bytes(path.relative_to(REPO).as_posix(), raw)], [], cfg, unsafe=True)
    outcome = run.files[0]
    assert outcome.failures == [], outcome.failures
    return outcome.after, list(outcome.applied)


@pytest.mark.parametrize(("code", "bad", "fixed"), _pairs(), ids=lambda v: v if isinstance(v, str) else
                         f"{v.parent.name.split('-', 1)[0]}/{v.name}")
def test_fixed_example_matches(code: str, bad: Path, fixed: Path) -> None:
    assert bad.is_file(), f"{fixed} has no {bad.name}"
    after, applied = _fix(code, bad, bad.read_bytes())
    assert applied == [code], f"expected a {code} fix to apply, got {applied}"
    assert after.decode("utf-8") == fixed.read_text(encoding="utf-8")


@pytest.mark.parametrize(("code", "bad", "fixed"), _pairs(), ids=lambda v: v if isinstance(v, str) else
                         f"{v.parent.name.split('-', 1)[0]}/{v.name}")
def test_fixing_the_fixed_example_is_a_noop(code: str, bad: Path, fixed: Path) -> None:
    raw = fixed.read_bytes()
    after, applied = _fix(code, fixed, raw)
    assert applied == []
    assert after == raw


def _fixable_bad_examples() -> list[tuple[str, Path]]:
    out = []
    for code, meta in catalog().items():
        if meta.fix_availability == "none":
            continue
        for bad in sorted(meta.folder.glob("bad*.yaml")):
            if not bad.name.endswith(".fixed.yaml"):
                out.append((code, bad))
    return out


@pytest.mark.parametrize(("code", "bad"), _fixable_bad_examples(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_bad_example_with_a_fix_has_a_fixed_file(code: str, bad: Path) -> None:
    """A bad example whose finding offers a fix documents the result in ``<name>.fixed.yaml``."""
    cfg = _config(code, bad.parent)
    result = lint_files([load_bytes(bad.relative_to(REPO).as_posix(), bad.read_bytes())], [], cfg)
    if any(f.rule == code and f.fix is not None for f in result.findings):
        assert bad.with_name(bad.name.replace(".yaml", ".fixed.yaml")).is_file(), (
            f"{bad} offers a {code} fix but has no .fixed.yaml")
