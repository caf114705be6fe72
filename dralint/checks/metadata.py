"""DRA008 and DRA110: what the API server checks on every object before its kind-specific rules.

- DRA008: a document with `apiVersion` but no `kind` (or the reverse) looks like an object but
  kubectl refuses to send it ("Object 'Kind' is missing"); the other rules skip it silently.
- DRA110: ObjectMeta as apimachinery's ValidateObjectMeta sees it: a name or generateName, the
  name format of the kind (`schemas/kubernetes/object-meta.yaml`), the namespace, label keys and
  values, annotation keys and their total size, finalizers and ownerReferences.

Name-format problems of resource.k8s.io objects used to be part of DRA104; they are reported
here only, once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from dralint.checks.conformance import is_dns_label, is_dns_subdomain, is_label_key, is_label_value
from dralint.checks.registry import Context, rule
from dralint.inputs.index import K8sObject, ValuesDoc
from dralint.inputs.locate import locate
from dralint.knowledge.catalog import load_data
from dralint.model import MEMO_KEY_CHARS, JsonPath, Violation

_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def _segment(s: str) -> bool:
    return s not in (".", "..") and "/" not in s and "%" not in s


def _label1035(s: str) -> bool:
    return len(s) <= 63 and _DNS1035.fullmatch(s) is not None


_FORMATS: dict[str, tuple[Callable[[str], bool], str]] = {
    "subdomain": (is_dns_subdomain, "a DNS subdomain (lower-case letters, digits, `-` and `.`, at most 253 "
                                    "characters, starting and ending with a letter or digit)"),
    "label": (is_dns_label, "a DNS label (lower-case letters, digits and `-`, at most 63 characters, starting "
                            "and ending with a letter or digit)"),
    "label1035": (_label1035, "a DNS-1035 label (lower-case letters, digits and `-`, at most 63 characters, "
                              "starting with a letter)"),
    "segment": (_segment, "a path segment (not `.` or `..`, no `/` or `%`)"),
}


@cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = load_data("kubernetes/object-meta.yaml")
    return data


def _name_format(group: str, kind: str) -> str:
    by_kind = _data()["names"].get(group) or {}
    return str(by_kind.get(kind) or by_kind.get("*") or "segment")


def _is_config_file(obj: K8sObject) -> bool:
    # kubelet/kubeadm/kustomize configurations carry apiVersion/kind but are never stored
    group = obj.group
    groups, dotted = _config_groups()
    return group in groups or group.endswith(dotted)


@cache
def _config_groups() -> tuple[frozenset[str], tuple[str, ...]]:
    """The configuration groups, and the endings of their subgroups (``.`` and a group)."""
    groups = _data()["config_groups_suffixes"]
    return frozenset(groups), tuple("." + g for g in groups)


def _templated(s: str) -> bool:
    return "{{" in s


# ----------------------------------------------------------------------------------------------
# DRA008


@rule("DRA008", scope="values")
def incomplete_type(vd: ValuesDoc, ctx: Context) -> Iterator[Violation]:
    data = vd.data
    if not isinstance(data, dict):
        return
    has = {k: isinstance(data.get(k), str) and bool(data.get(k)) for k in ("apiVersion", "kind")}
    # both missing: not an object at all (DRA002); only one: an object kubectl refuses. A values
    # file with a top-level `kind:` key is not an object: require a `metadata` mapping as well
    if has["apiVersion"] == has["kind"] or not isinstance(data.get("metadata"), dict):
        return
    missing, present = ("kind", "apiVersion") if has["apiVersion"] else ("apiVersion", "kind")
    span = locate(vd.file, vd.doc, (present,))
    yield Violation(
        f"document has `{present}` but no `{missing}`: kubectl refuses to apply it, and dralint checks "
        "nothing else in it",
        span=span,
    )


# ----------------------------------------------------------------------------------------------
# DRA110


def _check_name(obj: K8sObject, meta: dict[str, Any]) -> Iterator[Violation]:
    fmt = _name_format(obj.group, obj.kind or "")
    valid, what = _FORMATS[fmt]
    name, gen = meta.get("name"), meta.get("generateName")
    for key in ("name", "generateName"):
        value = meta.get(key)
        if value is not None and not isinstance(value, str):
            yield Violation(f"`metadata.{key}` must be a string, got {type(value).__name__}", ("metadata", key),
                            on="value")
    if not (isinstance(name, str) and name) and not (isinstance(gen, str) and gen):
        path: JsonPath = ("metadata", "name") if "name" in meta else (("metadata",) if "metadata" in obj.data else ())
        yield Violation(f"{obj.kind} has no `metadata.name` (and no `generateName`): the API server requires one "
                        "of them", path, on="value" if "name" in meta else "key")
        return
    if isinstance(name, str) and name and not _templated(name) and not valid(name):
        yield Violation(f"`metadata.name` \"{name}\" is not a valid {obj.kind} name: use {what}",
                        ("metadata", "name"), on="value")
    if isinstance(gen, str) and gen and not _templated(gen) and not (name and isinstance(name, str)):
        # the server appends a random suffix; the prefix must be valid once a trailing `-` is set aside
        stem = gen[:-1] if gen.endswith("-") and len(gen) > 1 else gen
        if not valid(stem):
            yield Violation(f"`metadata.generateName` \"{gen}\" is not a valid {obj.kind} name prefix: use {what}",
                            ("metadata", "generateName"), on="value")


def _check_namespace(obj: K8sObject, meta: dict[str, Any]) -> Iterator[Violation]:
    ns = meta.get("namespace")
    if ns is None or obj.kind in _data()["cluster_scoped"]:
        return
    if not isinstance(ns, str):
        yield Violation(f"`metadata.namespace` must be a string, got {type(ns).__name__}", ("metadata", "namespace"),
                        on="value")
    elif ns and not _templated(ns) and not is_dns_label(ns):
        yield Violation(f"`metadata.namespace` \"{ns}\" is not a valid namespace name: use a DNS label (lower-case "
                        "letters, digits and `-`, at most 63 characters)", ("metadata", "namespace"), on="value")


#: label (key, value) pairs found valid this run: the same few labels sit on most objects of a
#: repository, and they come early. Bounded, as the strings come from the linted files: at most
#: `_GOOD_MAX` entries of at most `MEMO_KEY_CHARS` characters (a valid pair without placeholders
#: has at most that many), so each of these memos stays under 2 MB
_GOOD_LABELS: set[tuple[str, str]] = set()
_GOOD_MAX = 1 << 12


def _check_labels(meta: dict[str, Any]) -> Iterator[Violation]:
    labels = meta.get("labels")
    if not isinstance(labels, dict):
        return
    good = _GOOD_LABELS
    for key, value in labels.items():
        plain = key.__class__ is str and value.__class__ is str
        if plain and (key, value) in good:
            continue
        found = list(_label_problems(key, value))
        yield from found
        # a pair with a template's placeholders passes at any length: only short ones are kept
        if plain and not found and len(good) < _GOOD_MAX and len(key) + len(value) <= MEMO_KEY_CHARS:
            good.add((key, value))


def _label_problems(key: Any, value: Any) -> Iterator[Violation]:
    path = ("metadata", "labels", key)
    if not isinstance(key, str) or (not _templated(key) and not is_label_key(key)):
        yield Violation(f"label key `{key}` is not valid: use `[prefix/]name`, the prefix a DNS subdomain, the "
                        "name at most 63 letters, digits, `-`, `_` or `.` starting and ending with a letter or "
                        "digit", path)
    limit = _data()["limits"]["label_value"]
    if value is None:
        return
    if not isinstance(value, str):
        yield Violation(f"label `{key}` has a {type(value).__name__} value; label values are strings: quote it",
                        path, on="value")
    elif _templated(value):
        return
    elif len(value) > limit:
        yield Violation(f"label `{key}` value is {len(value)} characters; the API server allows at most {limit}",
                        path, on="value")
    elif not is_label_value(value):
        yield Violation(f"label `{key}` value \"{value}\" is not valid: letters, digits, `-`, `_` and `.`, "
                        "starting and ending with a letter or digit", path, on="value")


#: annotation keys found valid this run (as `_GOOD_LABELS`)
_GOOD_NOTE_KEYS: set[str] = set()


def _plain_annotations(notes: Any) -> bool:
    """Whether `_check_annotations` finds nothing, by the short road: keys met before, string values,
    and a total that cannot reach the limit even at four bytes a character."""
    if not isinstance(notes, dict):
        return True
    good = _GOOD_NOTE_KEYS
    size = 0
    for key, value in notes.items():
        if key not in good or (value is not None and value.__class__ is not str):
            return False
        size += len(key) + (len(value) if value is not None else 0)
    limit: int = _data()["limits"]["annotations_total"]
    return size * 4 <= limit


def _check_annotations(meta: dict[str, Any]) -> Iterator[Violation]:
    notes = meta.get("annotations")
    if not isinstance(notes, dict):
        return
    total = 0
    good = _GOOD_NOTE_KEYS
    for key, value in notes.items():
        path = ("metadata", "annotations", key)
        # annotation keys are qualified names compared in lower case
        if not isinstance(key, str) or (not _templated(key) and not is_label_key(key.lower())):
            yield Violation(f"annotation key `{key}` is not valid: use `[prefix/]name` like a label key", path)
        elif key.__class__ is str and len(good) < _GOOD_MAX and len(key) <= MEMO_KEY_CHARS:
            good.add(key)
        if value is not None and not isinstance(value, str):
            yield Violation(f"annotation `{key}` has a {type(value).__name__} value; annotation values are strings: "
                            "quote it", path, on="value")
        total += len(str(key).encode()) + (len(value.encode()) if isinstance(value, str) else 0)
    limit = _data()["limits"]["annotations_total"]
    if total > limit:
        yield Violation(f"annotations total {total} bytes; the API server allows at most {limit} (256 KiB)",
                        ("metadata", "annotations"))


def _check_finalizers(meta: dict[str, Any]) -> Iterator[Violation]:
    fins = meta.get("finalizers")
    if not isinstance(fins, list):
        return
    for i, fin in enumerate(fins):
        if not isinstance(fin, str) or (not _templated(fin) and not is_label_key(fin)):
            yield Violation(f"finalizer {fin!r} is not a qualified name (`[prefix/]name`)",
                            ("metadata", "finalizers", i), on="value")


def _check_owners(meta: dict[str, Any]) -> Iterator[Violation]:
    owners = meta.get("ownerReferences")
    if not isinstance(owners, list):
        return
    for i, ref in enumerate(owners):
        if not isinstance(ref, dict):
            continue
        missing = [k for k in ("apiVersion", "kind", "name", "uid") if not (isinstance(ref.get(k), str) and ref[k])]
        if missing:
            yield Violation(f"`ownerReferences[{i}]` is missing {', '.join(f'`{m}`' for m in missing)}; the API "
                            "server requires apiVersion, kind, name and uid", ("metadata", "ownerReferences", i))


def _plainly_valid(obj: K8sObject, meta: dict[str, Any]) -> bool:
    """Whether the checks below find nothing, by a short road that covers most objects: a valid name,
    no generateName, a valid namespace or none, label pairs and annotation keys met before
    (`_GOOD_LABELS`, `_GOOD_NOTE_KEYS`), and no finalizers or owners. False means "look closer", not
    "invalid" (a generator per part was a visible cost on 20,000 objects that are nearly all fine)."""
    name = meta.get("name")
    if name.__class__ is not str or not name or meta.get("generateName") is not None:
        return False
    if meta.get("finalizers") is not None or meta.get("ownerReferences") is not None:
        return False
    if not _plain_annotations(meta.get("annotations")):
        return False
    if not (_FORMATS[_name_format(obj.group, obj.kind or "")][0](name) or _templated(name)):
        return False
    ns = meta.get("namespace")
    if ns is not None and (ns.__class__ is not str or ns not in _GOOD_NAMESPACES):
        if not (ns.__class__ is str and (not ns or _templated(ns) or is_dns_label(ns))):
            return False
        if len(_GOOD_NAMESPACES) < _GOOD_MAX and len(ns) <= MEMO_KEY_CHARS:
            _GOOD_NAMESPACES.add(ns)
    labels = meta.get("labels")
    if labels is None:
        return True
    if not isinstance(labels, dict):
        return False
    good = _GOOD_LABELS
    for k, v in labels.items():  # noqa: SIM110 (a loop, not a generator: this runs for every object)
        # only pairs of strings are in the set (a list as a value is not even hashable)
        if k.__class__ is not str or v.__class__ is not str or (k, v) not in good:
            return False
    return True


#: namespaces found valid this run: a repository has few (bounded as `_GOOD_LABELS`)
_GOOD_NAMESPACES: set[str] = set()


@rule("DRA110")
def invalid_object_metadata(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    if _is_config_file(obj):
        return  # tool configurations have no ObjectMeta
    raw = obj.data.get("metadata")
    if raw is not None and not isinstance(raw, dict):
        return  # the schema rule reports a metadata that is not a mapping
    meta = raw or {}
    if _plainly_valid(obj, meta):
        return
    yield from _check_name(obj, meta)
    yield from _check_namespace(obj, meta)
    yield from _check_labels(meta)
    yield from _check_annotations(meta)
    yield from _check_finalizers(meta)
    yield from _check_owners(meta)
