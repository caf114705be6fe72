"""Bytes to documents: the fast, position-keeping parse used by `check`.

PyYAML's C composer (libyaml) builds nodes with marks; one walk turns them into plain dicts and
lists (``LMap``/``LSeq``) that remember where every key and value starts and ends, as character
offsets into the file text. Scalars are resolved the YAML 1.1 way, as the Kubernetes decoder
(sigs.k8s.io/yaml over go-yaml) does: ``yes``/``on`` are booleans, ``0755`` is octal.

Nothing here raises on bad input: problems become `LoadProblem`s (rules DRA001-DRA005) with a
position, and the documents that could be read are still returned.
"""

from __future__ import annotations

import bisect
import errno
import importlib
import json
import os
import re
import stat
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from sys import intern as _intern
from typing import Any, AnyStr

import yaml

from dralint.model import Span

try:  # the C loader is ~9x faster; fall back (and say so in --verbose) when libyaml is missing
    from yaml import CSafeLoader as _BaseLoader

    HAVE_LIBYAML = True
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

    HAVE_LIBYAML = False

_TAG_STR = "tag:yaml.org,2002:str"
_TAG_SEQ = "tag:yaml.org,2002:seq"
_TAG_MAP = "tag:yaml.org,2002:map"
_resolve_plain = _BaseLoader.resolve
#: plain scalar text -> tag. Resolution depends only on the text (no path resolvers are registered),
#: and manifests repeat the same keys and values endlessly, so the regex pass runs once per text.
_PLAIN_TAGS: dict[str, str] = {}


class _Loader(_BaseLoader):
    """The C composer with a memoised tag resolver: the composer asks Python for every node's tag,
    which was a third of the parse time."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0]:
                tag = _PLAIN_TAGS.get(value)
                if tag is None:
                    tag = _resolve_plain(self, kind, value, implicit)  # type: ignore[no-untyped-call]
                    if len(value) <= 64 and len(_PLAIN_TAGS) < 100_000:
                        _PLAIN_TAGS[value] = tag
                return tag
            return _TAG_STR  # quoted and block scalars are strings
        return _TAG_SEQ if kind is yaml.SequenceNode else _TAG_MAP

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None  # no path resolvers

    def ascend_resolver(self) -> None:
        return None


#: the PyYAML loader class dralint composes with (bench/floor.py measures the floor with it too)
COMPOSE_LOADER = _Loader


class LMap(dict):  # type: ignore[type-arg]
    """A mapping that remembers positions.

    ``lc`` holds four character offsets per key, in insertion order: key start, key end, value
    start, value end. ``s``/``e`` are the offsets of the whole mapping.
    """

    __slots__ = ("e", "lc", "s")
    lc: array[int]
    s: int
    e: int


class LSeq(list):  # type: ignore[type-arg]
    """A sequence that remembers positions: ``lc`` holds start and end offsets per item."""

    __slots__ = ("e", "lc", "s")
    lc: array[int]
    s: int
    e: int


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = 16 * 1024 * 1024
    #: expanded node count (aliases counted every time they are used) per document
    max_expanded_nodes: int = 1_000_000
    max_nesting: int = 200
    #: lines plus commas in one file, a cheap upper bound for its node count: the composer builds
    #: every node before any check runs (~250 bytes each), so this bounds memory to ~1 GB
    max_file_tokens: int = 4_000_000


@dataclass
class LoadProblem:
    code: str  # DRA001 .. DRA005 (DRA007: a link `dralint.files` did not read)
    message: str
    span: Span
    doc_index: int = -1


@dataclass
class Document:
    index: int
    data: Any
    start: int  # character offset of the root node
    end: int
    source: str | None = None  # template path from a Helm "# Source:" comment
    #: duplicate keys: (key, start, end, first_start) offsets
    duplicates: list[tuple[str, int, int, int]] = field(default_factory=list)
    #: set when the document is unusable for rules (template syntax, limits)
    skip: bool = False


#: a file's positions are found by counting newlines from the position asked before, until the
#: distances counted add up to this many times its length; then its line table is built
#: (`SourceFile.line_col`). Positions mostly come in file order, so counting is one pass or two
COUNTED_LENGTHS = 2


@dataclass
class SourceFile:
    path: str
    raw: bytes
    text: str = ""
    bom: bool = False
    newline: str = "\n"
    documents: list[Document] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)
    is_json: bool = False
    _line_starts: array[int] | None = None
    #: characters counted over to find positions, before `line_starts` is built (`line_col`)
    _counted: int = field(default=0, compare=False, repr=False)
    #: (offset, line) of the last position counted: the next is counted from there
    _near: tuple[int, int] = field(default=(0, 1), compare=False, repr=False)

    # -- positions -------------------------------------------------------------------------
    def line_starts(self) -> array[int]:
        if self._line_starts is None:
            # offsets just after each "\n": running sums of (line length + 1), all in C
            lengths = map((1).__add__, map(len, self.text.split("\n")))
            # an array, 4 bytes a line (a list takes about 40: a streamed run keeps many of these)
            starts = array("i" if len(self.text) < 2**31 - 1 else "q", accumulate(lengths, initial=0))
            starts.pop()  # the sum over all lines points past the end: not a line start
            self._line_starts = starts
        return self._line_starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset (the BOM is not counted)."""
        text = self.text
        if (self.__dict__.get("_line_starts") is None and offset >= 0
                and self._counted < (len(text) + 1) * COUNTED_LENGTHS):
            # counting the newlines (in C) is cheaper than splitting the whole text into lines for a
            # table, as long as the distances counted stay near the text's length. Positions come near
            # each other (a span's two ends, the findings of one object, the objects in file order),
            # so each is counted from the one before, not from the start of a file that may be
            # megabytes long; a file asked for positions all over it gets the table.
            at, line = self._near
            if offset >= at:
                line += text.count("\n", at, offset)
                self._counted += offset - at
            else:
                line -= text.count("\n", offset, at)
                self._counted += at - offset
            self._near = (offset, line)
            return line, offset - text.rfind("\n", 0, offset)
        starts = self.line_starts()
        line = bisect_right(starts, offset) - 1
        return line + 1, offset - starts[line] + 1

    def span(self, start: int, end: int) -> Span:
        line, col = self.line_col(start)
        end_line, end_col = self.line_col(max(end, start))
        if end_line > line and end_col == 1 and end > start:
            # a block value's end mark sits at the start of the next line: end on the last char
            end_line, end_col = self.line_col(end - 1)
            end_col += 1
        return Span(line, col, end_line, end_col)

    def line_text(self, line: int) -> str:
        starts = self.line_starts()
        if not 1 <= line <= len(starts):
            return ""
        s = starts[line - 1]
        e = starts[line] if line < len(starts) else len(self.text)
        return self.text[s:e].rstrip("\r\n")


