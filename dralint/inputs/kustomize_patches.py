"""Which kustomize patch last set a field of a built object, and where in that patch it is.

`dralint.inputs.render` builds a kustomization with ``buildMetadata: [originAnnotations,
transformerAnnotations]``. The origin annotation names the file a resource came from; the
transformer annotation (``alpha.config.kubernetes.io/transformations``) lists, in the order they
ran, the kustomizations whose transformers changed the resource and the kind of each transformer
(``PatchTransformer``, ``PatchStrategicMergeTransformer``, ``PatchJson6902Transformer``, …). It does
NOT say which patch of a kustomization's list changed it, nor which field (checked with kubectl
v1.32 / kustomize v5.5). So the rest is dralint's own reading of the patch lists: for each
kustomization that patched the object, in the annotation's order, each patch of the list (in list
order) that targets the object (its ``target:`` selector, or the patch's own kind and name) and
contains the field's path (a strategic-merge document, walked by merge key; a JSON 6902 operation
whose ``path`` and ``value`` cover it). The last such patch is the one whose value the built object
has. A renderer without transformer annotations (an older kustomize) gets the same reading over
every kustomization of the tree, bases first, in kustomize's order of its patch transformers.

Patches are read from the user's files (their own lines and columns), never followed through a
symbolic link or out of the directories the kustomization reads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from dralint.inputs.index import Index, K8sObject, ValuesDoc, base_name
from dralint.inputs.load import Document, LMap, SourceFile, load_bytes, read_side_file, side_yaml
from dralint.inputs.locate import offsets
from dralint.inputs.render_spec import KUSTOMIZATION_NAMES
from dralint.knowledge.catalog import load_data
from dralint.model import JsonPath, Span

TRANSFORMATIONS_ANNOTATION = "alpha.config.kubernetes.io/transformations"
#: transformer kind (as the annotation names it) -> the kustomization field holding its patches
PATCH_FIELDS = {
    "PatchStrategicMergeTransformer": "patchesstrategicmerge",
    "PatchTransformer": "patches",
    "PatchJson6902Transformer": "patchesjson6902",
}
#: without the annotation: kustomize runs these built-ins of one kustomization in this order
FALLBACK_ORDER = ("PatchStrategicMergeTransformer", "PatchTransformer", "PatchJson6902Transformer")
STRATEGIC = "strategic-merge"
JSON6902 = "JSON 6902"
#: a patch file larger than this is not read (real patches are a few lines)
PATCH_MAX_BYTES = 4 << 20
_DIR_FIELDS = ("resources", "bases", "components")


@dataclass(frozen=True)
class Applied:
    """One kustomization's patch transformer that changed an object."""

    kustomization: Path  # the user's kustomization file
    transformer: str


@dataclass(frozen=True)
class PatchSite:
    file: Path  # the patch file, or the kustomization holding an inline patch
    span: Span
    style: str  # STRATEGIC or JSON6902
    kustomization: Path


@dataclass
class _Patch:
    style: str
    sf: SourceFile
    doc: Document
    file: Path
    kustomization: Path
    target: dict[str, Any] | None
    #: an inline patch: where its text starts in the kustomization (line offset, column offset)
    shift: tuple[int, int] | None = None
    #: an inline patch that is not a literal block: report at this span of the kustomization
    fallback: Span | None = None


# --------------------------------------------------------------------------------------------------
# the transformer annotation


def applied_from_annotation(data: Any, to_user: Callable[[str], Path | None]) -> list[Applied] | None:
    """The patch transformers the build annotation lists for an object, in order; None without one.

    ``to_user`` turns a ``configuredIn`` path (as kustomize wrote it, relative to the build root)
    into the user's kustomization file, or None when it is not one of them."""
    try:
        raw = data["metadata"]["annotations"][TRANSFORMATIONS_ANNOTATION]
    except (KeyError, TypeError):
        return None
    try:
        entries = side_yaml(raw)
    except yaml.YAMLError:
        return None
    if not isinstance(entries, list):
        return None
    out: list[Applied] = []
    for e in entries:
        if not isinstance(e, dict):
            continue
        by = e.get("configuredBy")
        kind = by.get("kind") if isinstance(by, dict) else None
        where = e.get("configuredIn")
        if kind not in PATCH_FIELDS or not isinstance(where, str):
            continue
        user = to_user(where)
        if user is not None:
            out.append(Applied(user, kind))
    return out


