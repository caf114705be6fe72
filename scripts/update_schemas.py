#!/usr/bin/env python3
"""Regenerate ``schemas/kubernetes/`` (JSON schemas per Kubernetes minor) from a pinned source.

Source: the ``kubernetes-validate`` wheel on PyPI, an exact pinned version whose sha256 is checked
before anything is read. It carries JSON schemas generated from the Kubernetes OpenAPI for each
minor; we read the *strict* variant (``additionalProperties: false`` everywhere), whose types all
live in one ``kubernetes_validate/kubernetes-json-schema/v1.<minor>.0-local-strict/_definitions.json``.
The wheel is a development-time input only: dralint reads the files this script writes.

What is written (all of it deterministic: running the script twice gives identical bytes):

- ``schemas/kubernetes/openapi/defs.json`` — a content-addressed store of type definitions.
  Each key is ``<definition name>@<first 12 hex digits of the sha256 of its canonical JSON>``;
  a definition that did not change between minors is stored once. One entry per line, keys
  sorted, so that a regeneration diff shows exactly which types changed.
- ``schemas/kubernetes/<minor>/index.json`` — for one minor: ``kinds`` maps
  ``<apiVersion>/<Kind>`` (``resource.k8s.io/v1/ResourceClaim``, ``v1/PodSpec``) to the root
  definition name, and ``defs`` maps every definition name that minor needs to its hash in the
  store. `dralint.knowledge.schema` assembles a self-contained schema per kind from these two files.

Covered: every kind of the ``resource.k8s.io`` group that each minor's OpenAPI lists, in every
version (except the ``*List``, ``DeleteOptions`` and ``WatchEvent`` envelopes), plus
``core/v1`` PodSpec and PodTemplateSpec, so that pod templates of every workload kind can be
checked for misplaced DRA fields.

Rewrites applied to the upstream schemas, and why:
- ``description``, ``default``, ``readOnly`` and ``x-kubernetes-*`` annotations are dropped: they
  are not validation keywords and make up ~75 % of the bytes.
- ``oneOf`` whose branches are only ``{type: [...]}`` (Quantity, IntOrString) becomes one merged
  ``type`` list. Upstream both branches allow ``null``, so an explicit ``null`` matched both and
  failed "oneOf" in every validator; and a merged type gives a readable error message.

Usage::

    python scripts/update_schemas.py            # download the pinned wheel, regenerate
    python scripts/update_schemas.py --wheel kubernetes_validate-1.37.0-py3-none-any.whl
    python scripts/update_schemas.py --check    # exit 1 when the committed files are stale
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

PACKAGE = "kubernetes-validate"
VERSION = "1.37.0"
WHEEL = f"kubernetes_validate-{VERSION}-py3-none-any.whl"
SHA256 = "85136d018a27b50ec7fc049d902bfa5193f5976807e6c0f408e3ab6fe078cad9"
MINORS = ("1.32", "1.33", "1.34", "1.35", "1.36", "1.37")
GROUP = "resource.k8s.io"
#: core types validated wherever a pod template appears
CORE_ROOTS = {"v1/PodSpec": "io.k8s.api.core.v1.PodSpec", "v1/PodTemplateSpec": "io.k8s.api.core.v1.PodTemplateSpec"}
#: GVK entries in the OpenAPI that are API envelopes, not objects anyone writes
ENVELOPES = frozenset({"DeleteOptions", "WatchEvent"})
#: annotation keywords (no effect on validation) removed from every schema node
DROP_KEYS = frozenset({"description", "default", "readOnly", "$comment", "example", "examples"})
#: keywords whose value is a map of name -> subschema (the names themselves are field names: keep them)
MAP_KEYWORDS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
#: keywords whose value is one subschema
SCHEMA_KEYWORDS = frozenset({"additionalProperties", "items", "not", "contains", "propertyNames", "if", "then", "else",
                             "unevaluatedProperties", "unevaluatedItems", "additionalItems"})
#: keywords whose value is a list of subschemas
LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "schemas" / "kubernetes"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def def_hash(schema: Any) -> str:
    return hashlib.sha256(canonical(schema).encode()).hexdigest()[:12]


def clean(node: Any) -> Any:
    """A schema node without annotations, with pure-type ``oneOf`` unions merged."""
    if isinstance(node, bool) or not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in DROP_KEYS or key.startswith("x-kubernetes-"):
            continue
        if key in MAP_KEYWORDS and isinstance(value, dict):
            out[key] = {name: clean(sub) for name, sub in value.items()}
        elif key in SCHEMA_KEYWORDS:
            out[key] = clean(value)
        elif key in LIST_KEYWORDS and isinstance(value, list):
            out[key] = [clean(sub) for sub in value]
        else:
            out[key] = value
    merged = _merge_type_union(out.get("oneOf"))
    if merged is not None:
        del out["oneOf"]
        out["type"] = merged
    return out


def _merge_type_union(branches: Any) -> list[str] | None:
    if not isinstance(branches, list) or not branches:
        return None
    types: list[str] = []
    for b in branches:
        if not isinstance(b, dict) or set(b) != {"type"}:
            return None
        for t in b["type"] if isinstance(b["type"], list) else [b["type"]]:
            if t not in types:
                types.append(t)
    # keep a stable order independent of upstream branch order
    order = ["string", "integer", "number", "boolean", "object", "array", "null"]
    return sorted(types, key=lambda t: order.index(t) if t in order else len(order))


def refs_of(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                out.add(v.rsplit("/", 1)[-1])
            else:
                refs_of(v, out)
    elif isinstance(node, list):
        for v in node:
            refs_of(v, out)


def closure(defs: dict[str, Any], roots: list[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in defs:
            raise SystemExit(f"dangling $ref to {name!r}")
        seen.add(name)
        found: set[str] = set()
        refs_of(defs[name], found)
        todo.extend(found - seen)
    return seen


def group_kinds(defs: dict[str, Any]) -> dict[str, str]:
    """``resource.k8s.io/<version>/<Kind>`` -> definition name, from x-kubernetes-group-version-kind."""
    out: dict[str, str] = {}
    for name, schema in defs.items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            kind = gvk.get("kind", "")
            if gvk.get("group") != GROUP or kind in ENVELOPES or kind.endswith("List"):
                continue
            out[f"{GROUP}/{gvk['version']}/{kind}"] = name
    return out


def build(definitions: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(store, per-minor index) from each minor's upstream ``$defs``."""
    store: dict[str, Any] = {}
    indexes: dict[str, dict[str, Any]] = {}
    for minor, defs in definitions.items():
        kinds = dict(sorted(group_kinds(defs).items()))
        kinds.update(CORE_ROOTS)
        needed = closure(defs, sorted(set(kinds.values())))
        table: dict[str, str] = {}
        for name in sorted(needed):
            schema = clean(defs[name])
            h = def_hash(schema)
            store[f"{name}@{h}"] = schema
            table[name] = h
        indexes[minor] = {
            "source": {"package": PACKAGE, "version": VERSION, "sha256": SHA256,
                       "schemas": f"v{minor}.0-local-strict"},
            "kinds": kinds,
            "defs": table,
        }
    return dict(sorted(store.items())), indexes


