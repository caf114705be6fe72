"""The rule runner: every selected rule over the target files of one index.

Violations become findings with exact positions (through `dralint.inputs.locate`), then the file's
suppressions apply. `lint_files` is the whole run for files already parsed. Rule crashes are caught
and reported as internal errors (exit 3) rather than losing the run."""

from __future__ import annotations

import os
import sys
import traceback
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from dralint.checks.registry import CheckFn, Context, RuleImpl, load_checks
from dralint.engine import progress
from dralint.engine.config import Config
from dralint.engine.memory import quiet_gc, trees_built
from dralint.engine.suppress import ANNOTATION, Directive, Suppressor, annotation_directive, parse_directives
from dralint.inputs.index import CLAIMS, DRA, POD, Index, K8sObject, ValuesDoc
from dralint.inputs.load import Document, Limits, SourceFile
from dralint.inputs.locate import locate
from dralint.knowledge.catalog import RuleMeta, catalog
from dralint.model import Finding, JsonPath, Severity, Span, Violation

UNUSED_SUPPRESSION = "DRA006"
BLANKET_SUPPRESSION = "DRA010"


@dataclass
class InternalError:
    rule: str
    path: str
    detail: str


@dataclass
class Result:
    findings: list[Finding]
    files: list[SourceFile]
    #: the index, or how to build it: a parallel run builds the caller's copy only when it is asked for
    #: (the workers have their own; building it in the main process took CPU from them)
    index_or_builder: Index | Callable[[], Index]
    config: Config
    selected: dict[str, RuleMeta]
    missing: list[str] = field(default_factory=list)
    internal_errors: list[InternalError] = field(default_factory=list)
    suppressed: int = 0
    #: the suppressed findings themselves, each with ``extra["suppression"]`` (kind, line, justification)
    suppressions: list[Finding] = field(default_factory=list)
    #: how the run went (workers, cache hits, on-demand loads), for --verbose
    stats: dict[str, Any] = field(default_factory=dict)
    #: how many objects the target files hold, when the run knows without building the index
    known_target_objects: int | None = None

    def target_objects(self) -> int:
        if self.known_target_objects is not None:
            return self.known_target_objects
        return sum(1 for o in self.index.objects if o.target)

    @property
    def index(self) -> Index:
        if not isinstance(self.index_or_builder, Index):
            self.index_or_builder = self.index_or_builder()
        return self.index_or_builder

    def counts(self) -> dict[Severity, int]:
        out = dict.fromkeys(Severity, 0)
        for f in self.findings:
            out[f.severity] += 1
        return out


def limits_for(config: Config) -> Limits:
    return Limits(max_file_bytes=config.max_file_size)


_NEEDS = {"pod": POD, "claims": CLAIMS, "dra": DRA}


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
        self._calls: dict[tuple[str | None, int], list[tuple[CheckFn, RuleMeta, Context]]] = {}
        self.errors: list[InternalError] = []
        #: findings a suppression silenced (kept for the JSON and SARIF reports)
        self.suppressions: list[Finding] = []

    def object_rules(self, kind: str | None) -> list[tuple[RuleImpl, RuleMeta]]:
        rules = self._kind_cache.get(kind)
        if rules is None:
            rules = [(i, m) for i, m in self.by_scope["object"] if i.kinds is None or kind in i.kinds]
            self._kind_cache[kind] = rules
        return rules

    def _object_calls(self, kind: str | None, facets: int) -> list[tuple[CheckFn, RuleMeta, Context]]:
        """The checks to call on an object, by its kind and facets (a check that needs a pod spec is
        not called for a ConfigMap: with 40 rules and 20,000 objects the calls alone add up)."""
        calls = self._calls.get((kind, facets))
        if calls is None:
            calls = [
                (i.fn, m, self.contexts[m.code]) for i, m in self.object_rules(kind)
                if i.needs is None or any(facets & _NEEDS[n] for n in i.needs)
            ]
            self._calls[(kind, facets)] = calls
        return calls

    def _failed(self, meta: RuleMeta, where: str, e: Exception) -> None:
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        self.errors.append(InternalError(meta.code, where, detail))
        if "DRALINT_DEBUG" in os.environ:
            traceback.print_exc(file=sys.stderr)

    def run(self, impl: RuleImpl, meta: RuleMeta, unit: object, where: str) -> Iterator[Violation]:
        try:
            yield from impl.fn(unit, self.contexts[meta.code])
        except Exception as e:  # a rule bug must not hide the other findings
            self._failed(meta, where, e)

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
            severity=v.severity if v.severity is not None and meta.code not in self.config.severity
            else self.config.severity_for(meta),
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


    def lint_file(
        self, sf: SourceFile, objects: Sequence[K8sObject], values: Sequence[ValuesDoc]
    ) -> tuple[list[Finding], int]:
        """All rules on one target file, then its suppressions: (kept findings, suppressed count)."""
        config = self.config
        file_findings: list[Finding] = []
        annotations: dict[int, Directive] = {}
        for impl, meta in self.by_scope["file"]:
            for v in self.run(impl, meta, sf, sf.path):
                doc = _doc_at(sf, v)
                file_findings.append(self.finding(meta, v, sf, doc, (), None))
        for obj in objects:
            ann = annotation_directive(
                obj.annotations.get(ANNOTATION),
                locate(sf, obj.doc, (*obj.base_path, "metadata", "annotations", ANNOTATION), "value"),
            ) if ANNOTATION in obj.annotations else None
            for fn, meta, ctx in self._object_calls(obj.kind, obj.facets):
                # called directly (not through `run`): this loop runs rules x objects times
                try:
                    for v in fn(obj, ctx):
                        f = self.finding(meta, v, sf, obj.doc, obj.base_path, obj)
                        if ann is not None:
                            annotations[id(f)] = ann
                        file_findings.append(f)
                except Exception as e:  # a rule bug must not hide the other findings
                    self._failed(meta, sf.path, e)
            if ann is not None:
                annotations[-id(obj)] = ann
        for vd in values:
            for impl, meta in self.by_scope["values"]:
                for v in self.run(impl, meta, vd, sf.path):
                    file_findings.append(self.finding(meta, v, sf, vd.doc, (), None))

        per_file = config.file_ignores(sf.path)
        sup = Suppressor(parse_directives(sf))
        kept: list[Finding] = []
        suppressed = 0
        for f in file_findings:
            if any(f.rule == c or f.rule.startswith(c) for c in per_file):
                continue
            if sup.suppressed(f, annotations.get(id(f))):
                suppressed += 1
                self.suppressions.append(f)
                continue
            kept.append(f)
        object_anns = [a for k, a in annotations.items() if k < 0]
        if UNUSED_SUPPRESSION in self.selected:
            kept.extend(_unused(self, sf, sup, object_anns, per_file))
        if BLANKET_SUPPRESSION in self.selected:
            kept.extend(_blanket(self, sf, sup, object_anns, per_file))
        return kept, suppressed

    def units_by_file(self) -> tuple[dict[int, list[K8sObject]], dict[int, list[ValuesDoc]]]:
        """Target objects and values documents of the index, by ``id()`` of their file."""
        objects_by_file: dict[int, list[K8sObject]] = defaultdict(list)
        for obj in self.index.objects:
            if obj.target:
                objects_by_file[id(obj.file)].append(obj)
        values_by_file: dict[int, list[ValuesDoc]] = defaultdict(list)
        for vd in self.index.values:
            if vd.target:
                values_by_file[id(vd.file)].append(vd)
        return objects_by_file, values_by_file

    def lint_targets(self, targets: Iterable[SourceFile]) -> tuple[list[Finding], int]:
        """Every target file of the index (in the given order): findings (unsorted), suppressed count."""
        objects_by_file, values_by_file = self.units_by_file()
        findings: list[Finding] = []
        suppressed = 0
        for sf in targets:
            kept, n = self.lint_file(sf, objects_by_file.get(id(sf), ()), values_by_file.get(id(sf), ()))
            findings.extend(kept)
            suppressed += n
            progress.advance()
        return findings, suppressed


