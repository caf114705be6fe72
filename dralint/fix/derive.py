"""The file a pass of fixes produced, built from what the pass knows instead of parsing it again.

A pass (`apply_pass`) rewrites some document regions and inserts documents after some of them; the
rest of the text is copied. So the result's documents are the input's documents, moved, except the
ones whose text changed: only those are parsed (each from its region to the next document marker,
which is what parsing the whole file gives for them), or, when that text is just the region the
splicer rewrote, taken from the splicer's own data, moved; the regions of the moved ones are the
input's, moved. `migrate` applies one pass to each file and gates the result, and most of a changed
file is documents no workload is in; parsing only what changed is what keeps it near the cost of
reading the files once.

The moved documents keep their data objects, so positions *inside* them still count from the input
(their `Document.start`/`end` and duplicate offsets are moved): the result is for the write gates
and the re-check of the changed documents, which read the moved documents' data and regions only.
Whatever the pass did that this cannot follow exactly (templates, directives, JSON, a file with
load problems, a changed region that does not parse as one document) gives None, and the caller
parses the whole result, so the gates then judge the real parse.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

import yaml

from dralint.fix import splice
from dralint.fix.splice import (
    PassResult,
    _content_ends,
    _last_content,
    _moved,
    _unordered,
    region_of,
    same_located,
)
from dralint.inputs.load import DOC_MARKER as _MARKER
from dralint.inputs.load import Document, Limits, LMap, LSeq, SourceFile, compose_span


def _depends_on_more(text: str) -> bool:
    """Whether a document's parse may depend on more than its own text: directives (a line that starts
    with ``%``), templates, Helm sources. Plain searches: one regular expression for the three (an
    alternation with a line anchor) tested every character of every changed file, 0.2 s of the corpus."""
    return text.startswith("%") or "\n%" in text or "{{" in text or "# Source:" in text


@dataclass
class Derived:
    file: SourceFile
    #: `doc_regions` of ``file``
    regions: dict[int, tuple[int, int]]


def derive_result(sf: SourceFile, pr: PassResult, limits: Limits) -> Derived | None:
    """The result of ``pr`` (a pass over ``sf``) as a loaded file, or None when it must be parsed."""
    text = pr.text
    raw = (b"\xef\xbb\xbf" if sf.bom else b"") + text.encode("utf-8")
    if sf.problems or sf.is_json or pr.new_items or not pr.changes or _depends_on_more(text) or "\x00" in text \
            or len(raw) > limits.max_file_bytes \
            or (len(text) > limits.max_file_tokens and text.count("\n") + text.count(",") > limits.max_file_tokens):
        return None
    crlf, lf = text.find("\r\n"), text.find("\n")
    new = SourceFile(path=sf.path, raw=raw, text=text, bom=sf.bom,
                     newline="\r\n" if crlf != -1 and crlf + 1 == lf else "\n")
    # the input offsets where each change ends, and the growth of the text up to there
    ends: list[int] = []
    growth: list[int] = []
    total = 0
    for s, e, ns, ne in pr.changes:
        total += (ne - ns) - (e - s)
        ends.append(e)
        growth.append(total)

    def moved(off: int) -> int:
        """Where an input offset outside every rewritten region is in the result (text at an
        insertion point comes after what was inserted there)."""
        i = bisect_right(ends, off) - 1
        return off + (growth[i] if i >= 0 else 0)

    docs: list[Document] = []
    regions: dict[int, tuple[int, int]] = {}
    for d in sf.documents:
        region = pr.regions.get(d.index)
        placed, added = pr.placed.get(d.index), pr.added.get(d.index)
        if region is not None and (placed is not None or added is not None):
            if placed is not None:
                start, stop = placed
            else:  # the region itself is as it was, before the documents inserted right after it
                start = moved(region[0])
                stop = start + region[1] - region[0]
            # its text runs to the next marker: the first inserted `---`, or what followed it before
            end = _next_marker_or_end(text, stop)
            known = pr.roots.get(d.index) if placed is not None and end == stop else None
            if known is not None and text[start:end] != known[0]:
                known = None  # not the text the splicer left (the pass result was changed since)
            if not _add(new, start, end, limits, docs, regions, None if known is None else known[1]):
                return None
        else:
            shift = moved(d.start) - d.start
            docs.append(Document(len(docs), d.data, d.start + shift, d.end + shift, None,
                                 [(k, a + shift, b + shift, c + shift) for k, a, b, c in d.duplicates], d.skip))
            if region is not None:
                regions[len(docs) - 1] = (region[0] + shift, region[1] + shift)
        if added is not None:
            for s, e in _inserted_docs(text, added):
                if not _add(new, s, e, limits, docs, regions):
                    return None
    if new.problems or len(docs) != len(sf.documents) + sum(pr.inserted.values()):
        return None
    new.documents = docs
    return Derived(new, regions)


def _next_marker_or_end(text: str, pos: int) -> int:
    m = _MARKER.search(text, pos)
    return m.start() if m else len(text)


def _inserted_docs(text: str, span: tuple[int, int]) -> list[tuple[int, int]]:
    """The documents the pass wrote in ``span``, each from after its ``---`` line to the next marker."""
    out = []
    pos = span[0]
    while pos < span[1]:
        m = _MARKER.search(text, pos)
        if m is None or m.start() >= span[1]:
            break
        body = text.find("\n", m.start()) + 1
        out.append((body, _next_marker_or_end(text, body)))
        pos = body
    return out


def _add(new: SourceFile, start: int, end: int, limits: Limits, docs: list[Document],
         regions: dict[int, tuple[int, int]], known: Any = None) -> bool:
    """Parse one changed document of the result; False when that is not one clean document.

    ``known``: the located data the splicer left for the document's text (`PassResult.roots`), given
    only when that text is the rewritten region and nothing more (comment lines before the next
    marker would make the parse end the last collections later): the parse, moved to file offsets."""
    text = new.text
    shared = text.find("&", start, end) != -1 and text.find("*", start, end) != -1  # aliases: not copied
    if isinstance(known, (LMap, LSeq)) and not shared:
        d = Document(len(docs), _moved(known, start, 0), start + known.s, start + known.e)
        if splice.VERIFY_GRAFTS:
            whole = compose_span(new, start, end, limits)
            if len(whole) != 1 or not same_located(d.data, whole[0].data) or \
                    (whole[0].start, whole[0].end, whole[0].duplicates) != (d.start, d.end, []):
                raise AssertionError(f"the splicer's data differs from the parse of {new.text[start:end]!r}")
    else:
        try:
            got = compose_span(new, start, end, limits)
        except yaml.YAMLError:
            return False
        if len(got) != 1 or got[0].skip:
            return False
        d = got[0]
    d.index = len(docs)
    docs.append(d)
    stop = None if d.duplicates or _unordered(text, start, end) else \
        _last_content(text, d.data, d.end)
    if stop is None:  # an alias or anchored collection on the way to its end: ask the parser
        ends = _content_ends(text[start:end])
        rel = ends.get(d.start - start)
        stop = None if rel is None else rel + start
    region = None if stop is None else region_of(text, d.start, stop)
    if region is not None:
        regions[d.index] = region
    return True
