"""The results cache: a target file's findings, reused while nothing they depend on has changed.

A file's findings depend on its own bytes, on dralint (code and data), on the configuration and
cluster profile, and on what its rules looked up in other files. The first three are the entry's
key (`entry_key`); the last is checked when the entry is read:

- every query a rule makes across files is recorded by the index (`Index.reads`: the kinds it
  looked up, ``@values`` for values documents, ``*`` for every object);
- an entry stores the run's reads and a digest of the files that could answer them: the path and
  content key of every file holding an object of a read kind (`deps_digest`). A file that gains,
  loses or changes such an object changes the digest, so the entry is stale.

The reads of the whole run are stored, not those of the one file: rules memoise cross-file
answers (``Context.cache``) that one file computes and another uses, so only the run's union is
known to cover a file. It is a superset, so an entry can be stale when it need not be (a re-check,
never a wrong answer). Rules must therefore read other files only through the index's query
methods (tests/test_index_reads.py).

Fixes are stored whole (a library caller may read their edits), with values tagged so that they
come back as the same types; a file whose fixes hold anything else is not stored. Commands that
apply fixes lint afresh anyway (`dralint.fix.loop`).

Entries live in the summary cache's salted directory, so the same rules hold: JSON only, never
followed symlinks, and a key that depends on the installed code (`dralint.engine.cache`), which a
checked-in cache cannot predict.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from dralint.engine.cache import SummaryCache
from dralint.engine.config import Config
from dralint.engine.summary import FileSummary
from dralint.inputs.index import ALL_OBJECTS, ALL_VALUES, CLAIM_REFS
from dralint.model import Applicability, Edit, EditOp, Finding, Fix, ObjectRef, Severity, Span

#: bump when the entry layout changes
RESULTS_FORMAT = 3


def config_salt(config: Config) -> str:
    """Everything in the configuration that can change findings (not jobs, cache or output)."""
    shape = {
        "root": str(config.root),
        "selected": sorted(config.selected()),
        "per_file_ignores": config.per_file_ignores,
        "severity": {k: int(v) for k, v in config.severity.items()},
        "rule_options": config.rule_options,
        "max_file_size": config.max_file_size,
        "unsafe_fixes": config.unsafe_fixes,
        "profile": dataclasses.asdict(config.profile),
        "helm": config.helm,
    }
    text = json.dumps(shape, sort_keys=True, default=_sorted_repr)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _sorted_repr(value: object) -> object:
    if isinstance(value, (set, frozenset)):
        return sorted(map(str, value))
    return repr(value)


def entry_key(salt: str, content_key: str, display: str) -> str:
    """Where a target file's results live: its content, its path (findings carry it) and the salt."""
    h = hashlib.blake2b(f"results|{salt}|{content_key}|{display}".encode(), digest_size=20)
    return "r" + h.hexdigest()


@dataclass(frozen=True, slots=True)
class FileRow:
    """What the dependency digest knows of one file of the run."""

    display: str
    #: content key; None (stdin, unreadable file) is never equal to a stored one
    key: str | None
    kinds: frozenset[str]
    has_values: bool
    #: how many objects it holds (not part of the digest: for the report's counts)
    objects: int = 0
    #: ``namespace/claim`` for every ResourceClaim its pods name (`Index.claim_users`), sorted
    claim_refs: tuple[str, ...] = ()


def deps_digest(rows: Sequence[FileRow], reads: Iterable[str]) -> str:
    """A digest of the files that could answer ``reads``, in run order."""
    wanted = set(reads)
    every = ALL_OBJECTS in wanted
    values = ALL_VALUES in wanted
    refs = CLAIM_REFS in wanted
    h = hashlib.blake2b(digest_size=16)
    h.update("\0".join(sorted(wanted)).encode())
    for row in rows:
        if every or (values and row.has_values) or not wanted.isdisjoint(row.kinds):
            if row.key is None:
                return "never"  # a file without a content key cannot be compared with a stored run
            h.update(f"\n{row.display}\0{row.key}".encode())
        elif refs and row.claim_refs:  # only which claims its pods name, not the rest of the file
            h.update(f"\n{row.display}\0refs\0{chr(0).join(row.claim_refs)}".encode())
    return h.hexdigest()