# ----------------------------------------------------------------------------------------------
# scalar resolution (YAML 1.1, as the Kubernetes decoder)

_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_FLOAT = "tag:yaml.org,2002:float"
_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"

_constructor = yaml.SafeLoader.__new__(yaml.SafeLoader)
_constructor.constructed_objects = {}

_ScalarNode = yaml.ScalarNode
_MappingNode = yaml.MappingNode
_SequenceNode = yaml.SequenceNode


def _scalar(n: yaml.ScalarNode) -> Any:
    t = n.tag
    if t == _STR:
        return n.value
    try:
        if t == _INT:
            v = n.value
            if v.isdigit() and (v[0] != "0" or len(v) == 1):  # plain decimal: no sign, octal, _ or :
                return int(v)
            return _constructor.construct_yaml_int(n)
        if t == _BOOL:
            return n.value.lower() in ("yes", "true", "on", "y")
        if t == _NULL:
            return None
        if t == _FLOAT:
            return _constructor.construct_yaml_float(n)
    except (ValueError, yaml.YAMLError):
        return n.value
    # timestamps, binary and custom tags: keep the text, which is what a linter wants to judge
    return n.value


_RESOLVER = yaml.resolver.Resolver()  # the implicit resolvers of the loader's class, without a stream


def _plain_tag(value: str) -> str:
    """The tag of a plain scalar's text (memoised, as `_Loader.resolve` does)."""
    tag = _PLAIN_TAGS.get(value)
    if tag is None:
        tag = _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
        if len(value) <= 64 and len(_PLAIN_TAGS) < 100_000:
            _PLAIN_TAGS[value] = tag
    return tag


def _scalar_of(tag: str, value: str) -> Any:
    """`_scalar` of a plain scalar with this tag and text (for the native loader)."""
    return _scalar(yaml.ScalarNode(tag, value))


def _mapping_key(kn: yaml.Node) -> str | None:
    """A mapping key as the walks keep it: a plain string interned (keys repeat in every document:
    one string each is kept), any other key as `_key_text` spells it; None for a merge key (``<<``)."""
    kt = kn.tag
    if kt == _STR and kn.__class__ is _ScalarNode:
        return _intern(kn.value)
    return None if kt == _MERGE else _key_text(kn)


def _key_of(tag: str, value: str) -> str | None:
    """`_key_text` of a plain scalar key with this tag and text; None for a merge key (for the native loader)."""
    return None if tag == _MERGE else _key_text(yaml.ScalarNode(tag, value))


def _key_text(kn: yaml.Node) -> str:
    """Mapping keys as sigs.k8s.io/yaml turns them into JSON object keys."""
    if kn.__class__ is _ScalarNode:
        t = kn.tag
        if t == _STR:
            return str(kn.value)
        v = _scalar(kn)
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v)
    return repr(kn.value)


class _LimitExceeded(Exception):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


class _Again(Exception):
    """The plain walk met what only the full one handles (a merge key)."""