def applied_in_tree(directory: Path) -> list[Applied]:
    """Every kustomization of the tree with each patch transformer, in the order kustomize runs them:
    a kustomization's resources and components first, then its own patches."""
    out: list[Applied] = []
    seen: set[Path] = set()

    def visit(d: Path) -> None:
        real = Path(os.path.realpath(d))
        if real in seen:
            return
        seen.add(real)
        found = read_kustomization(real)
        if found is None:
            return
        kfile, data = found
        for fld in _DIR_FIELDS:
            entries = data.get(fld)
            for entry in entries if isinstance(entries, list) else ():
                if isinstance(entry, str) and "://" not in entry:
                    target = real / entry
                    if target.is_dir() and not target.is_symlink():
                        visit(target)
        out.extend(Applied(kfile, t) for t in FALLBACK_ORDER)

    visit(directory)
    return out


def read_kustomization(directory: Path) -> tuple[Path, dict[str, Any]] | None:
    """A directory's kustomization file and its fields (case-folded, as kustomize reads them).

    None when there is none, or it is a link, unreadable, over `PATCH_MAX_BYTES`, nested too deeply,
    or not a mapping. The offline check has refused such a file before any render
    reads it here; the read is bounded all the same, since the file may change in between.
    """
    for n in KUSTOMIZATION_NAMES:
        f = directory / n
        if f.is_symlink() or not f.is_file():
            continue
        try:
            data = side_yaml(read_side_file(f, PATCH_MAX_BYTES))
        except (OSError, yaml.YAMLError):
            return None
        if not isinstance(data, dict):
            return None
        return f, {str(k).casefold(): v for k, v in data.items()}
    return None


def entry_spec(transformer: str, entry: Any) -> dict[str, Any] | None:
    """One entry of a patch list as a mapping (``path``, ``patch``, ``target``). An entry of
    `patchesStrategicMerge` may be a plain string: a file name, or an inline patch when it spans lines."""
    if transformer == "PatchStrategicMergeTransformer" and isinstance(entry, str):
        return {"patch" if "\n" in entry else "path": entry}
    return entry if isinstance(entry, dict) else None


def patch_files(fields: Mapping[Any, Any], directory: str) -> set[str]:
    """The files a kustomization applies as patches (``fields``: its top-level fields, any case;
    ``directory``: where it is), as normalized paths joined to ``directory``."""
    folded = {str(k).casefold(): v for k, v in fields.items()}
    out: set[str] = set()
    for transformer, fld in PATCH_FIELDS.items():
        entries = folded.get(fld)
        for entry in entries if isinstance(entries, list) else ():
            spec = entry_spec(transformer, entry)
            path = spec.get("path") if spec is not None else None
            if isinstance(path, str) and path.strip():
                out.add(os.path.normpath(os.path.join(directory, path)))
    return out


def patched_by(index: Index, cache: dict[str, Any], path: str) -> str | None:
    """The display path of a kustomization of ``index`` that applies the file at ``path`` as a patch,
    or None. Every kustomization of the index is read on the first question (a streamed run asks
    once its whole index is there) and the answers are kept in ``cache``."""
    patches: dict[str, str] | None = cache.get("kustomize-patches")
    if patches is None:
        patches = {}  # kept once whole: a sealed index raises `NeedsIndex` on the way, to be asked again
        # a kustomization with apiVersion and kind is an object; without them, a values document
        units: list[K8sObject | ValuesDoc] = [*index.values_of_files(KUSTOMIZATION_NAMES),
                                              *index.of_kind("Kustomization", "Component")]
        for u in units:
            where = u.file.path
            if base_name(where) not in KUSTOMIZATION_NAMES:
                continue  # the name first: the data of a document from a summary is decoded when read
            data = u.data
            if isinstance(data, dict):
                for patch in sorted(patch_files(data, os.path.dirname(os.path.abspath(where)))):
                    patches.setdefault(patch, where)
        cache["kustomize-patches"] = patches
    return patches.get(os.path.abspath(path))  # absolute: a target may be named unlike its context


# --------------------------------------------------------------------------------------------------
# reading the patch lists


