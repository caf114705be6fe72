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

from dralint.engine.config import Config
from dralint.engine.pipeline import lint_paths, load_paths
from dralint.engine.runner import Result, limits_for, lint_files
from dralint.inputs.files import discover, read_file
from dralint.inputs.load import SourceFile, load_bytes
from dralint.inputs.locate import locate
from dralint.inputs.render import Rendered, RenderError, kustomization_file, render_helm, render_kustomize
from dralint.model import Finding, Span

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


def remap(result: Result, rendered: Rendered) -> None:
    by_path = {sf.path: sf for sf in rendered.files}
    lines: dict[str, list[str]] = {}
    sources: dict[str, SourceFile] = {}
    for f in result.findings:
        sf = by_path.get(f.path)
        if sf is None:
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
) -> Result:
    """`lint_paths`, plus rendered Helm charts and kustomization directories as targets."""
    if (values_files or sets) and not helm_charts:
        raise RenderError("-f/--values and --set apply to a chart: add --helm-chart DIR")
    kustomize_dirs = [p for p in paths if kustomization_file(p) is not None]
    if not helm_charts and not kustomize_dirs:
        return lint_paths(paths, config, context=context, stdin=stdin, follow_symlinks=follow_symlinks)
    plain = [p for p in paths if p not in kustomize_dirs]
    rendered = Rendered()
    for chart in helm_charts:
        r = render_helm(chart, values_files, sets, kube_version=config.profile.kubernetes_version)
        rendered.files += r.files
        rendered.origins.update(r.origins)
        rendered.notes += r.notes
    for d in kustomize_dirs:
        r = render_kustomize(d)
        rendered.files += r.files
        rendered.origins.update(r.origins)
        rendered.manifests |= r.manifests
        rendered.notes += r.notes
    targets, missing = load_paths(plain, config, follow_symlinks) if plain else ([], [])
    # a source file that was rendered is linted as rendered, not a second time as it stands
    rendered_sources = {str(p.resolve()) for p in rendered.origins.values()}
    targets = [t for t in targets if _resolved(t.path) not in rendered_sources]
    if stdin is not None:
        targets.append(load_bytes(stdin[0], stdin[1], limits_for(config)))
    targets += rendered.files + rendered.notes
    context_files: list[SourceFile] = []
    if context:
        skip = {str(Path(r.path).resolve()) for r in discover(plain, config.exclude, config.root,
                                                              respect_gitignore=config.respect_gitignore)[0]}
        refs, _ = discover(context, config.exclude, config.root, follow_symlinks,
                           respect_gitignore=config.respect_gitignore)
        limits = limits_for(config)
        context_files = [read_file(r, limits) for r in refs if str(Path(r.path).resolve()) not in skip]
    result = lint_files(targets, context_files, config)
    result.missing = missing
    remap(result, rendered)
    return result