class _Walker:
    """Turns one composed document into LMap/LSeq data.

    Aliases are shared (memoised) rather than copied, and the expanded size is counted so that an
    alias bomb is refused instead of being walked exponentially by the rules.
    """

    def __init__(self, limits: Limits, aliases: bool = True) -> None:
        self.limits = limits
        #: node id -> data, only when the text can hold aliases (a shared node is an alias)
        self.memo: dict[int, Any] | None = {} if aliases else None
        #: node id -> expanded size, or -1 while the node is being walked (an alias to it is recursive)
        self.sizes: dict[int, int] = {}
        self.duplicates: list[tuple[str, int, int, int]] = []
        #: nodes below the root seen by `_plain` (the root counts one more)
        self.count = 1

    def document(self, n: yaml.Node) -> Any:
        """The data of a document's root node."""
        if n.__class__ is _ScalarNode:
            return _scalar(n)
        if self.memo is None:  # no aliases: the plain walk, unless a merge key or the node limit needs `walk`
            limit = self.limits.max_expanded_nodes
            try:
                data = self._plain(n, 0)
            except _Again:
                pass
            except _LimitExceeded:
                # `walk` checks sizes as it goes: it says the same unless a size over the limit came first
                if self.count <= limit:
                    raise
            else:
                if self.count <= limit:
                    return data
            self.duplicates = []
        return self.walk(n, 0)[0]

    def _plain(self, n: yaml.Node, depth: int) -> Any:
        """`walk` for a document without aliases: every node is walked once, so nothing is remembered and
        the expanded size is the node count, added up per collection (most of a file's parse is this
        walk). Raises `_Again` at a merge key, which `walk` handles."""
        if depth > self.limits.max_nesting:
            raise _LimitExceeded(
                f"nesting deeper than {self.limits.max_nesting} levels", n.start_mark.index
            )
        values = n.value
        self.count += len(values)
        lc: list[int] = []
        if n.__class__ is _MappingNode:
            out: Any = LMap()
            positions: dict[str, int] | None = None
            for kn, vn in values:
                k = _mapping_key(kn)
                if k is None:
                    raise _Again
                if vn.__class__ is _ScalarNode:
                    v = vn.value if vn.tag == _STR else _scalar(vn)
                else:
                    v = self._plain(vn, depth + 1)
                positions = self._put(out, lc, positions, k, v, kn, vn)
        else:
            out = LSeq()
            append = out.append
            for vn in values:
                if vn.__class__ is _ScalarNode:
                    append(vn.value if vn.tag == _STR else _scalar(vn))
                else:
                    append(self._plain(vn, depth + 1))
                lc += (vn.start_mark.index, vn.end_mark.index)
        out.lc = array("q", lc)
        out.s = n.start_mark.index
        out.e = n.end_mark.index
        return out

    def _put(self, out: LMap, lc: list[int], positions: dict[str, int] | None, k: str, v: Any,
             kn: yaml.Node, vn: yaml.Node) -> dict[str, int] | None:
        """``k: v`` into ``out``, its positions onto ``lc``. A key met again is recorded as a duplicate,
        its value and positions replaced (the API server's lenient decoders keep the last value).
        Returns the key positions, made at the first repeated key of the mapping (no quadratic search)."""
        if k not in out:
            if positions is not None:
                positions[k] = len(out)
            out[k] = v
            lc += (kn.start_mark.index, kn.end_mark.index, vn.start_mark.index, vn.end_mark.index)
            return positions
        if positions is None:
            positions = {key: j for j, key in enumerate(out)}
        first = positions[k]
        self.duplicates.append((k, kn.start_mark.index, kn.end_mark.index, lc[first * 4]))
        out[k] = v
        lc[first * 4 : first * 4 + 4] = (kn.start_mark.index, kn.end_mark.index, vn.start_mark.index, vn.end_mark.index)
        return positions

    def walk(self, n: yaml.Node, depth: int) -> tuple[Any, int]:
        """(data, expanded node count). Scalars are handled inline by the parent: they are most nodes."""
        cls = n.__class__
        if cls is _ScalarNode:
            return _scalar(n), 1  # type: ignore[arg-type]
        i = id(n)
        memo = self.memo
        if memo is not None:
            if i in memo:
                size = self.sizes[i]
                if size < 0:
                    raise _LimitExceeded("recursive alias: a node contains itself", n.start_mark.index)
                return memo[i], size
            self.sizes[i] = -1
        if depth > self.limits.max_nesting:
            raise _LimitExceeded(
                f"nesting deeper than {self.limits.max_nesting} levels", n.start_mark.index
            )
        size = 1
        lc: list[int] = []  # positions; stored as an array (8 bytes each) once complete
        if cls is _MappingNode:
            out: Any = LMap()
            if memo is not None:
                memo[i] = out
            merges: list[yaml.Node] = []
            positions: dict[str, int] | None = None
            for kn, vn in n.value:
                k = _mapping_key(kn)
                if k is None:
                    merges.append(vn)
                    continue
                if vn.__class__ is _ScalarNode:
                    v = vn.value if vn.tag == _STR else _scalar(vn)
                    size += 1
                else:
                    v, sz = self.walk(vn, depth + 1)
                    size += sz
                positions = self._put(out, lc, positions, k, v, kn, vn)
            for mn in merges:
                size = self._merge(out, lc, mn, depth, size, n.start_mark.index)
        else:
            out = LSeq()
            if memo is not None:
                memo[i] = out
            append = out.append
            for vn in n.value:
                if vn.__class__ is _ScalarNode:
                    append(vn.value if vn.tag == _STR else _scalar(vn))
                    size += 1
                else:
                    v, sz = self.walk(vn, depth + 1)
                    size += sz
                    append(v)
                lc += (vn.start_mark.index, vn.end_mark.index)
        out.lc = array("q", lc)
        out.s = n.start_mark.index
        out.e = n.end_mark.index
        if memo is not None:
            self.sizes[i] = size
        if size > self.limits.max_expanded_nodes:
            raise self._expands_too_far(n.start_mark.index)
        return out, size

    def _expands_too_far(self, at: int) -> _LimitExceeded:
        return _LimitExceeded(
            f"document expands to more than {self.limits.max_expanded_nodes:,} nodes through aliases", at
        )

    def _merge(self, out: LMap, lc: list[int], mn: yaml.Node, depth: int, size: int, at: int) -> int:
        """Merge the mappings of a merge key's value ``mn`` into ``out`` (a mapping of ``size`` nodes so
        far, at offset ``at``); returns the size with them."""
        sources = mn.value if mn.__class__ is _SequenceNode else [mn]
        for src in sources:
            if src.__class__ is not _MappingNode:
                continue
            data, s = self.walk(src, depth + 1)
            size += s
            if size > self.limits.max_expanded_nodes:
                # refused before copying, as the mapping would be once complete: a long list of aliases to
                # a large mapping would otherwise copy its keys once per alias (text-sized times node-sized)
                raise self._expands_too_far(at)
            keys = list(data)
            for j, k in enumerate(keys):
                if k not in out:  # explicit keys win over merged ones
                    out[k] = data[k]
                    lc.extend(data.lc[j * 4 : j * 4 + 4])
        return size


