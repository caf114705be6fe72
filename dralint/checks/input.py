"""DRA0xx: what the loader found (syntax, templates, duplicates, limits) and non-objects."""

from __future__ import annotations

from collections.abc import Iterator

from dralint.checks.registry import Context, rule
from dralint.inputs.load import SourceFile
from dralint.inputs.locate import locate
from dralint.model import Span, Violation


def _problems(sf: SourceFile, code: str) -> Iterator[Violation]:
    for p in sf.problems:
        if p.code == code:
            yield Violation(p.message, span=p.span)


@rule("DRA001", scope="file")
def yaml_syntax_error(sf: SourceFile, ctx: Context) -> Iterator[Violation]:
    yield from _problems(sf, "DRA001")


@rule("DRA002", scope="file")
def not_a_kubernetes_object(sf: SourceFile, ctx: Context) -> Iterator[Violation]:
    if not sf.documents and not sf.problems:
        yield Violation("file holds no YAML documents (empty or only comments)", span=Span(1, 1, 1, 1))
        return
    for vd in ctx.index.values_in(sf):
        data = vd.data
        if isinstance(data, dict):
            missing = [k for k in ("apiVersion", "kind") if not isinstance(data.get(k), str)]
            if len(missing) == 1 and isinstance(data.get("metadata"), dict):
                continue  # an object missing half its type: DRA008's error
            msg = f"document is not a Kubernetes object (no {' or '.join(missing)}); it is not checked"
        else:
            msg = f"document is a {type(data).__name__}, not a Kubernetes object; it is not checked"
        yield Violation(msg, span=locate(sf, vd.doc, ()))


@rule("DRA003", scope="file")
def unrendered_template(sf: SourceFile, ctx: Context) -> Iterator[Violation]:
    yield from _problems(sf, "DRA003")


@rule("DRA004", scope="file")
def duplicate_key(sf: SourceFile, ctx: Context) -> Iterator[Violation]:
    for doc in sf.documents:
        for key, start, end, first in doc.duplicates:
            first_line, _ = sf.line_col(first)
            yield Violation(
                f"duplicate key `{key}` (first defined on line {first_line}); kubectl rejects this, "
                "other tools silently keep the last value",
                span=sf.span(start, end),
            )


@rule("DRA005", scope="file")
def input_limit(sf: SourceFile, ctx: Context) -> Iterator[Violation]:
    yield from _problems(sf, "DRA005")


@rule("DRA006", scope="file")
def unused_suppression(sf: SourceFile, ctx: Context) -> Iterator[Violation]:
    # Produced by the engine after all other rules ran (it needs their results); nothing here.
    return iter(())


@rule("DRA010", scope="file")
def blanket_suppression(sf: SourceFile, ctx: Context) -> Iterator[Violation]:
    # Produced by the engine with DRA006 (it needs to know what each suppression silenced); nothing here.
    return iter(())


@rule("DRA007", scope="file")
def symlink_outside_roots(sf: SourceFile, ctx: Context) -> Iterator[Violation]:
    # dralint.files marks such a link when it lists the inputs, and never opens it
    yield from _problems(sf, "DRA007")


@rule("DRA009", scope="file")
def chart_render_failed(sf: SourceFile, ctx: Context) -> Iterator[Violation]:
    # dralint.engine.charts puts Helm's message at the chart's Chart.yaml when the chart does not render
    yield from _problems(sf, "DRA009")