class Digests:
    """`deps_digest` per distinct set of reads (a run's entries usually share one)."""

    def __init__(self, rows: Sequence[FileRow]) -> None:
        self.rows = rows
        self._memo: dict[frozenset[str], str] = {}

    def __call__(self, reads: Iterable[str]) -> str:
        k = frozenset(reads)
        hit = self._memo.get(k)
        if hit is None:
            hit = self._memo[k] = deps_digest(self.rows, k)
        return hit


@dataclass
class Entry:
    """One target file's stored results, and the file's own row (so a warm run need not read its summary)."""

    reads: list[str]
    deps: str
    findings: list[Finding]
    suppressions: list[Finding]
    suppressed: int
    kinds: list[str]
    has_values: bool
    objects: int
    claim_refs: list[str]

    def row(self, display: str, key: str) -> FileRow:
        return FileRow(display, key, frozenset(self.kinds), self.has_values, self.objects, tuple(self.claim_refs))

    def to_bytes(self) -> bytes:
        return json.dumps({
            "format": RESULTS_FORMAT, "reads": sorted(self.reads), "deps": self.deps,
            "findings": [_dump(f) for f in self.findings], "suppressions": [_dump(f) for f in self.suppressions],
            "suppressed": self.suppressed, "kinds": sorted(self.kinds), "has_values": self.has_values,
            "objects": self.objects, "claim_refs": self.claim_refs,
        }, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes) -> Entry | None:
        """A stored entry; None when it is not one (corrupt, foreign or hand-made entries are misses)."""
        try:
            d = json.loads(data)
            if not isinstance(d, dict) or d.get("format") != RESULTS_FORMAT:
                return None
            reads, deps, suppressed, kinds, has_values, objects, refs = (
                d["reads"], d["deps"], d["suppressed"], d["kinds"], d["has_values"], d["objects"], d["claim_refs"])
            if not (_strings(reads) and isinstance(deps, str) and type(suppressed) is int and suppressed >= 0
                    and _strings(kinds) and isinstance(has_values, bool) and type(objects) is int and objects >= 0
                    and _strings(refs)):
                return None
            findings = [_load(x) for x in d["findings"]]
            suppressions = [_load(x) for x in d["suppressions"]]
        except (ValueError, TypeError, LookupError, AttributeError, RecursionError):
            return None
        return cls(reads, deps, findings, suppressions, suppressed, kinds, has_values, objects, refs)


def _strings(x: Any) -> bool:
    return isinstance(x, list) and all(isinstance(v, str) for v in x)


class Unstorable(TypeError):
    """A finding holds a value the entry format cannot give back as it was."""


def _tag(v: Any) -> Any:
    """A value as JSON that `_untag` turns back into equal values of the same types."""
    if v is None or isinstance(v, (str, bool, int, float)):
        if type(v) not in (str, bool, int, float, type(None)):
            raise Unstorable(type(v).__name__)  # an int or str subclass would come back plain
        return v
    if isinstance(v, dict):
        return {"d": [[_tag(k), _tag(x)] for k, x in v.items()]}
    if isinstance(v, list):
        return {"l": [_tag(x) for x in v]}
    if isinstance(v, tuple):
        return {"t": [_tag(x) for x in v]}
    raise Unstorable(type(v).__name__)


def _untag(v: Any) -> Any:
    if not isinstance(v, dict):
        if isinstance(v, list):
            raise TypeError("untagged list")
        return v
    ((tag, body),) = v.items()
    if tag == "d":
        return {_untag(k): _untag(x) for k, x in body}
    if tag == "l":
        return [_untag(x) for x in body]
    if tag == "t":
        return tuple(_untag(x) for x in body)
    raise TypeError(f"unknown tag {tag!r}")


def _dump_fix(fix: Fix) -> list[Any]:
    return [fix.title, int(fix.applicability),
            [[e.op, _tag(e.path), _tag(e.value), e.key, e.index, e.after, e.comment] for e in fix.edits]]


def _load_fix(x: Any) -> Fix:
    title, applicability, edits = x
    out = []
    for op, path, value, key, index, after, comment in edits:
        if op not in get_args(EditOp):
            raise TypeError(f"unknown edit {op!r}")
        out.append(Edit(op, _path(list(_untag(path))), _untag(value), _opt_str(key),
                        None if index is None else _int(index), _opt_str(after), _opt_str(comment)))
    return Fix(_str(title), Applicability(_int(applicability)), tuple(out))


