"""Move a finding on a built kustomization to the patch that last set its field.

`dralint.engine.rendered` first places a kustomize finding in the resource's origin file (the
``config.kubernetes.io/origin`` of the build); when an overlay's patch set the offending field
(`dralint.inputs.kustomize_patches` says which and where), the finding moves to that patch's own
line and column, and keeps the origin in ``extra["origin"]`` and the patch in ``extra["patch"]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dralint.inputs.kustomize_patches import KustomizeObject, PatchIndex, applied_in_tree, origin_path
from dralint.inputs.load import Document, SourceFile
from dralint.inputs.locate import locate
from dralint.inputs.render import Rendered
from dralint.model import Finding


def _shown(p: Path) -> str:
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def _built_object(rendered: Rendered, f: Finding) -> KustomizeObject | None:
    if f.object is None:
        return None
    key = (f.path, f.object.kind or "", f.object.namespace or "", f.object.name or "")
    found = rendered.kustomize.get(key)
    if found is None:  # a namespace the lint filled in (`default`) that the build did not write
        found = next((v for k, v in rendered.kustomize.items()
                      if (k[0], k[1], k[3]) == (key[0], key[1], key[3])), None)
    return found


def _names(f: Finding, origin: SourceFile) -> set[str]:
    """The built name and the names the object may have had before name prefixes and suffixes."""
    name = f.object.name if f.object else None
    names = {name} if isinstance(name, str) else set()
    kind = f.object.kind if f.object else None
    for doc in origin.documents:
        data = doc.data
        meta = data.get("metadata") if isinstance(data, dict) else None
        own = meta.get("name") if isinstance(meta, dict) else None
        if isinstance(data, dict) and data.get("kind") == kind and isinstance(own, str) and isinstance(name, str) \
                and own in name:
            names.add(own)
    return names


def _object_data(built: SourceFile, f: Finding) -> Any:
    if not 0 <= f.doc_index < len(built.documents):
        return None
    node = built.documents[f.doc_index].data
    for step in f.base_path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _origin_doc(f: Finding, origin: SourceFile) -> Document | None:
    """The object's document in its origin file: same kind, the name the build started from."""
    name = f.object.name if f.object else None
    kind = f.object.kind if f.object else None
    best: Document | None = None
    for doc in origin.documents:
        data = doc.data
        meta = data.get("metadata") if isinstance(data, dict) else None
        own = meta.get("name") if isinstance(meta, dict) else None
        if not isinstance(data, dict) or data.get("kind") != kind or not isinstance(own, str) \
                or not isinstance(name, str):
            continue
        if own == name:
            return doc
        if best is None and own in name:
            best = doc
    return best


def to_patch(f: Finding, built: SourceFile, rendered: Rendered, origin: SourceFile,
             indexes: dict[Path, PatchIndex]) -> bool:
    """Move ``f`` (already at its place in ``origin``) to the patch that set its field; False when
    no patch did, or the object is not a built one. Without a patch, the place in ``origin`` is
    found again with list entries matched by merge key (a patch reorders merged lists)."""
    ko = _built_object(rendered, f)
    if ko is None:
        return False
    obj = _object_data(built, f)
    if not isinstance(obj, dict):
        return False
    doc = _origin_doc(f, origin)
    if doc is not None:
        f.span = locate(origin, doc, origin_path(doc.data, obj, f.obj_path), "key")
    index = indexes.get(ko.directory)
    if index is None:
        index = indexes[ko.directory] = PatchIndex(ko.roots)
    applied = ko.applied if ko.applied is not None else applied_in_tree(ko.directory)
    site = index.last_setting(applied, obj, _names(f, origin), f.obj_path)
    if site is None:
        return False
    patch, kustomization = _shown(site.file), _shown(site.kustomization)
    f.extra["origin"] = {"path": f.path, "line": f.span.line, "column": f.span.column}
    f.extra["patch"] = {"path": patch, "kustomization": kustomization, "style": site.style}
    where = "inline" if site.file == site.kustomization else ""
    f.message = (f"{f.message} (set by the {where + ' ' if where else ''}{site.style} patch of "
                 f"`{kustomization}`; the resource is in `{f.path}`)")
    f.path = patch
    f.span = site.span
    return True
