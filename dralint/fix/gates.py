"""The gates a fixed file passes before it is written: it re-parses without new problems (a JSON
file still as JSON), every document no fix touched is byte-identical, and object identities are
unchanged."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import yaml

from dralint.fix.splice import doc_regions
from dralint.inputs.index import objects_of
from dralint.inputs.load import SourceFile


def _identities(sf: SourceFile, di: int, skip: frozenset[int] | set[int] = frozenset()
                ) -> list[tuple[str | None, str | None, str | None, str]]:
    out = []
    doc = sf.documents[di]
    for obj in objects_of(sf, doc, True):
        bp: tuple[Any, ...] = tuple(getattr(obj, "base_path", ()))
        if skip and len(bp) == 2 and bp[0] == "items" and isinstance(bp[1], int) and bp[1] in skip:
            continue  # an object a fix inserted into a JSON List
        data: dict[str, Any] = obj.data if isinstance(obj.data, dict) else {}
        meta: dict[str, Any] = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
        av = data.get("apiVersion")
        group = av.rsplit("/", 1)[0] if isinstance(av, str) and "/" in av else ""
        out.append((str(data.get("kind")) if "kind" in data else None,
                    meta.get("namespace") if isinstance(meta.get("namespace"), str) else None,
                    meta.get("name") if isinstance(meta.get("name"), str) else None, group))
    return out


def verify(original: SourceFile, final: SourceFile, origin: Sequence[int | None], touched: set[int],
           new_items: dict[int, set[int]] | None = None,
           final_regions: dict[int, tuple[int, int]] | None = None,
           original_regions: dict[int, tuple[int, int]] | None = None) -> str | None:
    """The write gates for one file; the reason of the first failure, or None. ``new_items``: per
    document of the result, the `items` positions of objects inserted into a JSON List.
    ``final_regions``: the result's `doc_regions` when the caller derived them from its edits
    (`dralint.fix.derive`); otherwise they are read off ``final``. ``original_regions``: those of
    ``original`` when the caller has them already."""
    if original.is_json and _is_json(original.text) and not _is_json(final.text):
        # YAML accepts the result, but every JSON tool that reads this file would not
        return "the result is no longer valid JSON"
    before = Counter(p.code for p in original.problems if p.code in ("DRA001", "DRA003", "DRA005"))
    after = Counter(p.code for p in final.problems if p.code in ("DRA001", "DRA003", "DRA005"))
    if after - before:
        bad = next(p for p in final.problems if p.code in (after - before))
        return f"the result does not parse: {bad.message}"
    if len(final.documents) != len(origin):
        return f"the result has {len(final.documents)} documents where {len(origin)} were expected"
    try:
        r_before = doc_regions(original) if original_regions is None else original_regions
        r_after = doc_regions(final) if final_regions is None else final_regions
    except yaml.YAMLError as err:
        return f"the result does not parse: {err}"
    for k, o in enumerate(origin):
        if o is None:
            continue
        if o not in touched:
            a, b = r_before.get(o), r_after.get(k)
            if a is None or b is None or original.text[a[0]: a[1]] != final.text[b[0]: b[1]]:
                return f"document {o + 1}, which no fix touched, changed"
        skip = (new_items or {}).get(k, set())
        if not skip and final.documents[k].data is original.documents[o].data:
            continue  # the same objects (a document the result took over as it was): the same identities
        ids_a, ids_b = _identities(original, o), _identities(final, k, skip)
        if ids_a != ids_b:
            return f"the identity (kind, namespace, name or API group) of document {o + 1} changed"
    return None


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True
