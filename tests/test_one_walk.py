"""A run walks the tree once: finding Helm charts under the given paths and discovering the files to
lint read the same directory listings (`dralint.inputs.files.one_walk`), and outside a run nothing
is remembered (a directory that changes between two runs is listed again)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dralint.engine import charts
from dralint.engine.config import build_config
from dralint.engine.rendered import lint
from dralint.inputs.files import discover, listing, one_walk


def _tree(root: Path) -> None:
    (root / "apps" / "a").mkdir(parents=True)
    (root / "apps" / "a" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    (root / "apps" / "b").mkdir()
    (root / "apps" / "b" / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n")
    chart = root / "charts-here" / "gpu"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gpu\nversion: 0.1.0\n")
    (chart / "charts" / "sub").mkdir(parents=True)
    (chart / "charts" / "sub" / "Chart.yaml").write_text("apiVersion: v2\nname: sub\nversion: 0.1.0\n")
    (root / ".git").mkdir()
    (root / ".git" / "x.yaml").write_text("a: 1\n")


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    seen: Counter[str] = Counter()
    real = os.scandir

    def counting(path: str) -> Any:
        seen[os.path.normpath(path)] += 1
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    return seen


def test_a_check_lists_each_directory_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           scans: Counter[str]) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    walks: list[Path] = []
    real = charts._walk_charts

    def walk(directory: Path, skip: frozenset[str] = frozenset()) -> list[Path]:
        walks.append(directory)
        return real(directory, skip)

    monkeypatch.setattr(charts, "_walk_charts", walk)
    result = lint(["apps"], build_config({}, None, tmp_path))
    assert walks == [Path("apps")]  # the charts were looked for, in the same tree
    assert sorted(sf.path for sf in result.files) == ["apps/a/cm.yaml", "apps/b/pod.yaml"]
    tree = {k: n for k, n in scans.items() if k == "apps" or k.startswith("apps/")}  # not dralint's own
    assert tree == {"apps": 1, "apps/a": 1, "apps/b": 1}


def test_the_chart_walk_finds_outermost_charts_and_skips_tool_directories(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "linked").symlink_to(tmp_path / "charts-here", target_is_directory=True)
    found = charts._walk_charts(tmp_path)
    assert found == [tmp_path / "charts-here" / "gpu"]  # not its sub-chart, not through the link


def test_outside_a_run_nothing_is_remembered(tmp_path: Path, scans: Counter[str]) -> None:
    (tmp_path / "a.yaml").write_text("a: 1\n")
    assert [e.name for e in listing(str(tmp_path))] == ["a.yaml"]
    (tmp_path / "b.yaml").write_text("b: 1\n")
    assert [e.name for e in listing(str(tmp_path))] == ["a.yaml", "b.yaml"]
    with one_walk():
        refs, _ = discover([str(tmp_path)])
        refs_again, _ = discover([str(tmp_path)])
    assert [r.display for r in refs] == [r.display for r in refs_again]
    assert scans[os.path.normpath(str(tmp_path))] == 3


@pytest.mark.parametrize("respect_gitignore", [True, False])
def test_the_runs_cache_is_never_walked_whatever_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         scans: Counter[str], respect_gitignore: bool) -> None:
    """`--cache-dir` may put the cache anywhere in the project. Its own `.gitignore` kept its entries
    out of the lint only while gitignore files were respected; it is not entered at all now."""
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    cfg = build_config({"respect-gitignore": respect_gitignore}, None, tmp_path)
    cfg.cache_dir = "my-cache"
    first = lint(["apps"], cfg)
    (tmp_path / "apps" / "my-cache").mkdir()  # a cache inside a linted directory, under a name of its own
    cfg.cache_dir = "apps/my-cache"
    lint(["apps"], cfg)
    again = lint(["apps"], cfg)
    assert list((tmp_path / "apps" / "my-cache").rglob("*.json")), "the cache was written"
    assert sorted(sf.path for sf in again.files) == sorted(sf.path for sf in first.files) == \
        ["apps/a/cm.yaml", "apps/b/pod.yaml"]
    assert not any(k.startswith("apps/my-cache") for k in scans)