def lint_files(targets: Iterable[SourceFile], context_files: Iterable[SourceFile], config: Config) -> Result:
    """Lint parsed files: findings for ``targets``; ``context_files`` only feed the index."""
    with quiet_gc():
        index = Index()
        targets = list(targets)
        for sf in targets:
            index.add_file(sf, target=True)
        for sf in context_files:
            index.add_file(sf, target=False)
        runner = _Runner(config, index)
        trees_built(sum(len(sf.text) for sf in index.files))
        findings, suppressed = runner.lint_targets(targets)
    findings.sort(key=Finding.sort_key)
    return Result(
        findings=findings,
        files=targets,
        index_or_builder=index,
        config=config,
        selected=runner.selected,
        internal_errors=runner.errors,
        suppressed=suppressed,
        suppressions=sorted(runner.suppressions, key=Finding.sort_key),
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
                msg = f"suppression names an unknown rule `{code}`" + _did_you_mean(code)
            elif code != "ALL" and not any(k == code or k.startswith(code) for k in runner.selected):
                continue  # the rule is not enabled in this run: nothing to judge
            else:
                where = {"file": "in this file", "line": f"on line {d.target_line}", "annotation": "on this object"}
                what = "blanket suppression" if code == "ALL" else f"`{code}`"
                msg = f"unused suppression: {what} suppressed nothing {where[d.kind]}"
            yield Finding(
                rule=meta.code, name=meta.name, severity=runner.config.severity_for(meta), message=msg,
                path=sf.path, span=d.span,
            )


def _blanket(
    runner: _Runner, sf: SourceFile, sup: Suppressor, anns: list[Directive], per_file: set[str]
) -> Iterator[Finding]:
    """DRA010: directives without codes. Like DRA006 this runs after suppression, so a blanket
    directive cannot silence the finding about itself; `disable-file=DRA010` and config can."""
    meta = runner.selected[BLANKET_SUPPRESSION]
    if any(c == BLANKET_SUPPRESSION or BLANKET_SUPPRESSION.startswith(c) for c in per_file):
        return
    file_off = {c for d in sup.directives if d.kind == "file" and not d.blanket for c in d.codes}
    if any(c == BLANKET_SUPPRESSION or BLANKET_SUPPRESSION.startswith(c) for c in file_off):
        return
    where = {"file": "every rule in this file", "line": "every rule on line {n}",
             "annotation": "every rule on this object"}
    for d in [*sup.directives, *anns]:
        if not d.blanket:
            continue
        named = ",".join(sorted(d.hits))
        hint = f"name the rules it is meant for (here: `{named}`)" if named else "name the rules it is meant for"
        msg = (f"blanket suppression silences {where[d.kind].format(n=d.target_line)}, "
               f"including problems nobody has seen yet; {hint}")
        yield Finding(
            rule=meta.code, name=meta.name, severity=runner.config.severity_for(meta), message=msg,
            path=sf.path, span=d.span,
        )


def _did_you_mean(word: str) -> str:
    """The closest rule code or name to a misspelt one in a suppression."""
    from dralint.suggest import closest

    cat = catalog()
    options = [*cat, *(m.name for m in cat.values())]
    near = closest(word if word.isupper() else word.lower(), options)
    return f"; did you mean `{near}`?" if near else ""