# ----------------------------------------------------------------------------------------------
# the file loader

_SOURCE_RE = re.compile(r"^# Source: (\S.*?)\s*$", re.MULTILINE)
_SOURCE_TEXT = "# Source: "
# Go/Helm template actions that never appear in a rendered manifest. Plain `{{ $labels.x }}` is left
# alone: rendered PrometheusRules and Argo workflows carry such text legitimately.
_TEMPLATE_RE = re.compile(
    r"\{\{-?\s*(?:\.(?:Values|Release|Chart|Capabilities|Files|Template)\b"
    r"|(?:include|template|toYaml|toJson|tpl|required|if|else|end|range|with|define|block|fail)\b|/\*)"
)
_LINE_TEMPLATE_RE = re.compile(r"^[ \t]*\{\{", re.MULTILINE)
#: actions only Helm has (its objects and functions); Go's own `range`/`if`/`with`/`end` also appear
#: as data, in the middle of a string: a `kubectl get --template=...` argument, an Argo script
_HELM_ONLY_RE = re.compile(
    r"\{\{-?\s*(?:\.(?:Values|Release|Chart|Capabilities|Files|Template)\b"
    r"|(?:include|template|toYaml|toJson|tpl|required|define|block|fail)\b)"
)


def _wide(raw: bytes) -> bool:
    """UTF-16 or UTF-32 (a byte-order mark, or NULs among the first bytes)."""
    return raw.startswith((b"\xff\xfe", b"\xfe\xff")) or (
        len(raw) >= 4 and (raw[0] == 0 or raw[1] == 0) and b"\x00" in raw[:4])


