"""Target files checked one at a time: parse, check, summarise, let the parse tree go.

Most rule runs look at one object and nothing else. Those run while the file is parsed, against a
sealed index (`dralint.engine.runner.SealedIndex`); a rule that asks the index about an object
(a claim's template, a class, the inventory) is refused, and that (rule, unit) pair waits, with only
its own document kept. `Stream.finish` runs the pairs still waiting once every file is summarised,
on the complete index, and settles those files' suppressions.

Most questions are about a few kinds (classes, slices, claims, templates), so files that may hold
those are parsed first, in `STAGES`. When a stage ends, no file left can hold its kinds: the sealed
index answers questions about them from the files done so far, and `Stream.advance` runs the
waiting pairs again, so most files are settled and let go long before the end. When those kinds
sit in bundles with everything else, their documents are parsed ahead instead (`Ahead`), and
nothing waits for them at all.

The findings are those of checking every file against a complete index: a refused rule run starts
again from nothing, and the index a rule run sees holds the same objects of the kinds it asks about
in the same order (the waiting units themselves, summaries for the rest) as a run that keeps every
tree.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from dralint.engine.lazy import FileLoader, KeptUnits, LazySourceFile, add_summary
from dralint.engine.results import Outcome
from dralint.engine.runner import FileWork, InternalError, _Runner, limits_for
from dralint.engine.summary import Blob, FileSummary, summarize
from dralint.inputs.index import Index, K8sObject, ValuesDoc, file_units
from dralint.inputs.load import Document, Limits, SourceFile, line_starts_of, load_bytes, plain_text, text_find

#: Kinds that other objects' rules ask about, in the order a streamed run completes them: files that
#: may hold a kind of the first stage are parsed first, then those of the second, then the rest. At
#: the end of a stage its kinds are complete (no file left can hold one), so rules asking about
#: them are answered from then on, and the rule runs waiting for them run and let their trees go.
#: Which kinds are listed decides only how much waits, never the findings: a question about a kind
#: not yet complete waits for the whole index as before.
STAGES: tuple[frozenset[str], ...] = (
    frozenset({"DeviceClass", "ResourceSlice", "DeviceTaintRule"}),
    frozenset({"ResourceClaim", "ResourceClaimTemplate", "ComputeDomain"}),
)
_STAGE_BYTES = [[k.encode() for k in sorted(stage)] for stage in STAGES]
#: escapes that can spell a kind's name without its letters: \x, \u, \U (YAML, JSON) and an
#: escaped line break in a double-quoted YAML scalar, which joins two lines with nothing between
_ESCAPE = re.compile(rb"\\[xuU\r\n]")


def _may_spell(text: bytes) -> bool:
    """Whether an escape in ``text`` may spell a kind's name without its letters."""
    return b"\\" in text and _ESCAPE.search(text) is not None


def stage_of(text: bytes | None) -> int:
    """The first stage a file's text may hold a kind of (``len(STAGES)``: none). A kind is a plain
    string in a parsed document, so its name is in the text unless an escape spells it; a file with
    such an escape, or whose text is not known, goes first."""
    if text is None or _may_spell(text):
        return 0
    for n, names in enumerate(_STAGE_BYTES):
        if any(name in text for name in names):
            return n
    return len(STAGES)


#: every kind of the stages
STAGED_KINDS = frozenset().union(*STAGES)
_NAMES = sorted(k.encode() for k in STAGED_KINDS)


def _scans(names: Sequence[bytes]) -> list[tuple[bytes, tuple[bytes, ...]]]:
    """What `staged_positions` searches for: each name's first word (``Device`` of ``DeviceClass``)
    once, with the names that start with it, so that the text is read three times instead of six. A
    name that starts with another (``ResourceClaimTemplate``) is found where that one is."""
    kept = [n for n in names if not any(n != m and n.startswith(m) for m in names)]
    groups: dict[bytes, list[bytes]] = {}
    for n in kept:
        word = re.match(rb"[A-Z][a-z0-9]*", n)
        groups.setdefault(word.group() if word else n, []).append(n)
    return [(word, tuple(group)) if len(group) > 1 else (group[0], ()) for word, group in groups.items()]


_SCANS = _scans(_NAMES)


