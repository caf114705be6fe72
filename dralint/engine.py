"""load → index → check → suppress: the linting pipeline shared by every command.

`lint_files` runs the selected rules over the target files with every file (targets and context)
in one index, turns violations into findings with exact positions, then applies suppressions.
Rule crashes are caught and reported as internal errors (exit 3) rather than losing the run.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dralint.catalog import RuleMeta, catalog
from dralint.config import Config
from dralint.files import discover, read_file
from dralint.index import Index, K8sObject, ValuesDoc
from dralint.load import Document, Limits, SourceFile, load_bytes
from dralint.locate import locate
from dralint.model import Finding, JsonPath, Severity, Span, Violation
from dralint.registry import Context, RuleImpl, load_checks
from dralint.suppress import ANNOTATION, Directive, Suppressor, annotation_directive, parse_directives

UNUSED_SUPPRESSION = "DRA006"


@dataclass
class InternalError:
    rule: str
    path: str
    detail: str


@dataclass
class Result:
    findings: list[Finding]
    files: list[SourceFile]
    index: Index
    config: Config
    selected: dict[str, RuleMeta]
    missing: list[str] = field(default_factory=list)
    internal_errors: list[InternalError] = field(default_factory=list)
    suppressed: int = 0

    def counts(self) -> dict[Severity, int]:
        out = dict.fromkeys(Severity, 0)
        for f in self.findings:
            out[f.severity] += 1
        return out


def limits_for(config: Config) -> Limits:
    return Limits(max_file_bytes=config.max_file_size)


def load_paths(
    paths: Sequence[str], config: Config, follow_symlinks: bool = False
) -> tuple[list[SourceFile], list[str]]:
    refs, missing = discover(paths, config.exclude, config.root, follow_symlinks)
    limits = limits_for(config)
    return [read_file(r, limits) for r in refs], missing


def lint_paths(
    paths: Sequence[str],
    config: Config,
    context: Sequence[str] = (),
    stdin: tuple[str, bytes] | None = None,
    follow_symlinks: bool = False,
) -> Result:
    """Lint files and directories (plus stdin as ``(display name, bytes)``)."""
    targets, missing = load_paths(paths, config, follow_symlinks)
    if stdin is not None:
        targets.append(load_bytes(stdin[0], stdin[1], limits_for(config)))
    context_files: list[SourceFile] = []
    if context:
        target_keys = {_key(p) for p in paths}
        refs, _ = discover(context, config.exclude, config.root, follow_symlinks)
        tkeys = {str(Path(r.path).resolve()) for r in discover(paths, config.exclude, config.root)[0]}
        tkeys |= target_keys
        limits = limits_for(config)
        context_files = [read_file(r, limits) for r in refs if str(Path(r.path).resolve()) not in tkeys]
    result = lint_files(targets, context_files, config)
    result.missing = missing
    return result


def _key(p: str) -> str:
    try:
        return str(Path(p).resolve())
    except OSError:
        return p


class _Runner:
    def __init__(self, config: Config, index: Index) -> None:
        self.config = config
        self.index = index
        self.selected = config.selected()
        registry = load_checks()
        self.impls: list[tuple[RuleImpl, RuleMeta]] = [
            (registry[c], m) for c, m in self.selected.items() if c in registry
        ]
        self.contexts = {
            m.code: Context(index=index, profile=config.profile, options=config.options_for(m)) for _, m in self.impls
        }
        shared: dict[object, object] = {}
        for ctx in self.contexts.values():
            ctx.cache = shared
        self.by_scope: dict[str, list[tuple[RuleImpl, RuleMeta]]] = defaultdict(list)
        for impl, meta in self.impls:
            self.by_scope[impl.scope].append((impl, meta))
        self._kind_cache: dict[str | None, list[tuple[RuleImpl, RuleMeta]]] = {}
        self.errors: list[InternalError] = []

    def object_rules(self, kind: str | None) -> list[tuple[RuleImpl, RuleMeta]]:
        rules = self._kind_cache.get(kind)
        if rules is None:
            rules = [(i, m) for i, m in self.by_scope["object"] if i.kinds is None or kind in i.kinds]
            self._kind_cache[kind] = rules
        return rules

    def run(self, impl: RuleImpl, meta: RuleMeta, unit: object, where: str) -> Iterator[Violation]:
        try:
            yield from impl.fn(unit, self.contexts[meta.code])
        except Exception as e:  # a rule bug must not hide the other findings
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            self.errors.append(InternalError(meta.code, where, detail))
            if "DRALINT_DEBUG" in os.environ:
                traceback.print_exc(file=sys.stderr)

    def finding(
        self,
        meta: RuleMeta,
        v: Violation,
        sf: SourceFile,
        doc: Document | None,
        base: JsonPath,
        obj: K8sObject | None,
    ) -> Finding:
        if v.span is not None:
            span = v.span
        elif doc is not None:
            span = locate(sf, doc, (*base, *v.path), v.on)
        else:
            span = Span(1, 1, 1, 1)
        return Finding(
            rule=meta.code,
            name=meta.name,
            severity=self.config.severity_for(meta),
            message=v.message,
            path=sf.path,
            span=span,
            object=obj.ref if obj is not None else None,
            source=doc.source if doc is not None else None,
            fix=v.fix,
            doc_index=doc.index if doc is not None else -1,
            base_path=base,
            obj_path=v.path,
        )


def lint_files(targets: Iterable[SourceFile], context_files: Iterable[SourceFile], config: Config) -> Result:
    index = Index()
    targets = list(targets)
    for sf in targets:
        index.add_file(sf, target=True)
    for sf in context_files:
        index.add_file(sf, target=False)
    runner = _Runner(config, index)

    objects_by_file: dict[int, list[K8sObject]] = defaultdict(list)
    for obj in index.objects:
        if obj.target:
            objects_by_file[id(obj.file)].append(obj)
    values_by_file: dict[int, list[ValuesDoc]] = defaultdict(list)
    for vd in index.values:
        if vd.target:
            values_by_file[id(vd.file)].append(vd)

    findings: list[Finding] = []
    suppressed = 0
    for sf in targets:
        file_findings: list[Finding] = []
        annotations: dict[int, Directive] = {}
        for impl, meta in runner.by_scope["file"]:
            for v in runner.run(impl, meta, sf, sf.path):
                doc = _doc_at(sf, v)
                file_findings.append(runner.finding(meta, v, sf, doc, (), None))
        for obj in objects_by_file.get(id(sf), ()):
            ann = annotation_directive(
                obj.annotations.get(ANNOTATION),
                locate(sf, obj.doc, (*obj.base_path, "metadata", "annotations", ANNOTATION), "value"),
            ) if ANNOTATION in obj.annotations else None
            for impl, meta in runner.object_rules(obj.kind):
                for v in runner.run(impl, meta, obj, sf.path):
                    f = runner.finding(meta, v, sf, obj.doc, obj.base_path, obj)
                    if ann is not None:
                        annotations[id(f)] = ann
                    file_findings.append(f)
            if ann is not None:
                annotations[-id(obj)] = ann
        for vd in values_by_file.get(id(sf), ()):
            for impl, meta in runner.by_scope["values"]:
                for v in runner.run(impl, meta, vd, sf.path):
                    file_findings.append(runner.finding(meta, v, sf, vd.doc, (), None))

        per_file = config.file_ignores(sf.path)
        sup = Suppressor(parse_directives(sf))
        kept: list[Finding] = []
        for f in file_findings:
            if any(f.rule == c or f.rule.startswith(c) for c in per_file):
                continue
            if sup.suppressed(f, annotations.get(id(f))):
                suppressed += 1
                continue
            kept.append(f)
        if UNUSED_SUPPRESSION in runner.selected:
            kept.extend(_unused(runner, sf, sup, [a for k, a in annotations.items() if k < 0], per_file))
        findings.extend(kept)
    findings.sort(key=Finding.sort_key)
    return Result(
        findings=findings,
        files=targets,
        index=index,
        config=config,
        selected=runner.selected,
        internal_errors=runner.errors,
        suppressed=suppressed,
    )


def _doc_at(sf: SourceFile, v: Violation) -> Document | None:
    if v.span is None:
        return None
    for d in sf.documents:
        sl = sf.line_col(d.start)[0]
        el = sf.line_col(d.end)[0]
        if sl <= v.span.line <= el:
            return d
    return None


def _unused(
    runner: _Runner, sf: SourceFile, sup: Suppressor, anns: list[Directive], per_file: set[str]
) -> Iterator[Finding]:
    meta = runner.selected[UNUSED_SUPPRESSION]
    if any(c == UNUSED_SUPPRESSION or UNUSED_SUPPRESSION.startswith(c) for c in per_file):
        return
    cat = catalog()
    file_off = {c for d in sup.directives if d.kind == "file" for c in d.codes}
    if UNUSED_SUPPRESSION in file_off or "ALL" in file_off:
        return
    for d in [*sup.directives, *anns]:
        for code in d.codes:
            if code in d.used:
                continue
            if code != "ALL" and not any(k == code or k.startswith(code) for k in cat):
                msg = f"suppression names an unknown rule `{code}`"
            elif code != "ALL" and not any(k == code or k.startswith(code) for k in runner.selected):
                continue  # the rule is not enabled in this run: nothing to judge
            else:
                where = {"file": "in this file", "line": f"on line {d.target_line}", "annotation": "on this object"}
                msg = f"unused suppression: `{code}` suppressed nothing {where[d.kind]}"
            yield Finding(
                rule=meta.code, name=meta.name, severity=runner.config.severity_for(meta), message=msg,
                path=sf.path, span=d.span,
            )