def plain_text(raw: bytes, limits: Limits) -> str | None:
    """The text `load_bytes` decodes from ``raw``, without parsing; None where it would refuse the bytes."""
    if len(raw) > limits.max_file_bytes or _wide(raw):
        return None
    try:
        return (raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _decode(sf: SourceFile) -> bool:
    raw = sf.raw
    if _wide(raw):
        sf.problems.append(
            LoadProblem("DRA005", "file is UTF-16/UTF-32 encoded; Kubernetes manifests must be UTF-8",
                        Span(1, 1, 1, 1))
        )
        return False
    if raw.startswith(b"\xef\xbb\xbf"):
        sf.bom = True
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        before = raw[: e.start].decode("utf-8", "replace")
        line = before.count("\n") + 1
        col = len(before) - (before.rfind("\n") + 1) + 1
        sf.problems.append(
            LoadProblem("DRA005", f"not UTF-8 text: invalid byte 0x{raw[e.start]:02x}",
                        Span(line, col, line, col + 1))
        )
        return False
    nul = text.find("\x00")
    if nul != -1:
        sf.text = text
        line, col = sf.line_col(nul)
        sf.problems.append(LoadProblem("DRA005", "binary data: the file contains NUL bytes",
                                       Span(line, col, line, col + 1)))
        return False
    sf.text = text
    # the first line's ending decides (searching the whole text for a CRLF that is not there read
    # every file of a repository of LF files to its end)
    lf = text.find("\n")
    sf.newline = "\r\n" if lf > 0 and text[lf - 1] == "\r" else "\n"
    return True


def _template_problem(sf: SourceFile, block_lines: set[int] | None,
                      inline: list[tuple[int, int]] | None = None) -> LoadProblem | None:
    """Go/Helm template syntax outside comments and block scalars (``block_lines`` when the file parsed).

    ``inline``: the (start, end) offsets of the file's quoted and plain scalars when it parsed. A Go
    template action in the middle of such a string (after other text) is that program's data, unless
    it is one only Helm has: Helm writes a whole value, or the file would not parse as YAML.
    """
    hits = [m.start() for m in _TEMPLATE_RE.finditer(sf.text)]
    hits += [m.end() - 2 for m in _LINE_TEMPLATE_RE.finditer(sf.text)]
    starts = [a for a, _ in inline or ()]
    for start in sorted(set(hits)):
        line, col = sf.line_col(start)
        text = sf.line_text(line)
        if text.lstrip().startswith("#") or text[: col - 1].rstrip().endswith("#"):
            continue
        if block_lines is not None and line in block_lines:
            continue
        if inline:
            i = bisect.bisect_right(starts, start) - 1
            if i >= 0 and inline[i][0] <= start < inline[i][1] and \
                    sf.text[inline[i][0]: start].strip(" \t\r\n'\"") and not _HELM_ONLY_RE.match(sf.text, start):
                continue
        end = text.find("}}", col - 1)
        end_col = end + 3 if end != -1 else col + 2
        return LoadProblem(
            "DRA003",
            "unrendered template syntax `{{ … }}`: this file is a Helm/Go template, not a manifest; "
            "lint the output of `helm template` (or use --helm-chart) instead",
            Span(line, col, line, end_col),
        )
    return None


def _scalars(nodes: list[yaml.Node]) -> Iterator[yaml.ScalarNode]:
    """Every scalar node below ``nodes``, each once (an alias shares its node)."""
    stack = list(nodes)
    seen: set[int] = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.__class__ is _ScalarNode:
            yield n
        elif n.__class__ is _MappingNode:
            for k, v in n.value:
                stack.extend((k, v))
        else:
            stack.extend(n.value)


def _inline_scalar_spans(nodes: list[yaml.Node]) -> list[tuple[int, int]]:
    """(start, end) offsets of every quoted or plain scalar (not `|`/`>`), sorted."""
    return sorted((n.start_mark.index, n.end_mark.index) for n in _scalars(nodes) if n.style not in ("|", ">"))


def _block_scalar_lines(sf: SourceFile, nodes: list[yaml.Node]) -> set[int]:
    """1-based lines holding the content of `|`/`>` scalars (where template text is just data)."""
    out: set[int] = set()
    for n in _scalars(nodes):
        if n.style in ("|", ">"):
            out.update(range(n.start_mark.line + 2, n.end_mark.line + 2))
    return out


class TooDeep(yaml.YAMLError):
    """A side file nested more deeply than PyYAML's safe loader can follow (it recurses per level)."""

    def __str__(self) -> str:
        return "nested too deeply to read"


def side_yaml(text: str | bytes) -> Any:
    """`yaml.safe_load` for the small side files dralint reads whole: its configuration, a
    kustomization, Chart.yaml, a values file, an annotation. Manifests go through `load_bytes`, with
    its limits; here, nesting the loader cannot follow is a YAML error (`TooDeep`), not a crash."""
    try:
        # libyaml where PyYAML has it: ten times faster, and it stops at 1,000 levels of nesting itself
        return yaml.load(text, Loader=_SIDE_LOADER)  # a safe loader
    except RecursionError:
        raise TooDeep() from None


_SIDE_LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_side_file(path: str | os.PathLike[str], limit: int = Limits.max_file_bytes) -> bytes:
    """A side file's bytes, never more than ``limit``: a bigger one is an `OSError` (EFBIG), and so is
    anything but a regular file (a FIFO would block, a device never end), so each caller reports it
    the way it reports an unreadable file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with open(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        raw = fh.read(limit + 1)
    if len(raw) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit:,} bytes")
    return raw


def yaml_error_text(err: yaml.YAMLError) -> str:
    """What a PyYAML error says and where, without the excerpt of the file it appends.

    ``str(err)`` quotes the offending line with a caret under it; for a file behind a symlink that
    line can be a secret (``aws_secret_access_key = …``) printed into public CI logs. Kept: the
    context (``while parsing a flow mapping``) with its line and column, and the problem with its
    line and column.
    """
    if isinstance(err, yaml.reader.ReaderError):
        return f"not text: {err.reason} (character #x{err.character:04x}) at position {err.position}"
    if isinstance(err, TooDeep):
        return str(err)
    if not isinstance(err, yaml.MarkedYAMLError):
        return type(err).__name__  # raised by code, not by the parser: no position, and no text to trust
    parts = []
    if err.context:
        where = _at(err.context_mark) if err.context_mark is not None else ""
        parts.append(f"{err.context}{' ' + where if where else ''}")
    parts.append(f"{err.problem or 'invalid YAML'}{' ' + _at(err.problem_mark) if err.problem_mark else ''}")
    # the pure-Python parser also quotes names taken from the text (an alias, a tag): drop those too
    return _QUOTED.sub(_redact, ": ".join(parts))


_QUOTED = re.compile(r"'[^']*'")


def _redact(m: re.Match[str]) -> str:
    """Quoted text in a PyYAML message: grammar tokens ('<scalar>', ','), escapes and single
    characters stay; longer words were copied from the file."""
    q = m.group()
    return q if len(q) <= 3 or q[1] in "<\\" else "'…'"


def _at(mark: yaml.Mark) -> str:
    return f"at line {mark.line + 1}, column {mark.column + 1}"


def _yaml_error_problem(sf: SourceFile, err: yaml.YAMLError, offset_line: int = 0) -> LoadProblem:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    if isinstance(err, yaml.reader.ReaderError):
        line, col = sf.line_col(err.position)
        return LoadProblem("DRA005", f"not text: {err.reason}", Span(line, col, line, col + 1))
    # never str(err): it ends with an excerpt of the file (see `yaml_error_text`)
    problem = getattr(err, "problem", None) or type(err).__name__
    context = getattr(err, "context", None)
    msg = _QUOTED.sub(_redact, f"{context}: {problem}" if context and problem else str(problem))
    if mark is not None:
        line, col = mark.line + 1 + offset_line, mark.column + 1
    else:
        line, col = 1 + offset_line, 1
    opened_at = ""
    opened = getattr(err, "context_mark", None)
    if context and opened is not None and mark is not opened:
        # the error is where the parser gave up, often far below the `[`, `{` or quote left open:
        # say where that construct started, which is where the fix usually is
        what = re.sub(r"^while (?:parsing|scanning) (?:an? )?", "", str(context))
        start_line, start_col = opened.line + 1 + offset_line, opened.column + 1
        if (start_line, start_col) != (line, col):
            msg = _QUOTED.sub(_redact, str(problem))
            opened_at = f" (in the {what} that starts at line {start_line}, column {start_col})"
    code = "DRA001"
    if "maximum nesting depth" in msg:
        code = "DRA005"
        msg = f"nesting too deep for the YAML parser ({msg})"
    elif "\t" in sf.line_text(line)[: max(col, 1)] and "cannot start any token" in msg:
        msg += " (tab characters cannot be used for indentation in YAML)"
    return LoadProblem(code, f"YAML syntax error: {msg} at line {line}, column {col}{opened_at}",
                       Span(line, col, line, col + 1))


#: a column-0 document marker (`---` or `...`), where this loader splits a stream
DOC_MARKER = re.compile(r"^(---|\.\.\.)(?=[ \t\r\n]|$)", re.MULTILINE)


def _chunks(text: str) -> list[tuple[int, str]]:
    """Split a stream on column-0 document markers: (start offset, chunk text)."""
    out: list[tuple[int, str]] = []
    start = 0
    for m in DOC_MARKER.finditer(text):
        if m.start() > start or not out:
            out.append((start, text[start : m.start()]))
        start = m.start()
    out.append((start, text[start:]))
    return [(s, t) for s, t in out if t.strip()]


def _compose(sf: SourceFile, text: str, base: int, limits: Limits) -> list[Document]:
    docs: list[Document] = []
    if NATIVE is not None:
        found = NATIVE.compose(text, limits.max_nesting, limits.max_expanded_nodes)
        if found is not None:  # else the text holds what only the path below handles
            for data, start, end, null in found:
                if null:
                    continue
                if base:
                    _shift(data, base, set())
                docs.append(Document(len(docs), data, base + start, base + end))
            return docs
    # an alias needs an anchor (`&name`) and a reference (`*name`): text without one of the two
    # characters has no shared nodes, and the walk can skip remembering every node it visits
    aliases = "&" in text and "*" in text
    for node in yaml.compose_all(text, Loader=_Loader):
        if node is None or (node.__class__ is _ScalarNode and node.tag == _NULL):
            continue
        w = _Walker(limits, aliases)
        try:
            data = w.document(node)
        except _LimitExceeded as e:
            line, col = sf.line_col(base + e.offset)
            sf.problems.append(LoadProblem("DRA005", f"input refused: {e}", Span(line, col, line, col + 1),
                                           len(docs)))
            doc = Document(len(docs), None, base + node.start_mark.index, base + node.end_mark.index)
            doc.skip = True
            docs.append(doc)
            continue
        if base:
            _shift(data, base, set())
        doc = Document(len(docs), data, base + node.start_mark.index, base + node.end_mark.index)
        doc.duplicates = [(k, s + base, e + base, f + base) for k, s, e, f in w.duplicates]
        docs.append(doc)
    return docs


def compose_span(sf: SourceFile, start: int, end: int, limits: Limits) -> list[Document]:
    """The documents of ``sf.text[start:end]`` alone, at file offsets (a limit refused is a problem on
    ``sf``). Raises `yaml.YAMLError`. For a span that starts on a line and ends at a document marker
    or the end of the file, this is what parsing the whole file gives for those documents."""
    return _compose(sf, sf.text[start:end], start, limits)


def _shift(data: Any, base: int, seen: set[int]) -> None:
    """Move the offsets of a chunk parsed on its own to file offsets."""
    if not isinstance(data, (LMap, LSeq)) or id(data) in seen:
        return
    seen.add(id(data))
    data.s += base
    data.e += base
    data.lc = array("q", (x + base for x in data.lc))
    for v in data.values() if isinstance(data, LMap) else data:
        _shift(v, base, seen)


def _assign_sources(sf: SourceFile) -> None:
    if text_find(sf.text, _SOURCE_TEXT) == -1:
        return
    sources = _sources(sf.text)
    # both lists are in file order: one merge pass (a rendered chart can hold hundreds of documents)
    i = 0
    prev_end = -1
    for doc in sf.documents:
        best = None
        while i < len(sources) and sources[i][0] < doc.start:
            if sources[i][0] >= prev_end:
                best = sources[i][1]
            i += 1
        doc.source = best
        prev_end = doc.end


def _sources(text: str) -> list[tuple[int, str]]:
    """(offset, chart path) of each ``# Source:`` line: `_SOURCE_RE` tried where its text starts a line."""
    return [(at, m.group(1)) for at in line_starts_of(text, _SOURCE_TEXT)
            if (m := _SOURCE_RE.match(text, at)) is not None]


def line_starts_of(text: AnyStr, token: AnyStr) -> Iterator[int]:
    """Where ``token`` starts a line of ``text`` (after ``\\n``), in order: found with text searches, as a
    line-anchored regular expression is tried at every offset of the text. A token met inside a line
    skips the rest of that line."""
    nl = "\n" if isinstance(text, str) else b"\n"
    at = text_find(text, token)
    while at != -1:
        if at == 0 or text[at - 1 : at] == nl:
            yield at
            at = text_find(text, token, at + 1)
        else:
            eol = text.find(nl, at)
            at = -1 if eol == -1 else text_find(text, token, eol + 1)


def _json_fallback(sf: SourceFile) -> bool:
    try:
        data = json.loads(sf.text)
        # JSON may escape a lone surrogate (`"\\ud800"`), which no report can print: not text
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return False
    sf.documents = [Document(0, _plain_to_located(data, 0, len(sf.text)), 0, len(sf.text))]
    return True


def _json_syntax_problem(sf: SourceFile) -> LoadProblem | None:
    """DRA001 for a `.json` file that is not one JSON value, at the decoder's line and column."""
    try:
        json.loads(sf.text.removeprefix("\ufeff"))  # one value per file, as the YAML path reads it
    except json.JSONDecodeError as e:
        # e.msg is the decoder's own words ("Expecting value"); never str(e) with file text
        line, col = e.lineno, e.colno
        return LoadProblem("DRA001", f"JSON syntax error: {e.msg} at line {line}, column {col}",
                           Span(line, col, line, col + 1))
    except (RecursionError, ValueError):
        return None  # too deep for the decoder: the YAML path applies its nesting limit and says so
    return None


def _plain_to_located(data: Any, s: int, e: int) -> Any:
    """Wrap JSON data without positions: every node points at the whole document."""
    if isinstance(data, dict):
        m = LMap()
        for k, v in data.items():
            m[str(k)] = _plain_to_located(v, s, e)
        m.lc = array("q", [s, s, s, e] * len(m))
        m.s, m.e = s, e
        return m
    if isinstance(data, list):
        q = LSeq(_plain_to_located(v, s, e) for v in data)
        q.lc = array("q", [s, e] * len(q))
        q.s, q.e = s, e
        return q
    return data


def load_bytes(path: str, raw: bytes, limits: Limits | None = None) -> SourceFile:
    """Parse one file. Never raises for bad input; see `SourceFile.problems`."""
    limits = limits or Limits()
    try:
        return _load_bytes(path, raw, limits)
    except MemoryError:
        # millions of tiny nodes (a flow list of numbers) can exhaust memory below the size limit;
        # the half-built nodes are garbage now, so the run goes on with a finding for this file
        sf = SourceFile(path=path, raw=raw)
        sf.problems.append(LoadProblem(
            "DRA005", "input refused: the file has too many YAML nodes to parse within the memory limit",
            Span(1, 1, 1, 1)))
        return sf


def _load_bytes(path: str, raw: bytes, limits: Limits) -> SourceFile:
    sf = SourceFile(path=path, raw=raw, is_json=path.lower().endswith(".json"))
    if len(raw) > limits.max_file_bytes:
        sf.problems.append(
            LoadProblem("DRA005", f"file is {len(raw):,} bytes, over the {limits.max_file_bytes:,}-byte limit "
                        "(raise it with --max-file-size)", Span(1, 1, 1, 1))
        )
        return sf
    if not _decode(sf):
        return sf
    text = sf.text
    if len(text) > limits.max_file_tokens and text.count("\n") + text.count(",") > limits.max_file_tokens:
        sf.problems.append(LoadProblem(
            "DRA005", f"input refused: more than {limits.max_file_tokens:,} lines and list items in one file",
            Span(1, 1, 1, 1)))
        return sf
    if text_find(text, "{{") != -1:
        try:
            nodes = [n for n in yaml.compose_all(text, Loader=_Loader) if n is not None]
            block_lines: set[int] | None = _block_scalar_lines(sf, nodes)
            inline: list[tuple[int, int]] | None = _inline_scalar_spans(nodes)
        except yaml.YAMLError:
            block_lines = inline = None
        tp = _template_problem(sf, block_lines, inline)
        if tp is not None:
            sf.problems.append(tp)
            return sf
    if sf.is_json and text.lstrip("\ufeff \t\r\n")[:1] in ("{", "["):
        # kubectl decodes a file that starts with `{` or `[` as JSON: YAML accepts much that JSON
        # does not (a trailing comma, `"b": }`), so a YAML parse would call a broken file fine
        bad = _json_syntax_problem(sf)
        if bad is not None:
            sf.problems.append(bad)
            return sf
    try:
        sf.documents = _compose(sf, text, 0, limits)
    except yaml.YAMLError as err:
        if sf.is_json and _json_fallback(sf):
            return sf
        # lint what can be read: parse each document chunk on its own
        sf.documents = []
        for base, chunk in _chunks(text):
            try:
                for d in _compose(sf, chunk, base, limits):
                    d.index = len(sf.documents)
                    sf.documents.append(d)
            except yaml.YAMLError as cerr:
                offset_line = text.count("\n", 0, base)
                sf.problems.append(_yaml_error_problem(sf, cerr, offset_line))
        if not any(p.code in ("DRA001", "DRA005") for p in sf.problems):
            sf.problems.append(_yaml_error_problem(sf, err))
    except RecursionError:
        sf.problems.append(LoadProblem("DRA005", "nesting too deep to parse safely", Span(1, 1, 1, 1)))
        sf.documents = []
    _assign_sources(sf)
    return sf


# the native loader (`dralint/inputs/_yamlfast.c`), when the install built it: libyaml's events straight to
# LMap/LSeq data for most documents (see its opening comment); None otherwise (and with DRALINT_NO_NATIVE)
#: the `ABI` of `dralint/inputs/_yamlfast.c` this module is written for
NATIVE_ABI = 3


def _resolver_first_chars() -> str | None:
    """The characters a plain scalar must start with for an implicit resolver to look at it (a text
    starting with any other is a string); None when some resolver looks at every text."""
    keys = _RESOLVER.yaml_implicit_resolvers
    if None in keys or any(len(k) > 1 or not k.isascii() for k in keys if k is not None):
        return None
    return "".join(k for k in keys if k)


def _load_native() -> tuple[Any, str]:
    """The native module, set up, or None and why not (for --verbose)."""
    if os.environ.get("DRALINT_NO_NATIVE"):
        return None, "off: DRALINT_NO_NATIVE is set"
    try:
        module = importlib.import_module("dralint.inputs._yamlfast")  # built or not: no static import
    except ModuleNotFoundError:
        return None, "not built: installing dralint builds it where a C compiler and libyaml's headers exist"
    except ImportError as e:  # built, but libyaml's shared library is not found (a wheel from another machine)
        return None, f"not loaded ({e.msg.splitlines()[0] if e.msg else 'ImportError'})"
    if getattr(module, "ABI", None) != NATIVE_ABI:  # an editable install's module built from an older source
        return None, "out of date: install dralint again to rebuild it"
    module.setup(LMap, LSeq, array, _PLAIN_TAGS, _plain_tag, _scalar_of, _key_of, _STR, _resolver_first_chars())
    return module, ""


NATIVE, NATIVE_MISSING = _load_native()


def text_find(text: AnyStr, token: AnyStr, start: int = 0) -> int:
    """``text.find(token, start)``, searched by the C library when the native module is built: the
    whole-file searches for short tokens (`{{`, `# Source:`, a kind's name) run on every file."""
    found: int = NATIVE.find(text, token, start) if NATIVE is not None else text.find(token, start)
    return found