class PatchIndex:
    """The patches of a kustomization tree, read once, and the question: who set this field?"""

    def __init__(self, roots: Iterable[Path]) -> None:
        self._roots = [os.path.realpath(r) for r in roots]
        self._lists: dict[tuple[Path, str], list[_Patch]] = {}

    def last_setting(self, applied: Sequence[Applied], obj: Any, names: set[str],
                     path: JsonPath) -> PatchSite | None:
        """The patch that last set ``path`` of the built object ``obj`` (known by ``names``: its
        built name and the name it has in its origin file), or None when no patch did."""
        best: PatchSite | None = None
        done: set[Applied] = set()
        for a in applied:
            if a in done:  # one annotation entry per patch applied; the list is read once
                continue
            done.add(a)
            for patch in self._patches(a):
                if not _targets(patch, obj, names):
                    continue
                site = _strategic_site(patch, obj, path) if patch.style == STRATEGIC else _json_site(patch, obj, path)
                if site is not None:
                    best = site
        return best

    def _patches(self, a: Applied) -> list[_Patch]:
        key = (a.kustomization, a.transformer)
        if key not in self._lists:
            self._lists[key] = self._read_list(a)
        return self._lists[key]

    def _read_list(self, a: Applied) -> list[_Patch]:
        kfile = a.kustomization
        raw = self._read(kfile)
        if raw is None:
            return []
        ksf = load_bytes(str(kfile), raw)
        kdoc = next((d for d in ksf.documents if isinstance(d.data, LMap)), None)
        if kdoc is None:
            return []
        fld = next((k for k in kdoc.data if isinstance(k, str) and k.casefold() == PATCH_FIELDS[a.transformer]), None)
        entries = kdoc.data.get(fld) if fld is not None else None
        out: list[_Patch] = []
        for n, entry in enumerate(entries if isinstance(entries, list) else ()):
            at: JsonPath = (fld, n) if fld is not None else ()
            spec = entry_spec(a.transformer, entry)
            if spec is None:
                continue
            if isinstance(entry, str):
                out += self._from_entry(a, ksf, kdoc, at, spec, STRATEGIC)
            else:
                forced = JSON6902 if a.transformer == "PatchJson6902Transformer" else None
                out += self._from_entry(a, ksf, kdoc, (*at, "patch"), spec, forced)
        return out

    def _from_entry(self, a: Applied, ksf: SourceFile, kdoc: Document, inline_at: JsonPath,
                    entry: dict[str, Any], style: str | None) -> list[_Patch]:
        """The patch documents of one list entry; ``inline_at`` is where an inline patch's text is."""
        target = entry.get("target") if isinstance(entry.get("target"), dict) else None
        kdir = a.kustomization.parent
        shift: tuple[int, int] | None = None
        fallback: Span | None = None
        if isinstance(entry.get("path"), str):
            file = kdir / entry["path"]
            raw = self._read(file)
            if raw is None:
                return []
            sf = load_bytes(str(file), raw)
        elif isinstance(entry.get("patch"), str):
            file = a.kustomization
            sf = load_bytes(str(file), entry["patch"].encode("utf-8"))
            shift, fallback = _inline_shift(ksf, kdoc, inline_at)
        else:
            return []
        docs = [d for d in sf.documents if d.data is not None]
        if not docs:
            return []
        if style is None:  # `patches:` takes a list of operations for JSON 6902, else strategic merge
            style = JSON6902 if isinstance(docs[0].data, list) else STRATEGIC
        if style == JSON6902:
            docs = docs[:1]
        return [_Patch(style, sf, d, file, a.kustomization, target, shift, fallback) for d in docs]

    def _read(self, file: Path) -> bytes | None:
        """A patch or kustomization file's bytes: a regular file inside the roots, never through a link."""
        try:
            if file.is_symlink() or not file.is_file():
                return None
            real = os.path.realpath(file)
            if not any(real == r or real.startswith(r.rstrip("/") + "/") for r in self._roots):
                return None
            return read_side_file(real, PATCH_MAX_BYTES)
        except OSError:  # unreadable, not a regular file, or over the bound
            return None


