"""``dralint migrate`` on a Helm chart: what to add to its templates, as a suggestion, never written.

A chart's manifests exist only when it is rendered, so there is nothing to rewrite: the chart is
rendered (`dralint.inputs.render.render_helm`, with the options ``check`` uses), the migration is
planned on that output exactly as for plain manifests, and what it would add — a
ResourceClaimTemplate per workload, the pod's ``resourceClaims``, each container's
``resources.claims`` — is shown per workload with the template line the workload comes from, and
with ``--diff`` as a unified diff of the rendered output (before -> migrated) to copy into the
templates. Rendered documents keep their ``# Source:`` line renamed (``# Rendered from:``), so the
planner, which never plans on Helm output, plans here, and the line numbers still map back to the
templates through the markers of the instrumented render.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dralint.engine import charts as chart_inputs
from dralint.engine.config import Config
from dralint.inputs.load import load_bytes
from dralint.inputs.render import Rendered, RenderError, RenderFailed, render_helm
from dralint.migrate.records import MigrateOptions, WorkloadReport
from dralint.migrate.run import migrate_files

_SOURCE_LINE = re.compile(rb"^# Source: ", re.MULTILINE)


@dataclass
class ChartSuggestions:
    #: per workload: status "suggested" (or the planner's "skipped"), at its template line
    workloads: list[WorkloadReport] = field(default_factory=list)
    #: per rendered template with a suggestion: (what it is, its label, rendered before, migrated)
    diffs: list[tuple[str, str, bytes, bytes]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _template_line(rendered: Rendered, path: str, line: int) -> tuple[str, int]:
    """The template file and line a rendered line came from (the rendered place when unknown)."""
    origins = rendered.line_origins.get(path) or []
    entry = origins[line - 1] if 0 < line <= len(origins) else None
    if entry is None:
        return path, line
    chart, origin, _exact = entry
    return chart_inputs.shown_path(chart / origin.file), origin.line


def suggest(charts: Sequence[chart_inputs.ChartTarget], config: Config, opts: MigrateOptions,
            cli: dict[str, Any]) -> ChartSuggestions:
    out = ChartSuggestions()
    for target in charts:
        shown = chart_inputs.shown_path(target.directory)
        try:
            rendered = render_helm(str(target.directory), options=chart_inputs.options_for(target.directory, config,
                                                                                            cli))
        except RenderFailed as e:
            # Helm's own failure (a `fail` that wants values, say) is this chart's skip, not the run's
            # error: a migration over a whole repository goes on, and `check` reports it as DRA009
            message = " ".join(str(e).split())
            out.workloads.append(WorkloadReport(
                chart_inputs.shown_path(target.directory / "Chart.yaml"), 1, "Chart", None, target.directory.name,
                "skipped", f"the chart does not render, so there is nothing to suggest ({message}); "
                f"{chart_inputs.RENDER_HINT}"))
            continue
        except RenderError as e:
            out.errors.append(f"{shown}: {e}")
            continue
        found = 0
        for sf in rendered.files:
            text = _SOURCE_LINE.sub(b"# Rendered from: ", sf.raw)
            plain = load_bytes(sf.path, text)
            report = migrate_files([plain], [], config, opts)
            outcome = report.files[0]
            for w in report.workloads:
                w.path, w.line = _template_line(rendered, sf.path, w.line)
                if w.status == "migrated":
                    w.status = "suggested"
                    found += 1
                    w.notes.append(f"not written ({shown} is a Helm chart): add "
                                   f"{', '.join(w.objects) or 'the claims'} as a template, and the pod's "
                                   "`resourceClaims` and the containers' `resources.claims` to this template")
                out.workloads.append(w)
            if outcome.changed:
                header = (f"{shown} is a Helm chart: nothing was written; add to its templates what this "
                          "migration of the rendered output adds")
                out.diffs.append((header, f"{sf.path} (rendered)", outcome.before, outcome.after))
        if found:
            out.notes.append(f"{shown}: {found} workload{'s' if found != 1 else ''} to migrate in the chart's "
                             "templates (rendered output is never rewritten; `--diff` shows what to add)")
    return out
