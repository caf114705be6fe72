"""Helm charts among the linted paths: which to render, with which options, and render failures.

A directory holding ``Chart.yaml`` is a chart: it is rendered and never linted file by file (its
templates are not manifests). A chart is found when it is given, when it lies under a given
directory, and when a given file lies inside it (pre-commit passes the changed files): a changed
template then reports the findings on that template, and a changed values file, ``Chart.yaml`` or
any other file of the chart reports every finding of the chart (values reach every template).

Options come from, later winning: the `helm:` table of the configuration, its ``charts: <dir>:``
entry for the chart (paths relative to the configuration's directory), and the command line.
The target Kubernetes version of the cluster profile becomes ``.Capabilities.KubeVersion`` and the
resource.k8s.io versions it serves are added to ``.Capabilities.APIVersions``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dralint.engine.config import Config
from dralint.inputs.files import listing
from dralint.inputs.load import LoadProblem, SourceFile
from dralint.inputs.render_spec import HelmOptions
from dralint.knowledge.lifecycle import for_profile
from dralint.model import Span

#: what a chart that does not render may need (a chart's own `fail` names the value it wants)
RENDER_HINT = ("give it the values it needs (`--set`, `-f`, `--namespace`, or `helm: charts:` in the "
               "configuration)")
#: the rule of a chart that does not render (Helm's message at Chart.yaml)
RENDER_FAILED = "DRA009"
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".dralint_cache"})


@dataclass
class ChartTarget:
    directory: Path
    #: None: report every finding of the chart; else only those on these files (resolved paths)
    report_only: set[str] | None = None
    given: list[str] = field(default_factory=list)


def chart_root(path: Path, stop: Path | None = None) -> Path | None:
    """The outermost chart directory holding ``path`` (a sub-chart under ``charts/`` is part of its parent)."""
    return chart_above(path if path.is_dir() else path.parent, stop)


def chart_above(directory: Path, stop: Path | None = None, memo: dict[Path, bool] | None = None) -> Path | None:
    """`chart_root` of a directory; ``memo`` keeps what each directory held across calls (the
    context files of a run share their parents: one stat per directory, not one per file and level)."""
    found = None
    stop_real = stop.resolve() if stop else None
    for parent in [directory, *directory.parents]:
        has = memo.get(parent) if memo is not None else None
        if has is None:
            has = (parent / "Chart.yaml").is_file()
            if memo is not None:
                memo[parent] = has
        if has:
            found = parent
        if stop_real is not None and parent.resolve() == stop_real:
            break
    return found


def _walk_charts(directory: Path, skip: frozenset[str] = frozenset()) -> list[Path]:
    """The outermost charts under ``directory`` (symlinked directories and ``skip``, resolved paths,
    are not entered), in walk order. The listings are the ones file discovery reads afterwards
    (`dralint.inputs.files.one_walk`)."""
    out: list[Path] = []
    stack = [str(directory)]
    while stack:
        path = stack.pop()
        if skip and os.path.realpath(path) in skip:
            continue
        try:
            entries = listing(path)
        except OSError:
            continue
        if any(e.name == "Chart.yaml" and not _is_dir(e) for e in entries):
            out.append(Path(path))
            continue  # its sub-charts render with it
        stack.extend(reversed([e.path for e in entries if e.name not in _SKIP_DIRS and _is_dir(e)
                               and not e.is_symlink()]))
    return out


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def find_charts(paths: Sequence[str], explicit: Sequence[str] = (), stop: Path | None = None,
                skip: frozenset[str] = frozenset()) -> list[ChartTarget]:
    """The charts to render for the given paths and ``--helm-chart`` directories (``skip``: resolved
    paths of directories not searched, the run's cache)."""
    targets: dict[str, ChartTarget] = {}

    def add(directory: Path, file: str | None) -> None:
        key = str(directory.resolve())
        t = targets.get(key)
        if t is None:
            t = targets[key] = ChartTarget(directory, report_only=set() if file else None)
        if file is None:
            t.report_only = None
        elif t.report_only is not None:
            rel = Path(file).resolve().relative_to(directory.resolve()).parts
            if len(rel) >= 2 and rel[0] == "templates" and not rel[-1].startswith("_"):
                t.report_only.add(str(Path(file).resolve()))
            else:  # values, Chart.yaml, a partial: every template can change
                t.report_only = None
        t.given.append(file or str(directory))

    for chart_dir in explicit:
        add(Path(chart_dir), None)
    for p in paths:
        if p == "-":
            continue
        path = Path(p)
        if path.is_dir():
            root = chart_root(path, stop)
            if root is not None:
                add(root, None)
                continue
            for c in _walk_charts(path, skip):
                add(c, None)
        elif path.is_file():
            root = chart_root(path, stop)
            if root is not None:
                add(root, p)
    return list(targets.values())


def in_chart(path: str | Path, charts: Iterable[ChartTarget]) -> bool:
    real = str(Path(path).resolve())
    for c in charts:
        top = str(c.directory.resolve())
        if real == top or real.startswith(top.rstrip("/") + "/"):
            return True
    return False


def _entry(config: Config, chart: Path) -> dict[str, Any]:
    charts = config.helm.get("charts") or {}
    real = chart.resolve()
    for key, entry in charts.items():
        if (config.root / key).resolve() == real and isinstance(entry, dict):
            return entry
    return {}


def _pairs(table: Any) -> list[str]:
    if not isinstance(table, dict):
        return []
    return [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in table.items()]


def served_api_versions(config: Config) -> list[str]:
    """``resource.k8s.io/<v>`` (and ``…/<v>/<Kind>``) for every version the target serves."""
    lc = for_profile(config.profile)
    out: list[str] = []
    for v in lc.versions():
        if lc.served(v):
            out.append(f"resource.k8s.io/{v}")
            out += [f"resource.k8s.io/{v}/{k}" for k in lc.kinds(v) if lc.served(v, k)]
    return out


def options_for(chart: Path, config: Config, cli: dict[str, Any]) -> HelmOptions:
    base, own = config.helm, _entry(config, chart)
    values = [str(config.root / v) for v in [*base.get("values", []), *own.get("values", [])]]
    values += list(cli.get("helm_values") or ())
    sets = _pairs(base.get("set")) + _pairs(own.get("set")) + list(cli.get("helm_set") or ())
    set_strings = (_pairs(base.get("set-string")) + _pairs(own.get("set-string"))
                   + list(cli.get("helm_set_string") or ()))
    api = [*base.get("api-versions", []), *own.get("api-versions", []), *(cli.get("helm_api_versions") or ())]
    served = served_api_versions(config)
    return HelmOptions(
        values_files=values, sets=sets, set_strings=set_strings,
        release_name=cli.get("helm_release_name") or own.get("release-name") or base.get("release-name")
        or HelmOptions.release_name,
        namespace=cli.get("helm_namespace") or own.get("namespace") or base.get("namespace"),
        kube_version=config.profile.kubernetes_version or None,
        api_versions=[*served, *api],
        # what the user adds with --api-versions counts as served too
        resource_versions=[*served, *(a for a in api if a.startswith("resource.k8s.io/"))],
    )


def shown_path(p: Path) -> str:
    """A path as the user sees it: relative to the working directory when under it."""
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def render_failure(chart: Path, message: str) -> SourceFile:
    """One DRA009 finding at the chart's ``Chart.yaml`` carrying Helm's own message."""
    path = chart / "Chart.yaml"
    try:
        shown = path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        shown = path.as_posix()
    # the finding is at the chart already: drop the "helm template <dir>: " that RenderError starts with
    for prefix in (f"helm template {chart}: ", f"helm template {chart} failed: "):
        if message.startswith(prefix):
            message = message[len(prefix):]
    sf = SourceFile(path=shown, raw=b"")
    # one line: Helm's own message often starts and breaks lines of its own
    sf.problems.append(LoadProblem(RENDER_FAILED, f"the chart does not render: {' '.join(message.split())}; "
                                   f"{RENDER_HINT}", Span(1, 1, 1, 1)))
    return sf
