"""Every rule folder runs as a test: bad examples fire (snapshotted), good examples stay quiet."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml
from syrupy.assertion import SnapshotAssertion

from dralint.engine.config import build_config
from dralint.engine.pipeline import lint_paths
from dralint.engine.runner import lint_files
from dralint.inputs.load import load_bytes
from dralint.knowledge.catalog import catalog

from .conftest import REPO, RULES


def _cases(prefix: str) -> list[tuple[str, Path]]:
    out = []
    for folder in sorted(RULES.iterdir()):
        if not (folder / "rule.yaml").is_file():
            continue
        code = folder.name.split("-", 1)[0]
        for f in sorted(folder.glob(f"{prefix}*.yaml")):
            if f.name.endswith(".fixed.yaml"):
                continue
            out.append((code, f))
    return out


def _lint(code: str, path: Path, all_rules: bool = False):  # type: ignore[no-untyped-def]
    raw = {"select": ["ALL"]} if all_rules else {"select": [code]}
    profile = path.parent / "config.yaml"  # the cluster profile an example needs (e.g. a runtime-config)
    if profile.is_file():
        raw.update(yaml.safe_load(profile.read_text(encoding="utf-8")))
    cfg = build_config(raw, None, REPO)
    rel = path.relative_to(REPO).as_posix()
    if path.name.startswith("bad") and catalog()[code].extra.get("example_setup") == "symlink-outside-roots":
        return _lint_through_outside_link(path, cfg)
    return lint_files([load_bytes(rel, path.read_bytes())], [], cfg)


def _lint_through_outside_link(path: Path, cfg):  # type: ignore[no-untyped-def]
    """Lint ``manifests/gpu-pod.yaml``, a symlink to a copy of the example outside every root."""
    with tempfile.TemporaryDirectory() as tmp:
        outside = Path(tmp, "outside")
        outside.mkdir()
        (outside / path.name).write_bytes(path.read_bytes())
        manifests = Path(tmp, "project", "manifests")
        manifests.mkdir(parents=True)
        (manifests / "gpu-pod.yaml").symlink_to(outside / path.name)
        cfg.root, cfg.use_cache = manifests.parent, False
        return lint_paths([str(manifests)], cfg)


def render(result) -> str:  # type: ignore[no-untyped-def]
    lines = []
    for f in result.findings:
        fix = f" [fix: {f.fix.title} · {f.fix.applicability}]" if f.fix else ""
        lines.append(f"{f.span.line}:{f.span.column}-{f.span.end_line}:{f.span.end_column} {f.rule} {f.severity} "
                     f"{f.message}{fix}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("code", "path"), _cases("bad"), ids=lambda v: v if isinstance(v, str) else v.name)
def test_bad_example_fires(code: str, path: Path, snapshot: SnapshotAssertion) -> None:
    result = _lint(code, path)
    assert result.internal_errors == []
    assert any(f.rule == code for f in result.findings), f"{path} produced no {code}"
    assert render(result) == snapshot


@pytest.mark.parametrize(("code", "path"), _cases("good"), ids=lambda v: v if isinstance(v, str) else v.name)
def test_good_example_is_quiet(code: str, path: Path) -> None:
    result = _lint(code, path)
    assert result.internal_errors == []
    assert [f for f in result.findings if f.rule == code] == []


@pytest.mark.parametrize(("code", "path"), _cases("good"), ids=lambda v: v if isinstance(v, str) else v.name)
def test_good_example_has_no_errors_from_any_rule(code: str, path: Path) -> None:
    """A good example should be a correct manifest, not just quiet for its own rule."""
    result = _lint(code, path, all_rules=True)
    assert result.internal_errors == []
    errors = [f"{f.rule}: {f.message}" for f in result.findings if int(f.severity) >= 3 and f.rule != code]
    assert errors == []


def test_every_rule_has_examples() -> None:
    for code, meta in catalog().items():
        names = {p.name for p in meta.folder.glob("*.yaml")}
        assert any(n.startswith("bad") for n in names), f"{code} has no bad example"
        assert any(n.startswith("good") for n in names), f"{code} has no good example"


# -- positions written by hand next to the examples -------------------------------------------------

#: rule folders whose bad examples have no expect.yaml yet (issue 18, point 3: being written);
#: the list may only shrink: a folder with an expect.yaml must leave it
NOT_YET_ANNOTATED = frozenset({
    "DRA101", "DRA104", "DRA105", "DRA106",
    "DRA201", "DRA202", "DRA203", "DRA204", "DRA205", "DRA206", "DRA207", "DRA208",
    "DRA301", "DRA302", "DRA303", "DRA304", "DRA306", "DRA307", "DRA309",
    "DRA401", "DRA402", "DRA403", "DRA501", "DRA502", "DRA503",
    "DRA601", "DRA602", "DRA603", "DRA604", "DRA605",
})


def _expectations(folder: Path) -> dict[str, list[tuple[int, int]]]:
    f = folder / "expect.yaml"
    if not f.is_file():
        return {}
    raw = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
    return {name: sorted((int(p[0]), int(p[1])) for p in positions) for name, positions in raw.items()}


def _annotated() -> list[tuple[str, Path, list[tuple[int, int]]]]:
    out = []
    for code, path in _cases("bad"):
        want = _expectations(path.parent)
        if path.name in want:
            out.append((code, path, want[path.name]))
    return out


@pytest.mark.parametrize(("code", "path", "want"), _annotated(),
                         ids=lambda v: v.name if isinstance(v, Path) else (v if isinstance(v, str) else ""))
def test_bad_example_findings_are_where_the_example_says(code: str, path: Path,
                                                         want: list[tuple[int, int]]) -> None:
    result = _lint(code, path)
    assert result.internal_errors == []
    got = sorted((f.span.line, f.span.column) for f in result.findings if f.rule == code)
    assert got == want, "\n" + render(result)


def test_every_bad_example_has_expectations() -> None:
    missing, stale = set(), set()
    for code, path in _cases("bad"):
        want = _expectations(path.parent)
        if code in NOT_YET_ANNOTATED:
            if want:
                stale.add(code)
        elif path.name not in want:
            missing.add(f"{code}/{path.name}")
    for folder in RULES.iterdir():  # an expectation for a file that does not exist is a typo
        for name in _expectations(folder):
            assert (folder / name).is_file(), f"{folder.name}/expect.yaml names {name}, which does not exist"
    assert not missing, f"bad examples without an expect.yaml entry: {sorted(missing)}"
    assert not stale, f"annotated now, remove from NOT_YET_ANNOTATED: {sorted(stale)}"