def staged_positions(raw: bytes) -> list[int]:
    """Where a staged kind's name starts in ``raw``, in order (each position once)."""
    out: set[int] = set()
    for word, names in _SCANS:
        at = text_find(raw, word)
        while at != -1:
            if not names or any(raw.startswith(n, at) for n in names):
                out.add(at)
            at = text_find(raw, word, at + 1)
    return sorted(out)

#: what the stream must find of a file's objects of the staged kinds, in file order: identity,
#: where in its document, the data's JSON text and the document's Helm source
Signature = list[tuple[object, ...]]


#: parse ahead only when the files that name a staged kind are at least this many times the size
#: of the documents that do (bundles); else stages keep little waiting and parsing twice costs more
AHEAD_MIN_RATIO = 2


class Ahead:
    """The objects of the staged kinds, parsed before the stream from the documents that name one.

    Most files that hold a device class or a claim template are bundles of many documents; parsing
    just the documents that name such a kind (a few percent of the text) makes those kinds complete
    before the stream starts, so that no rule run waits for them (`Stream` with stages keeps every
    waiting tree of a stage until the stage ends). A document is found by the marker lines around
    the kind's name (a file where an escape may spell a kind, or with directives, is parsed whole),
    which is the parser's split in every file dralint has met but not in every file YAML allows
    (a lone carriage return ends a line too, say), so the stream checks each file against what
    was parsed ahead (`agrees`); the caller runs the file set again without `Ahead` when one does
    not agree."""

    def __init__(self) -> None:
        #: input -> the summary of its documents that name a staged kind (`staged_part`)
        self.parts: dict[int, FileSummary] = {}
        self.expected: dict[int, Signature] = {}

    @classmethod
    def parse(cls, files: Sequence[tuple[int, str, bytes | None]], limits: Limits) -> Ahead | None:
        """Parse ahead in ``files`` (input, display path, bytes); None when it would not pay (the
        documents that name a staged kind are most of the files that hold them: those files wait
        for little in stages) or when a file's bytes are not known. A file whose documents do not
        parse on their own is parsed whole."""
        found: list[tuple[int, str, bytes, list[tuple[int, int]]]] = []
        for i, display, raw in files:
            if raw is None:
                return None
            if len(raw) > limits.max_file_bytes:
                continue  # refused by the loader: holds nothing
            spans = _documents_naming(raw, display.lower().endswith(".json"))
            if spans:
                found.append((i, display, raw, spans))
        named = sum(end - start for *_, spans in found for start, end in spans)
        if named * AHEAD_MIN_RATIO > sum(len(raw) for _, _, raw, _ in found):
            return None
        out = cls()
        for i, display, raw, spans in found:
            # the documents one after another: each but a file's first starts at its own marker line
            sf = load_bytes(display, b"".join(raw[start:end] for start, end in spans), limits)
            if sf.problems and spans != [(0, len(raw))]:
                # a document that does not parse or render (a syntax error, a template) may read
                # otherwise on its own: the whole file, as the stream parses it, has the same objects
                sf = load_bytes(display, raw, limits)
            part = out.parts[i] = staged_part(summarize(sf, file_units(sf)).compact())
            out.expected[i] = signature(part)
        return out

    def agrees(self, i: int, summary: FileSummary) -> bool:
        """Whether the stream's summary of input ``i`` has the staged objects parsed ahead, no more."""
        return signature(summary) == self.expected.get(i, [])


def staged_part(summary: FileSummary) -> FileSummary:
    """``summary`` with only its objects of the staged kinds (what an early index is made of)."""
    return FileSummary(summary.docs, tuple(o for o in summary.objects if o.kind in STAGED_KINDS), (), ())


def signature(summary: FileSummary) -> Signature:
    sources = summary.sources()
    out: Signature = []
    for o in summary.objects:
        if o.kind in STAGED_KINDS:
            data = o.data.text() if isinstance(o.data, Blob) else o.data
            out.append((o.api_version, o.kind, o.name, o.namespace, o.base_path, o.carried, data, sources.get(o.doc)))
    return out


def _documents_naming(raw: bytes, is_json: bool) -> list[tuple[int, int]]:
    """The (start, end) byte ranges of the documents of ``raw`` that may hold a staged kind: those
    that name one; the whole file when it is JSON (one document), when an escape may spell a kind
    or when a directive (``%TAG``) applies to the documents after it."""
    if _may_spell(raw):
        return [(0, len(raw))]
    hits = staged_positions(raw)
    if not hits:
        return []
    if is_json or next(line_starts_of(raw, b"%"), None) is not None:
        return [(0, len(raw))]
    out: list[tuple[int, int]] = []
    for pos in hits:
        if out and pos < out[-1][1]:
            continue  # in the document of the hit before
        out.append(_document_around(raw, pos, out[-1][1] if out else 0))
    return out


