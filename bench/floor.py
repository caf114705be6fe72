#!/usr/bin/env python3
"""The floor for a manifest linter: find the YAML files, read them, parse them with positions. Nothing else.

    python bench/floor.py CORPUS [--workers N] [--parser compose|dralint]

``compose`` (the default, the floor the targets are measured against): PyYAML's C composer (libyaml),
with the same memoised tag resolver dralint uses, plus a minimal walk that turns nodes into dicts and
lists holding the start and end offset of every key and value, i.e. the cheapest parse that still
lets a linter point at a line and column. ``compose-stock`` is the same with PyYAML's own resolver.
``dralint``: `dralint.inputs.load.load_bytes`, dralint's own loader (decode, template scan, YAML 1.1 scalars,
duplicate keys, limits), for comparison.

``--workers N`` > 1 parses in a fork pool, files handed out in chunks, only counts sent back (as a
parallel linter sends back only its findings). Run it as a whole process: startup is part of the cost.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
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


def parse_compose(raw: bytes, loader: Any = COMPOSE_LOADER) -> int:
    n = 0
    for node in yaml.compose_all(raw, Loader=loader):
        if node is not None and not (node.__class__ is yaml.ScalarNode and node.tag == _NULL):
            build(node, {})
            n += 1
    return n


def parse_dralint(raw: bytes) -> int:
    from dralint.inputs.load import load_bytes

    return len(load_bytes("x.yaml", raw).documents)


def parse_compose_stock(raw: bytes) -> int:
    return parse_compose(raw, StockLoader)


PARSERS = {"compose": parse_compose, "compose-stock": parse_compose_stock, "dralint": parse_dralint}
PARSER = "compose"


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
    ap.add_argument("--parser", choices=sorted(PARSERS), default="compose")
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
