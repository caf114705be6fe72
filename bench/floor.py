#!/usr/bin/env python3
"""The floor for a manifest linter: find the YAML files, read them, parse them with positions. Nothing else.

    python bench/floor.py CORPUS [--workers N] [--parser located|compose|compose-stock|dralint]

``located`` (the default): the floor the performance issue defines its targets against, as the
performance baseline measured it: PyYAML's C composer (libyaml) with PyYAML's own tag resolver, and
a walk that turns nodes into dicts and lists remembering 0-based (line, column) marks: where each
collection starts and, per key, where the key and its value start. ``compose`` is stricter: the same
composer with the memoised resolver dralint uses, and start and end offsets instead of marks (about
30 % cheaper); ``compose-stock`` is that walk with PyYAML's own resolver. ``dralint``:
`dralint.inputs.load.load_bytes`, dralint's own loader (decode, template scan, YAML 1.1 scalars,
duplicate keys, limits), for comparison.

``--workers N`` > 1 parses in a fork pool, files handed out in chunks, only counts sent back (as a
parallel linter sends back only its findings). Run it as a whole process: startup is part of the cost.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

import yaml

try:
    from yaml import CSafeLoader as StockLoader
except ImportError:  # pragma: no cover - PyYAML without libyaml
    from yaml import SafeLoader as StockLoader  # type: ignore[assignment]

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run from a checkout
from dralint.inputs.load import COMPOSE_LOADER

_MAP, _SEQ = yaml.MappingNode, yaml.SequenceNode


class PMap(dict):  # type: ignore[type-arg]
    __slots__ = ("pos",)


class PSeq(list):  # type: ignore[type-arg]
    __slots__ = ("pos",)


_STR, _INT, _BOOL = "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:bool"
_NULL, _FLOAT = "tag:yaml.org,2002:null", "tag:yaml.org,2002:float"
_scalars = yaml.SafeLoader.__new__(yaml.SafeLoader)  # only its int/float constructors are used


def scalar(node: yaml.ScalarNode) -> Any:
    """Resolve a scalar the YAML 1.1 way (as Kubernetes reads manifests): ints, floats, booleans, null."""
    tag = node.tag
    if tag == _STR:
        return node.value
    if tag == _INT:
        return _scalars.construct_yaml_int(node)
    if tag == _BOOL:
        return node.value.lower() in ("yes", "true", "on", "y")
    if tag == _NULL:
        return None
    if tag == _FLOAT:
        return _scalars.construct_yaml_float(node)
    return node.value


def build(node: yaml.Node, seen: dict[int, Any]) -> Any:
    """Plain data with offsets: (key start, key end, value start, value end) per key; (start, end) per item."""
    cls = node.__class__
    if cls is yaml.ScalarNode:
        return scalar(node)
    if id(node) in seen:  # an alias: the same node again
        return seen[id(node)]
    if cls is _MAP:
        m = PMap()
        seen[id(node)] = m
        pos = []
        for k, v in node.value:
            m[k.value if k.__class__ is yaml.ScalarNode else repr(k)] = build(v, seen)
            pos += (k.start_mark.index, k.end_mark.index, v.start_mark.index, v.end_mark.index)
        m.pos = pos
        return m
    s = PSeq()
    seen[id(node)] = s
    pos = []
    for v in node.value:
        s.append(build(v, seen))
        pos += (v.start_mark.index, v.end_mark.index)
    s.pos = pos
    return s


class MarkedMap(dict):  # type: ignore[type-arg]
    __slots__ = ("lc", "pos")


class MarkedSeq(list):  # type: ignore[type-arg]
    __slots__ = ("lc", "pos")


def build_located(node: yaml.Node, seen: dict[int, Any]) -> Any:
    """Plain data with 0-based (line, column) marks: ``pos``, where a collection starts; ``lc``, per
    key the key's and the value's start (a dict by key), per item its start (a list)."""
    cls = node.__class__
    if cls is yaml.ScalarNode:
        return scalar(node)
    if id(node) in seen:  # an alias: the same node again
        return seen[id(node)]
    start = node.start_mark
    if cls is _MAP:
        m = MarkedMap()
        seen[id(node)] = m
        marks: dict[Any, tuple[int, int, int, int]] = {}
        for k, v in node.value:
            key = k.value if k.__class__ is yaml.ScalarNode else repr(k.value)
            m[key] = build_located(v, seen)
            km, vm = k.start_mark, v.start_mark
            marks[key] = (km.line, km.column, vm.line, vm.column)
        m.lc = marks
        m.pos = (start.line, start.column)
        return m
    s = MarkedSeq()
    seen[id(node)] = s
    items: list[tuple[int, int]] = []
    for v in node.value:
        s.append(build_located(v, seen))
        vm = v.start_mark
        items.append((vm.line, vm.column))
    s.lc = items
    s.pos = (start.line, start.column)
    return s


def _roots(raw: bytes, loader: Any) -> Iterator[yaml.Node]:
    """The root node of each document of ``raw`` that holds something (an empty one composes to null)."""
    for node in yaml.compose_all(raw, Loader=loader):
        if node is not None and not (node.__class__ is yaml.ScalarNode and node.tag == _NULL):
            yield node


def parse_located(raw: bytes) -> int:
    # a file's documents are all kept until the file is done, as the baseline's floor keeps them
    return len([build_located(node, {}) for node in _roots(raw, StockLoader)])


def parse_compose(raw: bytes, loader: Any = COMPOSE_LOADER) -> int:
    n = 0
    for node in _roots(raw, loader):
        build(node, {})
        n += 1
    return n


def parse_dralint(raw: bytes) -> int:
    from dralint.inputs.load import load_bytes

    return len(load_bytes("x.yaml", raw).documents)


def parse_compose_stock(raw: bytes) -> int:
    return parse_compose(raw, StockLoader)


PARSERS = {"located": parse_located, "compose": parse_compose, "compose-stock": parse_compose_stock,
           "dralint": parse_dralint}
PARSER = "located"


def find(root: str) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        out += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith((".yaml", ".yml", ".json"))]
    return out


def work(paths: list[str]) -> tuple[int, int, int]:
    parse = PARSERS[PARSER]
    docs = size = failed = 0
    for p in paths:
        with open(p, "rb") as fh:
            raw = fh.read()
        size += len(raw)
        try:
            docs += parse(raw)
        except yaml.YAMLError:
            failed += 1
    return docs, size, failed


def main(argv: list[str] | None = None) -> int:
    global PARSER
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--parser", choices=sorted(PARSERS), default="located")
    ap.add_argument("--chunk", type=int, default=16)
    a = ap.parse_args(argv)
    PARSER = a.parser
    t0 = time.perf_counter()
    paths = find(a.corpus)
    if a.workers <= 1:
        docs, size, failed = work(paths)
    else:
        import multiprocessing as mp

        chunks = [paths[i : i + a.chunk] for i in range(0, len(paths), a.chunk)]
        docs = size = failed = 0
        with mp.get_context("fork").Pool(a.workers) as pool:
            for d, s, f in pool.imap_unordered(work, chunks):
                docs, size, failed = docs + d, size + s, failed + f
    print(f"parser={a.parser} workers={a.workers} files={len(paths)} docs={docs} failed={failed} "
          f"MB={size / 1e6:.2f} seconds={time.perf_counter() - t0:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
