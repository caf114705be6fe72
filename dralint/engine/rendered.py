"""Lint rendered Helm charts and kustomizations as their sources, and point findings at the sources.

`lint` renders (`dralint.inputs.render`), lints each rendered source as the file a user edits, then
moves every finding to the line of the same key in the source file. Templates compute values, so
the key is what can be found; when it cannot (a key produced by a template expression), the
finding points at line 1 and keeps the position inside the rendered output in
``Finding.extra["rendered"]``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dralint.engine import charts as chart_inputs
from dralint.engine.config import Config
from dralint.engine.lazy import Input
from dralint.engine.pipeline import discover_files, lint_inputs, lint_paths, ref_key, walk_skips
from dralint.engine.runner import Result
from dralint.inputs.files import one_walk
from dralint.inputs.load import SourceFile, load_bytes
from dralint.inputs.locate import locate
from dralint.inputs.render_spec import RenderError, RenderFailed, kustomization_file
from dralint.model import Finding, Span

if TYPE_CHECKING:  # the renderer and its position tools are imported when something is rendered
    from dralint.inputs.helm_positions import Origin
    from dralint.inputs.kustomize_patches import PatchIndex
    from dralint.inputs.render import Rendered

# --------------------------------------------------------------------------------------------------
# moving positions from rendered output to the source file


def _key_pattern(key: str) -> re.Pattern[str]:
    k = re.escape(key)
    return re.compile(rf"^(\s*(?:-\s+)?)([\"']?{k}[\"']?)\s*:(?:\s|$)")


def _matches(lines: Sequence[str], pat: re.Pattern[str]) -> list[tuple[int, int]]:
    out = []
    for i, line in enumerate(lines):
        m = pat.match(line)
        if m:
            out.append((i + 1, len(m.group(1)) + 1))
    return out


def _remap(f: Finding, rendered: SourceFile, source_lines: list[str]) -> None:
    f.extra["rendered"] = {"line": f.span.line, "column": f.span.column}
    keys = [k for k in (*f.base_path, *f.obj_path) if isinstance(k, str)]
    rendered_lines = rendered.text.splitlines()
    for key in reversed(keys):
        pat = _key_pattern(key)
        in_source = _matches(source_lines, pat)
        if not in_source:
            continue
        # the same key repeats (several containers): take the occurrence with the same rank
        before = [ln for ln, _ in _matches(rendered_lines, pat) if ln <= f.span.line]
        rank = len(before) - 1 if key == keys[-1] else 0
        line, col = in_source[rank] if 0 <= rank < len(in_source) else in_source[0]
        width = len(key)
        f.span = Span(line, col, line, col + width)
        return
    f.span = Span(1, 1, 1, 1)


def _remap_manifest(f: Finding, source: SourceFile) -> None:
    """Kustomize sources are manifests: find the same object there and locate the same path."""
    f.extra["rendered"] = {"line": f.span.line, "column": f.span.column}
    kind = f.object.kind if f.object else None
    name = f.object.name if f.object else None
    best = None
    for doc in source.documents:
        data = doc.data
        if not isinstance(data, dict) or data.get("kind") != kind:
            continue
        meta = data.get("metadata")
        own = meta.get("name") if isinstance(meta, dict) else None
        if isinstance(own, str) and isinstance(name, str) and own == name:
            best = doc
            break
        # namePrefix/nameSuffix change the name: the original is contained in the rendered one
        if best is None and isinstance(own, str) and isinstance(name, str) and own in name:
            best = doc
    if best is None or f.object is None:
        f.span = Span(1, 1, 1, 1)
        return
    f.span = locate(source, best, f.obj_path, "key")


def _template_lines(path: Path, cache: dict[Path, list[str]]) -> list[str]:
    if path not in cache:
        try:
            cache[path] = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            cache[path] = []
    return cache[path]


def _remap_marked(f: Finding, rendered: SourceFile, origins: list[tuple[Path, Origin, bool] | None],
                  cache: dict[Path, list[str]]) -> bool:
    """Move a finding through the markers of an instrumented render; False when its line has none."""
    from dralint.inputs.helm_positions import column_of, values_path

    index = f.span.line - 1
    entry = origins[index] if 0 <= index < len(origins) else None
    if entry is None:
        return False
    chart, origin, exact = entry
    file, line = origin.file, origin.line
    target = chart / file
    tlines = _template_lines(target, cache)
    text = tlines[line - 1] if 0 < line <= len(tlines) else ""
    rendered_lines = rendered.text.split("\n")
    f.extra["rendered"] = {"line": f.span.line, "column": f.span.column,
                           "text": rendered_lines[index] if index < len(rendered_lines) else ""}
    keys = [k for k in (*f.base_path, *f.obj_path) if isinstance(k, str)]
    col = column_of(text, keys[-1] if keys and exact else None) if text else None
    if col is None:
        col = len(text) - len(text.lstrip()) + 1 if text.strip() else 1
    f.extra["template"] = {"path": _display_path(target), "line": line}
    vpath = values_path(text)
    # text an action printed (toYaml of values): the template line is where it was emitted from
    if vpath and (not exact or (keys and column_of(text, keys[-1]) is None)):
        f.extra["values"] = vpath
        f.message = f"{f.message} (from values `{vpath}`)"
    f.path = _display_path(target)
    f.span = Span(line, col, line, col + (len(keys[-1]) if keys and exact and col > 1 else 1))
    return True


def _display_path(p: Path) -> str:
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def remap(result: Result, rendered: Rendered) -> None:
    from dralint.engine import kustomize_sites

    by_path = {sf.path: sf for sf in rendered.files}
    lines: dict[str, list[str]] = {}
    sources: dict[str, SourceFile] = {}
    template_cache: dict[Path, list[str]] = {}
    patch_indexes: dict[Path, PatchIndex] = {}
    for f in result.findings:
        sf = by_path.get(f.path)
        if sf is None:
            continue
        marked = rendered.line_origins.get(f.path)
        if marked is not None and _remap_marked(f, sf, marked, template_cache):
            continue
        disk = rendered.origins.get(f.path)
        if disk is None:
            continue
        if f.path in rendered.manifests:
            if f.path not in sources:
                try:
                    sources[f.path] = load_bytes(f.path, disk.read_bytes())
                except OSError:
                    sources[f.path] = load_bytes(f.path, b"")
            _remap_manifest(f, sources[f.path])
            kustomize_sites.to_patch(f, sf, rendered, sources[f.path], patch_indexes)
            continue
        if f.path not in lines:
            try:
                lines[f.path] = disk.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                lines[f.path] = []
        _remap(f, sf, lines[f.path])
    result.findings.sort(key=Finding.sort_key)


# --------------------------------------------------------------------------------------------------
# the entry point used by the CLI


def _resolved(path: str) -> str:
    try:
        return str(Path(path).resolve())
    except (OSError, RuntimeError):
        return path


def lint(
    paths: Sequence[str],
    config: Config,
    context: Sequence[str] = (),
    stdin: tuple[str, bytes] | None = None,
    follow_symlinks: bool = False,
    helm_charts: Sequence[str] = (),
    values_files: Sequence[str] = (),
    sets: Sequence[str] = (),
    helm_cli: dict[str, object] | None = None,
) -> Result:
    """`lint_paths`, plus rendered Helm charts and kustomization directories as targets.

    Charts are found among ``paths`` too (`dralint.engine.charts`); ``helm_cli`` holds the Helm
    options of the command line (``helm_namespace``, ``helm_set_string``, …)."""
    with one_walk():  # finding the charts and discovering the files list each directory once
        return _lint(paths, config, context, stdin, follow_symlinks, helm_charts, values_files, sets, helm_cli)


def _lint(paths: Sequence[str], config: Config, context: Sequence[str], stdin: tuple[str, bytes] | None,
          follow_symlinks: bool, helm_charts: Sequence[str], values_files: Sequence[str], sets: Sequence[str],
          helm_cli: dict[str, object] | None) -> Result:
    cli: dict[str, object] = dict(helm_cli or {})
    cli.setdefault("helm_values", list(values_files))
    cli.setdefault("helm_set", list(sets))
    found = chart_inputs.find_charts(paths, helm_charts, stop=config.root, skip=walk_skips(config))
    if (values_files or sets or cli.get("helm_set_string")) and not found:
        raise RenderError("-f/--values and --set apply to a chart: add --helm-chart DIR")
    kustomize_dirs = [p for p in paths if kustomization_file(p) is not None and not chart_inputs.in_chart(p, found)]
    if not found and not kustomize_dirs:
        return lint_paths(paths, config, context=context, stdin=stdin, follow_symlinks=follow_symlinks)
    from dralint.engine import fix_hints
    from dralint.inputs.render import Rendered, render_helm, render_kustomize

    # a path inside a chart is the chart's (rendered below), never a manifest of its own
    plain = [p for p in paths if p not in kustomize_dirs and not chart_inputs.in_chart(p, found)]
    rendered = Rendered()
    keep: dict[str, set[str] | None] = {}
    for target in found:
        opts = chart_inputs.options_for(target.directory, config, cli)
        try:
            r = render_helm(str(target.directory), options=opts)
        except RenderFailed as e:  # Helm's own error; anything else (refused, no renderer) is exit 2
            note = chart_inputs.render_failure(target.directory, str(e))
            rendered.notes.append(note)
            continue
        for sf in r.files:
            keep[sf.path] = target.report_only
        rendered.files += r.files
        rendered.origins.update(r.origins)
        rendered.notes += r.notes
        rendered.line_origins.update(r.line_origins)
        rendered.charts.update(r.charts)
    for d in kustomize_dirs:
        r = render_kustomize(d)
        rendered.files += r.files
        rendered.origins.update(r.origins)
        rendered.manifests |= r.manifests
        rendered.notes += r.notes
        rendered.kustomize.update(r.kustomize)
    refs, missing = discover_files(plain, config, follow_symlinks) if plain else ([], [])
    # a source file that was rendered is linted as rendered, not a second time as it stands
    rendered_sources = {str(p.resolve()) for p in rendered.origins.values()}
    inputs = [Input.later(r, target=True) for r in refs
              if _resolved(str(r.path)) not in rendered_sources and not chart_inputs.in_chart(r.path, found)]
    if stdin is not None:
        inputs.append(Input(stdin[0], None, stdin[1], None, True))
    inputs += [Input.of(sf, target=True) for sf in rendered.files + rendered.notes]
    if context:
        skip = {ref_key(r) for r in refs}
        crefs, _ = discover_files(context, config, follow_symlinks)
        seen_dirs: dict[Path, bool] = {}
        inputs += [Input.later(r) for r in crefs if ref_key(r) not in skip
                   and not chart_inputs.in_chart(r.path, found) and not _in_any_chart(r.path, seen_dirs)]
    # the caches and worker processes of a plain run apply: rendered files are keyed by their bytes
    result = lint_inputs(inputs, config, jobs=config.jobs)
    result.missing = missing
    # the changed files of a chart (pre-commit): only their findings; `keep` is by rendered path
    only = {p: k for p, k in keep.items() if k is not None}
    if only:
        result.findings = [f for f in result.findings
                           if f.path not in only or _resolved(f.path) in (only[f.path] or set())]
    remap(result, rendered)
    fix_hints.name_what_to_change(result.findings, {sf.path for sf in rendered.files} | set(rendered.origins))
    return result


def _in_any_chart(path: str | Path, memo: dict[Path, bool]) -> bool:
    """A context file inside some chart (templates are not manifests: they would only add noise)."""
    return chart_inputs.chart_above(Path(path).parent, memo=memo) is not None