def _document_around(raw: bytes, pos: int, lo: int = 0) -> tuple[int, int]:
    """The (start, end) of the document ``pos`` is in: from the last line at or before ``pos`` that starts
    or ends a document (`---`, `...`, then a space or the line's end; `dralint.inputs.load.DOC_MARKER`'s
    matches, tests/test_stream.py checks the two agree) to the next one after it. Searched from ``pos``
    both ways, each search stopping at what the one before found (a bundle of many documents has few
    that name a staged kind). ``lo``: a document bound known to be at or before ``pos``."""
    start, end = lo, len(raw)
    for token in (b"\n---", b"\n..."):
        at = raw.rfind(token, start, pos + 3)  # a marker line starting at or before pos
        while at != -1 and raw[at + 4 : at + 5] not in _AFTER_MARKER:
            at = raw.rfind(token, start, at + 3)
        if at != -1:
            start = at + 1
        at = raw.find(token, pos, end + 3)  # a marker line starting after pos
        while at != -1 and raw[at + 4 : at + 5] not in _AFTER_MARKER:
            at = raw.find(token, at + 1, end + 3)
        if at != -1:
            end = at + 1
    return start, end


#: what may follow a marker on its line (``b""``: the end of the text)
_AFTER_MARKER = (b"", b" ", b"\t", b"\r", b"\n")


class Stream:
    def __init__(self, runner: _Runner, displays: Sequence[str] = ()) -> None:
        """``displays``: the paths of every input of the run (a path two inputs share is never
        answered for from one file alone)."""
        self.runner = runner
        runner.sealed.shared = frozenset(d for d, n in Counter(displays).items() if n > 1)
        self.limits = limits_for(runner.config)
        #: input index -> files with rule runs waiting for the index (their trees are kept)
        self.waiting: dict[int, FileWork] = {}
        #: of those, the files of which only the documents of waiting units are kept
        self.kept: dict[int, KeptUnits] = {}
        self.outcomes: dict[int, Outcome] = {}
        #: how many files had rule runs waiting when they were checked (`advance` may settle them early)
        self.waited = 0
        self._errors: dict[int, list[InternalError]] = {}

    def check(self, i: int, sf: SourceFile, owned: bool = True) -> FileSummary:
        """Check target ``i`` as far as it can be checked alone; its summary, for the index.

        ``owned``: the tree was parsed for this run (not handed in by a caller), so it may be cut down."""
        units = file_units(sf)
        objects = [u for u in units if isinstance(u, K8sObject)]
        values = [u for u in units if isinstance(u, ValuesDoc)]
        work = self.runner.collect(sf, objects, values, defer=True)
        summary = summarize(sf, units).compact()  # the trees go with the file, not with the summary
        if not work.deferred:
            self._settle(i, work)
            return summary
        self.waited += 1
        if not owned or any(unit is sf for _, _, unit, _ in work.deferred):
            work.units = units  # a file-wide rule waits: the whole tree stays
            self.waiting[i] = work
        else:
            self.waiting[i] = work
            self.kept[i] = _slim(work, objects, values)
            _park(sf, self.limits)
        return summary

    def add(self, index: Index, i: int, display: str, summary: FileSummary, loader: FileLoader) -> None:
        """Add target ``i`` to the final index: what is still parsed of it as it is, the rest from its summary."""
        work = self.waiting.get(i)
        if work is not None and i not in self.kept:
            index.add_file(work.sf, True, work.units)
        else:
            add_summary(index, display, summary, True, loader, self.kept.get(i))

    def advance(self) -> None:
        """Run the waiting rule runs again once more kinds are complete (`SealedIndex.complete`): the
        files whose runs are all done are settled and let go; the others keep only what still waits."""
        for i in sorted(self.waiting):
            work = self.waiting[i]
            self.runner.retry(work)
            if not work.deferred:
                del self.waiting[i]
                self.kept.pop(i, None)
                self._settle(i, work)
            elif i in self.kept:
                self.kept[i] = _reslim(work, self.kept[i])
            _let_go(work.sf)  # its findings so far are placed: decoded again when read

    def finish(self, index: Index) -> None:
        """Run the waiting rule runs against the complete ``index``."""
        self.runner.unseal(index)
        for i in sorted(self.waiting):
            work = self.waiting[i]
            self.runner.finish(work)
            self._settle(i, work)
            _let_go(work.sf)  # its findings are placed: the text is decoded again if a report quotes it

    def _settle(self, i: int, work: FileWork) -> None:
        silenced = len(self.runner.suppressions)
        kept, suppressed = self.runner.settle(work)
        self.outcomes[i] = Outcome(kept, suppressed, self.runner.suppressions[silenced:], bool(work.errors))
        self._errors[i] = work.errors

    def release(self) -> None:
        """Let the kept trees go (the outcomes stay)."""
        self.waiting.clear()
        self.kept.clear()

    def errors_of(self, i: int) -> list[InternalError]:
        return self._errors.get(i, [])

    def errors(self) -> list[InternalError]:
        """The rule crashes, in file order (as one process that keeps every tree reports them)."""
        return [e for i in sorted(self._errors) for e in self._errors[i]]

    def waits(self, i: int) -> bool:
        return i in self.waiting

    def _whole(self, i: int) -> bool:
        """Whether file ``i`` waits with its whole tree (not cut down to its waiting documents)."""
        return i in self.waiting and i not in self.kept

    def file_of(self, i: int, display: str, loader: FileLoader) -> SourceFile:
        """Target ``i`` as reports and fixers see it (after `finish`): the tree if it was kept whole,
        else parsed again on first use (its text is decoded from its bytes, which the run keeps)."""
        if self._whole(i):
            return self.waiting[i].sf
        return LazySourceFile(display, loader)


