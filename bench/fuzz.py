#!/usr/bin/env python3
"""Run dralint's fuzz properties for as long as asked, and list every distinct failure.

    python bench/fuzz.py --minutes 10            # both generators, all properties
    python bench/fuzz.py --minutes 2 --only bytes --seed 7
    python bench/fuzz.py --replay crashes/       # re-check saved reproducers

The generators and the properties are those of tests/test_fuzz.py (CI runs them a few seconds
each). Here inputs are drawn in batches with fresh seeds until the time is up; each failing input
is reduced to a signature (the rule and exception of an internal error, or the failed property)
and the smallest input per signature is written to ``--out`` (default ``fuzz-crashes/``) so that
it can be replayed and turned into a regression test. Exit code 1 when anything failed.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import seed as hypothesis_seed  # noqa: E402

from tests import test_fuzz as props  # noqa: E402


def signature(exc: BaseException) -> str:
    """What makes two failures the same bug: internal errors by rule and exception, else the message."""
    text = str(exc)
    rules = re.findall(r"'rule': '(DRA\d+)'.*?'detail': \"?'?([A-Za-z]+Error)", text)
    if rules:
        return " + ".join(sorted({f"{r} {e}" for r, e in rules}))
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    first = re.sub(r"\d+", "N", first)  # the same property failing at another position is the same bug
    return f"{type(exc).__name__}: {first[:120]}"


def make_probe(strategy: Any, batch_seed: int, found: list[tuple[bytes, BaseException]], count: list[int]) -> Any:
    """50 generated inputs through `check`; failures are collected, not raised."""

    @hypothesis_seed(batch_seed)
    @settings(max_examples=50, deadline=None, database=None, derandomize=False,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def probe(raw: bytes) -> None:
        count[0] += 1
        try:
            props.check(raw)
        except Exception as exc:  # collect every failure, keep generating
            found.append((raw, exc))

    return probe


def run(kind: str, seconds: float, seed: int, out: Path, failures: dict[str, bytes]) -> int:
    strategy = props.manifest() if kind == "structured" else props.raw_input
    count = [0]
    deadline = time.monotonic() + seconds
    batch = 0
    while time.monotonic() < deadline:
        batch += 1
        found: list[tuple[bytes, BaseException]] = []
        probe = make_probe(strategy, seed * 1_000_003 + batch, found, count)
        probe()
        for raw, e in found:
            sig = signature(e)
            if sig not in failures or len(raw) < len(failures[sig]):
                if sig not in failures:
                    print(f"  new failure [{kind}]: {sig}", flush=True)
                    if "-v" in sys.argv:
                        traceback.print_exception(e)
                failures[sig] = raw
                name = hashlib.sha1(sig.encode()).hexdigest()[:12]
                out.mkdir(parents=True, exist_ok=True)
                (out / f"{name}.yaml").write_bytes(raw)
                (out / f"{name}.txt").write_text(sig + "\n")
    return count[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--only", choices=["structured", "bytes"])
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--out", type=Path, default=Path("fuzz-crashes"))
    ap.add_argument("--replay", type=Path, help="check every *.yaml in this directory instead")
    ap.add_argument("-v", action="store_true", help="print tracebacks of new failures")
    a = ap.parse_args(argv)
    if a.replay:
        bad = 0
        for p in sorted(a.replay.glob("*.yaml")):
            try:
                props.check(p.read_bytes())
                print(f"ok      {p.name}")
            except Exception as e:  # report and go on
                bad += 1
                print(f"FAILS   {p.name}: {signature(e)}")
        return 1 if bad else 0
    kinds = [a.only] if a.only else ["structured", "bytes"]
    failures: dict[str, bytes] = {}
    t0 = time.monotonic()
    counts = {}
    for kind in kinds:
        counts[kind] = run(kind, a.minutes * 60 / len(kinds), a.seed, a.out, failures)
    took = time.monotonic() - t0
    print(f"\nfuzzed {took / 60:.1f} min, seed {a.seed}: "
          + ", ".join(f"{n:,} {k} inputs" for k, n in counts.items()))
    if not failures:
        print("no failure")
        return 0
    print(f"{len(failures)} distinct failures (smallest input of each in {a.out}/):")
    for sig, raw in sorted(failures.items()):
        print(f"  {sig}  ({len(raw)} bytes)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
