"""The fix loop: lint, apply a pass of fixes, lint again, until nothing more applies; then the gates.

Per pass, fixes at or above the required applicability are applied document by document; a fix
whose paths overlap a fix already accepted in that pass waits for the next pass (ruff's
non-overlap rule). The engine re-lints between passes, at most `MAX_PASSES` times. A file is then
written only if every gate holds: it re-parses without new errors, every document no fix touched
is byte-identical, object identities (kind, namespace, name, API group) are unchanged, no fixed
finding comes back with the same fix, and the loop converged - the last lint found nothing more to
apply, which is the "second run is a no-op" check. Otherwise nothing is written and the failure
names the rules involved. Helm-rendered documents (`# Source:`) are never edited: the chart
template needs the change. Writes are atomic: a temporary file in the same directory, the mode of
the original, then ``os.replace``; only real files inside the roots are written (`dralint.fix.write`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dralint.engine import progress
from dralint.engine.config import Config
from dralint.engine.memory import quiet_gc, trees_built
from dralint.engine.pipeline import discover_files, load_paths
from dralint.engine.runner import Result, limits_for, lint_files
from dralint.fix.edits import fmt_path
from dralint.fix.gates import verify
from dralint.fix.json_splice import remap_items
from dralint.fix.splice import PlannedFix, apply_pass
from dralint.inputs.files import input_roots, read_file
from dralint.inputs.load import SourceFile, load_bytes
from dralint.inputs.roots import Roots
from dralint.model import Applicability, Finding

MAX_PASSES = 10



@dataclass
class GateFailure:
    rules: list[str]
    reason: str


@dataclass
class FileOutcome:
    path: str
    before: bytes
    after: bytes
    applied: Counter[str] = field(default_factory=Counter)
    failures: list[GateFailure] = field(default_factory=list)
    #: why some fixes were not applied (Helm templates, unsafe, layout)
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return not self.failures and self.after != self.before

    def summary(self) -> str:
        parts = [f"{c}×{n}" if n > 1 else c for c, n in sorted(self.applied.items())]
        return f"Fixed {self.path} ({', '.join(parts)})"


@dataclass
class FixRun:
    files: list[FileOutcome]
    result: Result
    passes: int
    #: display path -> the real file to write (a link inside the roots is written at its target)
    write_to: dict[str, str] = field(default_factory=dict)
    #: where writes may go (None: text given in memory, no roots)
    roots: Roots | None = None

    @property
    def failed(self) -> bool:
        return any(f.failures for f in self.files)

    def changed(self) -> list[FileOutcome]:
        return [f for f in self.files if f.changed]


@dataclass
class _State:
    original: SourceFile
    current: SourceFile
    origin: list[int | None]
    touched: set[int] = field(default_factory=set)
    applied: Counter[str] = field(default_factory=Counter)
    #: per document of `current`: `items` positions of the objects fixes inserted into a JSON List
    new_items: dict[int, set[int]] = field(default_factory=dict)
    history: set[tuple[Any, ...]] = field(default_factory=set)
    failures: list[GateFailure] = field(default_factory=list)
    notes: dict[str, None] = field(default_factory=dict)


def _encode(sf: SourceFile, text: str) -> bytes:
    return (b"\xef\xbb\xbf" if sf.bom else b"") + text.encode("utf-8")


def plan_from_findings(findings: Iterable[Finding], required: Applicability,
                       notes: Callable[[str, str], None] | None = None) -> dict[str, list[PlannedFix]]:
    """Fixes to try, per file path, from lint findings (Helm-rendered documents never)."""
    plans: dict[str, list[PlannedFix]] = defaultdict(list)
    seen: set[tuple[Any, ...]] = set()
    for f in findings:
        fix = f.fix
        if fix is None or fix.applicability < required or not fix.edits:
            continue
        if f.source:
            if notes is not None:
                notes(f.path, f"{f.rule}: `{f.source}` (Helm chart template) needs this change: {fix.title}; "
                              "rendered output is never rewritten")
            continue
        if f.doc_index < 0:
            continue
        label = f.object.label() if f.object is not None else ""
        pf = PlannedFix(f.rule, fix, f.doc_index, f.base_path, label, f.obj_path)
        k = (f.path, f.doc_index, f.base_path, repr(fix.edits))
        if k in seen:
            continue
        seen.add(k)
        plans[f.path].append(pf)
    return plans


def fix_files(targets: Sequence[SourceFile], context: Sequence[SourceFile], config: Config,
              unsafe: bool = False, max_passes: int = MAX_PASSES) -> FixRun:
    """Lint, fix, re-lint … until nothing applicable remains; gate each file (nothing is written)."""
    required = Applicability.UNSAFE if unsafe else Applicability.SAFE
    states = {sf.path: _State(sf, sf, list(range(len(sf.documents)))) for sf in targets}
    order = [sf.path for sf in targets]
    frozen: set[str] = set()
    limits = limits_for(config)

    def current() -> list[SourceFile]:
        return [states[p].current for p in order]

    def note(path: str, text: str) -> None:
        if path in states:
            states[path].notes[text] = None

    result = lint_files(current(), context, config)
    passes = 0
    converged = False
    while True:
        plans = plan_from_findings(result.findings, required, note)
        plans = {p: v for p, v in plans.items() if p not in frozen and p in states}
        if not plans:
            converged = True
            break
        if passes >= max_passes:
            converged = not any(apply_pass(states[p].current, v, required).applied for p, v in plans.items())
            break
        passes += 1
        changed = False
        for path, planned in plans.items():
            st = states[path]
            again = [pf for pf in planned if _history_key(st, pf) in st.history and pf.fix.applicability >= required]
            if again:
                _fail(st, frozen, [pf.rule for pf in again],
                      f"the fix \"{again[0].fix.title}\" was applied but {again[0].rule} reports it again "
                      f"({again[0].label or 'document'} at `{fmt_path(again[0].obj_path)}`)")
                continue
            pr = apply_pass(st.current, planned, required)
            for sk in pr.needs_unsafe:
                note(path, f"{sk.fix.rule}: \"{sk.fix.fix.title}\" needs --unsafe-fixes: {sk.reason}")
            for sk in pr.skipped:
                note(path, f"{sk.fix.rule}: \"{sk.fix.fix.title}\" not applied: {sk.reason}")
            if pr.failures:
                sk = pr.failures[0]
                _fail(st, frozen, sorted({x.fix.rule for x in pr.failures}),
                      f"the fix \"{sk.fix.fix.title}\" cannot be applied: {sk.reason}")
                continue
            if not pr.applied:
                continue
            for pf in pr.applied:
                st.applied[pf.rule] += 1
                st.history.add(_history_key(st, pf))
            new_sf = load_bytes(path, _encode(st.current, pr.text), limits)
            origin: list[int | None] = []
            for k, o in enumerate(st.origin):
                origin.append(o)
                origin.extend([None] * pr.inserted.get(k, 0))
            st.touched |= {o for k in pr.touched if (o := st.origin[k]) is not None}
            for k, added in pr.new_items.items():  # JSON Lists are one document: indices stay
                st.new_items[k] = remap_items(st.new_items.get(k, set()), added)
            st.origin = origin
            st.current = new_sf
            changed = True
        result = lint_files(current(), context, config)
        if not changed:
            converged = True
            break
    if not converged:
        for path in plans:
            if path in states and path not in frozen:
                rules = sorted({pf.rule for pf in plans[path]})
                _fail(states[path], frozen, rules,
                      f"fixes did not converge after {max_passes} passes (still fixable: {', '.join(rules)})")
    reverted = False
    for path in order:
        st = states[path]
        if path in frozen:
            reverted = reverted or st.current is not st.original
            st.current = st.original
            continue
        if st.current is st.original:
            continue
        why = verify(st.original, st.current, st.origin, st.touched, st.new_items)
        if why:
            _fail(st, frozen, sorted(st.applied), why)
            st.current = st.original
            reverted = True
    if reverted:
        result = lint_files(current(), context, config)
    outcomes = []
    for path in order:
        st = states[path]
        after = st.current.raw if st.current is not st.original else st.original.raw
        outcomes.append(FileOutcome(path, st.original.raw, after, st.applied if path not in frozen else Counter(),
                                    st.failures, list(st.notes)))
    return FixRun(outcomes, result, passes)


def _history_key(st: _State, pf: PlannedFix) -> tuple[Any, ...]:
    """A fix, identified by the document it came from in the original file (indexes shift as documents are added)."""
    origin = st.origin[pf.doc_index] if 0 <= pf.doc_index < len(st.origin) else None
    return (origin if origin is not None else ("new", pf.doc_index), tuple(pf.base_path), *pf.key())


def _fail(st: _State, frozen: set[str], rules: list[str], reason: str) -> None:
    st.failures.append(GateFailure(rules, reason))
    frozen.add(st.original.path)
    st.current = st.original


def fix_paths(paths: Sequence[str], config: Config, context: Sequence[str] = (),
              stdin: tuple[str, bytes] | None = None, unsafe: bool = False,
              follow_symlinks: bool = False) -> tuple[FixRun, list[str]]:
    """Load files like `dralint.engine.pipeline.lint_paths` and fix them; returns the run and missing paths."""
    # the loaded trees live for the whole run: out of the garbage collector's sight, as `check` keeps them
    with quiet_gc():
        loaded = load_run(paths, config, context, stdin, follow_symlinks)
        progress.start(len(loaded.targets))  # the first lint pass over every file is most of the run
        run = fix_files(loaded.targets, loaded.context, config, unsafe)
    run.write_to, run.roots = loaded.write_to, loaded.roots
    return run, loaded.missing


@dataclass
class LoadedRun:
    """The files a rewriting command (fix, migrate) works on, as `load_run` read them."""

    targets: list[SourceFile]
    #: ``--context`` files that are not targets themselves
    context: list[SourceFile]
    missing: list[str]
    write_to: dict[str, str]
    roots: Roots


def load_run(paths: Sequence[str], config: Config, context: Sequence[str] = (),
             stdin: tuple[str, bytes] | None = None, follow_symlinks: bool = False) -> LoadedRun:
    """Targets (stdin last) and context files; call it with the garbage collector quiet."""
    targets, missing, write_to, roots = load_targets(paths, config, follow_symlinks)
    if stdin is not None:
        targets.append(load_bytes(stdin[0], stdin[1], limits_for(config)))
    ctx: list[SourceFile] = []
    if context:
        names = {str(Path(sf.path).resolve()) for sf in targets}
        ctx_files, _ = load_paths(context, config, follow_symlinks)
        ctx = [sf for sf in ctx_files if str(Path(sf.path).resolve()) not in names]
    trees_built(sum(len(sf.text) for sf in (*targets, *ctx)))
    return LoadedRun(targets, ctx, missing, write_to, roots)


def load_targets(paths: Sequence[str], config: Config, follow_symlinks: bool = False
                 ) -> tuple[list[SourceFile], list[str], dict[str, str], Roots]:
    """The files to rewrite, read; missing paths; the real file behind each display path; the roots.

    The roots do not follow symlinks even with ``follow_symlinks``: a file reached through a link
    out of them can be read and fixed in memory (``--diff``), but it is never written.
    """
    refs, missing = discover_files(paths, config, follow_symlinks)
    limits = limits_for(config)
    write_to = {r.display: r.key for r in refs if r.key}
    return [read_file(r, limits) for r in refs], missing, write_to, input_roots(paths, config.root)


def fix_source(text: str | bytes, config: Config, unsafe: bool = False, path: str = "-") -> FixRun:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return fix_files([load_bytes(path, raw, limits_for(config))], [], config, unsafe)
