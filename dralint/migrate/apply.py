"""Applying the planned fixes file by file (in worker processes for large inputs), each changed file
re-checked before it counts: the migrated workloads have no legacy findings left and the documents
this run inserted no errors."""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from dralint.engine.config import Config, usable_cores
from dralint.engine.runner import limits_for, lint_files
from dralint.fix.derive import derive_result
from dralint.fix.gates import verify
from dralint.fix.loop import FileOutcome, GateFailure
from dralint.fix.splice import PlannedFix, apply_pass
from dralint.inputs.load import SourceFile, load_bytes
from dralint.migrate.records import WorkloadReport
from dralint.model import Applicability

LEGACY_RULES = ("DRA201", "DRA202", "DRA203")


# ----------------------------------------------------------------------------------------------
# applying the plans, file by file (in worker processes for large inputs)


@dataclass
class _Job:
    targets: list[SourceFile]
    plans: list[list[PlannedFix]]
    config: Config
    keep_legacy: bool


@dataclass
class _Done:
    """What happened to one file; plain data, so it can come back from a worker process."""

    index: int
    after: bytes | None = None
    #: what a worker sends back instead of ``after``: the changes to the input's text, in order, as
    #: (start, end, new text) (see `_apply_in_worker`)
    changes: list[tuple[int, int, str]] | None = None
    failure: str | None = None
    #: planned-fix position -> why it was not applied
    skipped: dict[int, str] = field(default_factory=dict)
    notes: dict[int, list[str]] = field(default_factory=dict)
    applied: int = 0


#: from this many planned workloads on, `migrate` applies them in worker processes
PARALLEL_MIN_WORKLOADS = 400