def _dump(f: Finding) -> list[Any]:
    s = f.span
    obj = f.object
    return [
        f.rule, f.name, int(f.severity), f.message, f.path, [s.line, s.column, s.end_line, s.end_column],
        None if obj is None else [obj.api_version, obj.kind, obj.namespace, obj.name],
        f.source, None if f.fix is None else _dump_fix(f.fix),
        f.doc_index, list(f.base_path), list(f.obj_path), _tag(f.extra),
    ]


def _str(x: Any) -> str:
    if not isinstance(x, str):
        raise TypeError("not a string")
    return x


def _opt_str(x: Any) -> str | None:
    return None if x is None else _str(x)


def _int(x: Any) -> int:
    if type(x) is not int:
        raise TypeError("not an integer")
    return x


def _path(x: Any) -> tuple[str | int, ...]:
    if not isinstance(x, list) or not all(isinstance(p, str) or type(p) is int for p in x):
        raise TypeError("not a path")
    return tuple(x)


def _load(x: Any) -> Finding:
    rule, name, sev, message, path, span, obj, source, fix, doc_index, base, obj_path, extra = x
    line, col, end_line, end_col = (_int(v) for v in span)
    ref = None
    if obj is not None:
        api, kind, ns, oname = obj
        ref = ObjectRef(_opt_str(api), _opt_str(kind), _opt_str(ns), _opt_str(oname))
    stored_fix = None if fix is None else _load_fix(fix)
    extra = _untag(extra)
    if not isinstance(extra, dict):
        raise TypeError("extra is not a mapping")
    return Finding(
        rule=_str(rule), name=_str(name), severity=Severity(_int(sev)), message=_str(message), path=_str(path),
        span=Span(line, col, end_line, end_col), object=ref, source=_opt_str(source), fix=stored_fix,
        doc_index=_int(doc_index), base_path=_path(base), obj_path=_path(obj_path), extra=extra,
    )


def row_of(display: str, key: str | None, summary: FileSummary) -> FileRow:
    refs = sorted({f"{summary.objects[i].namespace or ''}/{name}" for i, name in summary.claim_refs})
    return FileRow(display, key, frozenset(o.kind or "" for o in summary.objects), bool(summary.values),
                   len(summary.objects), tuple(refs))


@dataclass
class Outcome:
    """What linting one target file gave."""

    findings: list[Finding]
    suppressed: int
    suppressions: list[Finding]
    #: internal errors: a file with any is not stored (the next run should report them again)
    failed: bool


class ResultsCache:
    """Entries beside the summaries of a `SummaryCache` (same directory, same salt, same safety)."""

    def __init__(self, cache: SummaryCache, config: Config) -> None:
        self.cache = cache
        self.salt = config_salt(config)
        self.hits = 0
        self.stale = 0
        self.writes = 0

    def lookup(self, display: str, content_key: str) -> Entry | None:
        raw = self.cache.get(entry_key(self.salt, content_key, display), "results")
        return Entry.from_bytes(raw) if raw is not None else None

    def still_valid(self, candidates: dict[int, Entry], rows: Sequence[FileRow]) -> set[int]:
        """The candidates whose dependencies answer as they did when they were stored."""
        digests = Digests(rows)
        valid = {i for i, e in candidates.items() if digests(e.reads) == e.deps}
        self.hits += len(valid)
        self.stale += len(candidates) - len(valid)
        return valid

    def store(self, outcomes: dict[int, Outcome], keys: dict[int, tuple[str, str]], reads: Iterable[str],
              rows: Sequence[FileRow]) -> None:
        """Store the outcome of every linted file; ``keys`` maps its input to (display, content key)."""
        reads = sorted(reads)
        deps = deps_digest(rows, reads)
        if deps == "never":
            return
        for i, out in outcomes.items():
            if out.failed or i not in keys:
                continue
            display, content_key = keys[i]
            row = rows[i]
            try:
                data = Entry(reads, deps, out.findings, out.suppressions, out.suppressed,
                             sorted(row.kinds), row.has_values, row.objects, list(row.claim_refs)).to_bytes()
            except (Unstorable, ValueError):  # ValueError: a circular value
                continue  # linted afresh next time
            self.cache.put(entry_key(self.salt, content_key, display), data, "results")
            self.writes += 1
