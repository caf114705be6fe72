"""Charts and kustomize overlays among the paths given to ``fix`` and ``migrate``: never rewritten.

What dralint lints of a chart or an overlay is rendered output, which exists only in memory; the
files a person edits are templates, values and patches, which are not manifests. So ``fix`` and
``migrate`` leave charts and overlays alone, say so, and point at what to change instead: the
findings of the rendered output (`dralint.engine.rendered`) name the template line and values key,
or the patch, and `dralint.migrate.charts` suggests what to add to a chart's templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dralint.engine import charts as chart_inputs
from dralint.engine.config import Config
from dralint.engine.pipeline import walk_skips
from dralint.engine.runner import Result
from dralint.inputs.render import kustomization_file
from dralint.model import Finding


@dataclass
class Split:
    plain: list[str] = field(default_factory=list)
    charts: list[chart_inputs.ChartTarget] = field(default_factory=list)
    overlays: list[str] = field(default_factory=list)

    def rendered_paths(self) -> list[str]:
        """What `dralint.engine.rendered.lint` takes to lint the charts and overlays as rendered."""
        return [g for c in self.charts for g in c.given] + self.overlays


def split(paths: Sequence[str], config: Config) -> Split:
    """``paths`` sorted into plain manifests, charts (found as ``check`` finds them) and overlays."""
    out = Split(charts=chart_inputs.find_charts(paths, stop=config.root, skip=walk_skips(config)))
    for p in paths:
        if p == "-":
            out.plain.append(p)
        elif chart_inputs.in_chart(p, out.charts):
            continue  # the chart itself, or a file inside it: rendered, not a manifest
        elif kustomization_file(p) is not None:
            out.overlays.append(p)
        else:
            out.plain.append(p)
    return out


def shown(p: Path | str) -> str:
    try:
        return Path(p).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(p).as_posix()


def refusals(command: str, s: Split) -> list[str]:
    """One note per chart or overlay that ``command`` leaves unwritten, with what to do instead."""
    notes = [f"{shown(c.directory)} is a Helm chart: `dralint {command}` never rewrites rendered output; "
             "change its templates or values (each finding names the template line and values key)"
             for c in s.charts]
    notes += [f"{shown(o)} is a kustomize overlay: `dralint {command}` never rewrites built output; change "
              "the patch or base file each finding names (or give those files to `dralint "
              f"{command}`)" for o in s.overlays]
    return notes


def inside_rendered(f: Finding, s: Split) -> bool:
    """A finding of the plain run on a file of a chart (its templates linted raw are only noise)."""
    return chart_inputs.in_chart(f.path, s.charts)


def add_rendered_findings(result: Result, s: Split, config: Config, kw: dict[str, Any]) -> None:
    """Replace what the plain run said about files of a chart by the findings of the rendered charts
    and overlays (as ``check`` reports them); a render that cannot start raises `ConfigError`."""
    from dralint.engine.rendered import lint

    paths = s.rendered_paths()
    if not paths:
        return
    result.findings = [f for f in result.findings if not inside_rendered(f, s)]
    rendered = lint(paths, config, values_files=kw.get("helm_values") or (), sets=kw.get("helm_set") or (),
                    helm_cli={k: v for k, v in kw.items() if k.startswith("helm_") and v})
    result.findings += rendered.findings
    result.findings.sort(key=Finding.sort_key)