def _inline_shift(ksf: SourceFile, kdoc: Document, at: JsonPath) -> tuple[tuple[int, int] | None, Span | None]:
    """Where an inline patch's text starts in the kustomization: a literal block (``patch: |``) keeps
    its lines, so a line of the patch is that many lines below the ``|``; anything else is reported
    at the ``patch:`` key."""
    start, _, complete = offsets(kdoc.data, at, "value")
    key_span = ksf.span(*offsets(kdoc.data, at, "key")[:2])
    if not complete or ksf.text[start:start + 1] != "|":
        return None, key_span
    bar_line = ksf.span(start, start).line
    lines = ksf.text.split("\n")
    for ln in lines[bar_line:]:
        if ln.strip():
            return (bar_line, len(ln) - len(ln.lstrip(" "))), None
    return None, key_span


# --------------------------------------------------------------------------------------------------
# does a patch target the object?


def _full(pattern: str, text: str) -> bool:
    try:
        return re.fullmatch(pattern, text) is not None
    except re.error:
        return pattern == text


def _labels_match(selector: str, labels: Any) -> bool:
    """Equality terms of a label selector (``a=b,c!=d,e``); set-based terms are taken as met: the
    annotation already says this kustomization patched the object."""
    have = labels if isinstance(labels, dict) else {}
    for term in (t.strip() for t in selector.split(",")):
        if not term or " in " in term or " notin " in term or "(" in term:
            continue
        if "!=" in term:
            k, v = (s.strip() for s in term.split("!=", 1))
            if str(have.get(k)) == v:
                return False
        elif "=" in term:
            k, v = (s.strip() for s in term.replace("==", "=").split("=", 1))
            if str(have.get(k)) != v:
                return False
        elif term.startswith("!"):
            if term[1:] in have:
                return False
        elif term not in have:
            return False
    return True


def _targets(patch: _Patch, obj: Any, names: set[str]) -> bool:
    if not isinstance(obj, dict):
        return False
    meta: dict[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
    api = str(obj.get("apiVersion") or "")
    group, _, version = api.rpartition("/")
    sel = patch.target
    if sel is None:
        if patch.style != STRATEGIC or not isinstance(patch.doc.data, dict):
            return False  # a JSON 6902 patch always names its target
        pmeta = patch.doc.data.get("metadata")
        pname = pmeta.get("name") if isinstance(pmeta, dict) else None
        return patch.doc.data.get("kind") == obj.get("kind") and isinstance(pname, str) and pname in names
    checks = (("kind", str(obj.get("kind") or "")), ("group", group), ("version", version))
    for key, have in checks:
        want = sel.get(key)
        if isinstance(want, str) and want and not _full(want, have):
            return False
    want_name = sel.get("name")
    if isinstance(want_name, str) and want_name and not any(_full(want_name, n) for n in names):
        return False
    for key, meta_key in (("labelSelector", "labels"), ("annotationSelector", "annotations")):
        want = sel.get(key)
        if isinstance(want, str) and want and not _labels_match(want, meta.get(meta_key)):
            return False
    return True


# --------------------------------------------------------------------------------------------------
# does a patch contain the field?


@cache
def _merge_keys() -> dict[str, str]:
    data = load_data("kubernetes/patch-merge-keys.yaml")
    keys = data.get("merge_keys") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in keys.items()} if isinstance(keys, dict) else {}


def _strategic_path(patch: Any, obj: Any, path: JsonPath) -> JsonPath | None:
    """``path`` of the built object as a path into a strategic-merge patch, or None when the patch
    does not hold it: list entries are found by their merge key (a container by its name), lists
    without one are replaced whole by a patch and keep their index."""
    keys = _merge_keys()
    out: list[str | int] = []
    node, built = patch, obj
    parent: str | None = None
    for step in path:
        if isinstance(step, str):
            if not isinstance(node, dict) or step not in node:
                return None
            node, built, parent = node[step], built.get(step) if isinstance(built, dict) else None, step
            out.append(step)
            continue
        if not isinstance(node, list) or not isinstance(built, list) or not 0 <= step < len(built):
            return None
        entry, key = built[step], keys.get(parent or "")
        index: int | None
        if key is not None and isinstance(entry, dict) and key in entry:
            index = next((i for i, e in enumerate(node) if isinstance(e, dict) and e.get(key) == entry[key]), None)
        else:
            index = step if step < len(node) else None
        if index is None:
            return None
        node, built = node[index], entry
        out.append(index)
    # `null` and `$patch: delete` remove what they name: such a patch did not set the field
    if node is None or (isinstance(node, dict) and node.get("$patch") == "delete"):
        return None
    return tuple(out)