def render_store(store: dict[str, Any]) -> str:
    lines = [f"{json.dumps(k)}:{canonical(v)}" for k, v in store.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def render_index(index: dict[str, Any]) -> str:
    return json.dumps(index, indent=1, sort_keys=False, ensure_ascii=True) + "\n"


def download(dest: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--disable-pip-version-check",
         "-d", str(dest), f"{PACKAGE}=={VERSION}"],
        check=True, stdout=subprocess.DEVNULL,
    )
    return dest / WHEEL


def verify(wheel: Path) -> None:
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"{wheel}: sha256 {digest} does not match the pinned {SHA256}")


def read_definitions(wheel: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    with zipfile.ZipFile(wheel) as zf:
        for minor in MINORS:
            member = f"kubernetes_validate/kubernetes-json-schema/v{minor}.0-local-strict/_definitions.json"
            out[minor] = json.loads(zf.read(member))["$defs"]
    return out


def render_all(wheel: Path) -> dict[str, str]:
    """Relative path -> file text, for everything this script owns."""
    verify(wheel)
    store, indexes = build(read_definitions(wheel))
    files = {"openapi/defs.json": render_store(store)}
    for minor, index in indexes.items():
        files[f"{minor}/index.json"] = render_index(index)
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", type=Path, help=f"use this local {WHEEL} instead of downloading it")
    ap.add_argument("--out", type=Path, default=OUT, help="output directory (default: schemas/kubernetes)")
    ap.add_argument("--check", action="store_true", help="compare with the files on disk; write nothing")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dralint-schemas-") as tmp:
        wheel = args.wheel or download(Path(tmp))
        files = render_all(wheel)
    stale = [rel for rel, text in files.items()
             if not (args.out / rel).is_file() or (args.out / rel).read_text(encoding="utf-8") != text]
    if args.check:
        for rel in stale:
            print(f"stale: {args.out / rel}", file=sys.stderr)
        return 1 if stale else 0
    for rel, text in files.items():
        path = args.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    total = sum(len(t.encode()) for t in files.values())
    print(f"wrote {len(files)} files, {total:,} bytes ({len(stale)} changed) under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
