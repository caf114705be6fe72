#!/usr/bin/env python3
"""Where a check's time goes: loading, the index, and each rule, on one corpus, in one process.

    python bench/rule_costs.py CORPUS [--select DRA3] [--top 15]

Each rule function is wrapped with a timer (time spent inside its generator, including the
positions and messages it builds); the rest of the run is split into read+parse, index, and
findings/suppressions. Use it before and after a change to a rule; use bench/run.py for the
whole-process numbers and py-spy or pyinstrument for line-level detail.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dralint.checks.registry import load_checks
from dralint.engine.config import build_config
from dralint.engine.lazy import Input
from dralint.engine.memory import quiet_gc, trees_built
from dralint.engine.runner import limits_for
from dralint.inputs.files import discover
from dralint.inputs.index import Index


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--select", action="append")
    ap.add_argument("--top", type=int, default=20)
    a = ap.parse_args(argv)
    raw_cfg: dict[str, Any] = {"select": a.select} if a.select else {}
    config = build_config(raw_cfg, None, Path.cwd())
    registry = load_checks()
    spent: dict[str, float] = dict.fromkeys(registry, 0.0)
    calls: dict[str, int] = dict.fromkeys(registry, 0)

    def timed(code: str, fn: Any) -> Any:
        def wrapper(unit: Any, ctx: Any) -> Iterator[Any]:
            t = time.perf_counter()
            calls[code] += 1
            it = fn(unit, ctx)
            try:
                while True:
                    try:
                        v = next(it)
                    except StopIteration:
                        return
                    spent[code] += time.perf_counter() - t
                    yield v
                    t = time.perf_counter()
            finally:
                spent[code] += time.perf_counter() - t

        return wrapper

    for code, impl in list(registry.items()):
        registry[code] = dataclasses.replace(impl, fn=timed(code, impl.fn))

    from dralint.engine.runner import _Runner

    limits = limits_for(config)
    with quiet_gc():
        return measure(a, config, limits, spent, calls, _Runner)


def measure(a: argparse.Namespace, config: Any, limits: Any, spent: dict[str, float], calls: dict[str, int],
            runner_cls: Any) -> int:
    t0 = time.perf_counter()
    refs, _ = discover([a.corpus], config.exclude, config.root)
    inputs = [Input.read(r, limits, True) for r in refs]
    files = [inp.parse(limits) for inp in inputs]
    t1 = time.perf_counter()
    index = Index()
    for sf in files:
        index.add_file(sf)
    runner = runner_cls(config, index)
    trees_built()
    t2 = time.perf_counter()
    findings, _ = runner.lint_targets(files)
    t3 = time.perf_counter()
    in_rules = sum(spent.values())
    size = sum(len(sf.raw) for sf in files)
    print(f"{len(files)} files, {size / 1e6:.1f} MB, {len(index.objects)} objects, {len(findings)} findings")
    print(f"read+parse {t1 - t0:6.2f} s\nindex      {t2 - t1:6.2f} s\nrules      {in_rules:6.2f} s"
          f"\nengine     {t3 - t2 - in_rules:6.2f} s  (positions, suppressions, rule dispatch)")
    print(f"\n{'rule':<8} {'seconds':>8} {'calls':>8} {'us/call':>8}")
    for code in sorted(spent, key=lambda c: -spent[c])[: a.top]:
        if calls[code]:
            print(f"{code:<8} {spent[code]:8.3f} {calls[code]:8d} {spent[code] / calls[code] * 1e6:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