def _slim(work: FileWork, objects: Sequence[K8sObject], values: Sequence[ValuesDoc]) -> KeptUnits:
    """Keep only the documents that waiting rule runs look at; the file's other trees go.

    The other documents keep their offsets but lose their data (suppression comments and positions
    need only the text); the index gets the rest of the file from its summary. The file is changed
    in place, since the rules' memos may hold the file already."""
    return _reslim(work, KeptUnits(work.sf, dict(enumerate(objects)), dict(enumerate(values))))


def _reslim(work: FileWork, kept: KeptUnits) -> KeptUnits:
    """`_slim` again after some of a file's waiting runs are done: ``kept``, cut down to them."""
    waiting = {id(unit) for _, _, unit, _ in work.deferred}
    objects = {p: u for p, u in kept.objects.items() if id(u) in waiting}
    values = {p: u for p, u in kept.values.items() if id(u) in waiting}
    docs = {id(u.doc) for u in objects.values()} | {id(u.doc) for u in values.values()}
    sf = work.sf
    sf.documents = [d if d.data is None or id(d) in docs else Document(d.index, None, d.start, d.end, d.source,
                                                                       d.duplicates, d.skip)
                    for d in sf.documents]
    return KeptUnits(sf, objects, values)


class _Parked(SourceFile):
    """A waiting file whose text is let go while it waits: its bytes are kept, and the text is decoded
    from them (as the loader decoded them) whenever something reads it. The rule runs of any file may
    quote any other file's text, so every parked file must be readable at any time; only a file's
    own runs read it for sure, and it is let go again once they are settled (`_let_go`)."""

    @property
    def text(self) -> str:
        text: str = self.__dict__["text"]
        if not text and self.raw:
            text = self.__dict__["text"] = plain_text(self.raw, self.__dict__["_limits"]) or ""
        return text

    @text.setter
    def text(self, value: str) -> None:
        self.__dict__["text"] = value


def _park(sf: SourceFile, limits: Limits) -> None:
    """Let a waiting file's text go until it is read again (`_Parked`)."""
    if sf.__class__ is SourceFile and sf.text and not any(p.code == "DRA005" for p in sf.problems):
        # DRA005: not plain UTF-8, so the text is not the bytes decoded: it stays
        sf.__class__ = _Parked
        sf.__dict__["_limits"] = limits
        _let_go(sf)


def _let_go(sf: SourceFile) -> None:
    if sf.__class__ is _Parked:
        sf.__dict__["text"] = ""
        sf._line_starts = None
        sf._counted = 0