def _site(patch: _Patch, at: JsonPath, on: str = "key") -> PatchSite:
    start, end, _ = offsets(patch.doc.data, at, "key" if on == "key" else "value")
    span = patch.sf.span(start, end)
    if patch.fallback is not None:
        span = patch.fallback
    elif patch.shift is not None:
        lines, cols = patch.shift
        span = Span(span.line + lines, span.column + cols, span.end_line + lines, span.end_column + cols)
    return PatchSite(patch.file, span, patch.style, patch.kustomization)


def _strategic_site(patch: _Patch, obj: Any, path: JsonPath) -> PatchSite | None:
    at = _strategic_path(patch.doc.data, obj, path)
    return None if at is None else _site(patch, at)


def _pointer(text: Any) -> list[str] | None:
    if not isinstance(text, str) or not text.startswith("/"):
        return None
    return [t.replace("~1", "/").replace("~0", "~") for t in text[1:].split("/")]


def _token_matches(token: str, step: str | int, built: Any) -> bool:
    if isinstance(step, str):
        return token == step
    if token == "-":  # appended: it was the last entry when the patch ran
        return isinstance(built, list) and step == len(built) - 1
    return token.isdigit() and int(token) == step


def _json_site(patch: _Patch, obj: Any, path: JsonPath) -> PatchSite | None:
    """The last operation of a JSON 6902 patch that set ``path`` (or a part of it)."""
    ops = patch.doc.data
    best: PatchSite | None = None
    for n, op in enumerate(ops if isinstance(ops, list) else ()):
        if not isinstance(op, dict) or op.get("op") not in ("add", "replace", "copy", "move"):
            continue
        tokens = _pointer(op.get("path"))
        if tokens is None:
            continue
        built, ok = obj, True
        for token, step in zip(tokens, path, strict=False):
            if not _token_matches(token, step, built):
                ok = False
                break
            built = _walk(built, (step,))
        if not ok:
            continue
        if len(tokens) > len(path) or op.get("op") in ("copy", "move"):
            best = _site(patch, (n, "path"), "value")  # it set a part of the field, or copied it there
            continue
        rest = path[len(tokens):]
        value = op.get("value")
        inner = _strategic_path(value, _walk(obj, path[:len(tokens)]), rest) if rest else ()
        if inner is None or (not rest and "value" not in op):
            continue
        best = _site(patch, (n, "value", *inner), "value" if not inner else "key")
    return best


def _walk(node: Any, path: JsonPath) -> Any:
    for step in path:
        present = (isinstance(node, dict) and step in node) or (
            isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node))
        if not present:
            return None
        node = node[step]
    return node


@dataclass
class KustomizeObject:
    """What attribution needs of one built object: its kustomization and the patches that ran."""

    directory: Path  # the kustomization directory given to dralint
    roots: list[Path] = field(default_factory=list)  # every directory the build reads
    applied: list[Applied] | None = None  # None: the renderer gave no transformer annotation


def origin_path(origin: Any, built: Any, path: JsonPath) -> JsonPath:
    """``path`` of the built object as a path into the object of its origin file.

    A strategic-merge patch moves the entries it touched to the front of a merged list, so a list
    index of the built object is not the index in the origin: entries are found by merge key. The
    path stops at a list whose entry the origin does not have (a patch added it), so the position
    is the list's, not another entry's."""
    keys = _merge_keys()
    out: list[str | int] = []
    node, cur = origin, built
    parent: str | None = None
    for step in path:
        if isinstance(step, str):
            out.append(step)
            node = node.get(step) if isinstance(node, dict) else None
            cur, parent = (cur.get(step) if isinstance(cur, dict) else None), step
            continue
        if not isinstance(cur, list) or not 0 <= step < len(cur) or not isinstance(node, list):
            out.append(step)
            node = cur = None
            continue
        entry, key = cur[step], keys.get(parent or "")
        if key is not None and isinstance(entry, dict) and key in entry:
            index = next((i for i, e in enumerate(node) if isinstance(e, dict) and e.get(key) == entry[key]), None)
            if index is None:
                break
        else:
            index = step
        out.append(index)
        node, cur = (node[index] if index < len(node) else None), entry
    return tuple(out)