def _workers(config: Config, job: _Job, todo: list[int]) -> int:
    cores = usable_cores()  # also caps a `jobs` set on a Config directly (API callers)
    if config.jobs is not None and config.jobs > 0:
        return max(1, min(config.jobs, len(todo), cores))
    if sum(len(job.plans[k]) for k in todo) < PARALLEL_MIN_WORKLOADS or len(todo) < 4:
        return 1
    return max(1, min(cores, len(todo) // 2))


_JOB: _Job | None = None


def _run(job: _Job, todo: list[int], workers: int) -> Iterator[_Done]:
    global _JOB
    if workers <= 1 or "fork" not in mp.get_all_start_methods():
        for k in todo:
            yield _apply_file(job, k)
        return
    _JOB = job  # the forked workers inherit the loaded files and the plans without pickling them
    try:
        with mp.get_context("fork").Pool(workers) as pool:
            for done in pool.imap_unordered(_apply_in_worker, todo, chunksize=max(1, len(todo) // (workers * 8))):
                yield _expanded(job, done)
    finally:
        _JOB = None


def _apply_in_worker(k: int) -> _Done:
    """`_apply_file` in a worker: a changed file comes back as its changes, not as the whole file (the
    bench corpus's results were 18 MB to pickle, send and unpickle for 3 MB of changed text)."""
    assert _JOB is not None
    done = _apply_file(_JOB, k, compact=True)
    if done.changes is not None:
        done.after = None
    return done


def _expanded(job: _Job, done: _Done) -> _Done:
    """``done`` with the whole file rebuilt from the changes a worker sent (and the input's text)."""
    if done.changes is not None:
        sf = job.targets[done.index]
        pieces: list[str] = []
        pos = 0
        for s, e, new in done.changes:
            pieces += (sf.text[pos:s], new)
            pos = e
        pieces.append(sf.text[pos:])
        done.after = (b"\xef\xbb\xbf" if sf.bom else b"") + "".join(pieces).encode("utf-8")
        done.changes = None
    return done


def _apply_file(job: _Job, k: int, compact: bool = False) -> _Done:
    """Apply one file's plans, gate the result and re-check it; the original file object is not changed."""
    sf, planned = job.targets[k], job.plans[k]
    pos = {id(pf): i for i, pf in enumerate(planned)}
    done = _Done(k)
    pr = apply_pass(sf, planned, Applicability.UNSAFE)
    for sk in [*pr.skipped, *pr.failures]:
        done.skipped[pos[id(sk.fix)]] = f"the document cannot be edited safely: {sk.reason}"
    for pf in pr.deferred:  # two workloads of one `kind: List` document touching the same place
        done.skipped[pos[id(pf)]] = "another workload's change in this document overlaps; run migrate again"
    if pr.failures:
        done.failure = pr.failures[0].reason
        return done
    if not pr.applied:
        return done
    for pf in pr.applied:
        if id(pf) in pr.notes:
            done.notes[pos[id(pf)]] = pr.notes[id(pf)]
    limits = limits_for(job.config)
    # the result is parsed only where it changed; what the pass cannot vouch for is parsed whole
    derived = derive_result(sf, pr, limits)
    if derived is not None:
        new, regions = derived.file, derived.regions
    else:
        new = load_bytes(sf.path, (b"\xef\xbb\xbf" if sf.bom else b"") + pr.text.encode("utf-8"), limits)
        regions = None
    origin: list[int | None] = []
    for d in range(len(sf.documents)):
        origin.append(d)
        origin.extend([None] * pr.inserted.get(d, 0))
    why = verify(sf, new, origin, pr.touched, pr.new_items, regions, pr.regions or None) or \
        _recheck(new, job, {pf.label for pf in pr.applied}, origin, pr.new_items, pr.touched)
    if why:
        done.failure = why
        return done
    done.after = new.raw  # the result's text (pr.text) encoded, after the input's BOM if it had one
    done.applied = len(pr.applied)
    if compact and pr.changes:  # a JSON List has none: its items are edited in place
        done.changes = [(s, e, pr.text[ns:ne]) for s, e, ns, ne in pr.changes]
    return done


def _recheck(new: SourceFile, job: _Job, migrated: set[str], origin: Sequence[int | None],
             new_items: dict[int, set[int]] | None = None, touched: set[int] | frozenset[int] = frozenset(),
             ) -> str | None:
    """Migrated workloads must have no legacy findings left, and the new objects no errors.

    Only the documents this run inserted (``origin`` None) are held to "no errors": claims and templates
    that were already in the file keep whatever problems they had (``dralint check`` reports those), and
    the migration never points a pod at one of them unless its spec equals the one it would have written.
    """
    scan = replace(job.config, select=[*LEGACY_RULES, "DRA10"], extend_select=[], ignore=[], per_file_ignores={},
                   jobs=1)
    # only the documents this run changed or inserted are linted again; the others were read as they
    # are by the planning pass, and stay in the index (as context) for the rules that look across
    changed = [k >= len(origin) or origin[k] is None or origin[k] in touched for k in range(len(new.documents))]
    if not all(changed):
        target = replace(new, documents=[d for d, c in zip(new.documents, changed, strict=True) if c])
        rest = replace(new, documents=[d for d, c in zip(new.documents, changed, strict=True) if not c])
        linted = lint_files([target], [rest], scan)
    else:
        linted = lint_files([new], [], scan)
    for f in linted.findings:
        ref = f.object
        if ref is None:
            continue
        if f.rule in LEGACY_RULES and not job.keep_legacy and ref.label() in migrated:
            return f"{ref.label()} still has {f.rule} after migrating: {f.message}"
        inserted = 0 <= f.doc_index < len(origin) and origin[f.doc_index] is None
        # an object inserted into a JSON List is an item of a document that was already there
        bp = f.base_path
        inserted = inserted or (len(bp) == 2 and bp[0] == "items" and
                                bp[1] in (new_items or {}).get(f.doc_index, set()))
        if inserted and f.rule.startswith("DRA10") and int(f.severity) >= 3 and \
                ref.kind in ("ResourceClaimTemplate", "ResourceClaim"):
            return f"the new {ref.label()} is invalid ({f.rule}): {f.message}"
    return None


def _merge(done: _Done, outcome: FileOutcome, planned: list[PlannedFix],
           rep_of: dict[int, WorkloadReport]) -> None:
    for i, reason in done.skipped.items():
        rep = rep_of.get(id(planned[i]))
        if rep is not None:
            rep.status, rep.reason, rep.objects = "skipped", reason, []
            rep.notes, rep.tolerations = [], 0  # what the plan would have done did not happen
    for i, notes in done.notes.items():
        rep = rep_of.get(id(planned[i]))
        if rep is not None:
            rep.notes.extend(notes)
    if done.failure:
        outcome.failures.append(GateFailure(["migrate"], done.failure))
        for pf in planned:
            rep = rep_of.get(id(pf))
            if rep is not None and rep.status == "migrated":
                rep.status, rep.reason, rep.objects = "skipped", f"the result failed a check: {done.failure}", []
                rep.notes, rep.tolerations = [], 0
        return
    if done.after is not None:
        outcome.after = done.after
        outcome.applied["migrate"] = done.applied
