#!/usr/bin/env python3
"""Run dralint's fuzz properties for as long as asked, and list every distinct failure.

    python bench/fuzz.py --minutes 10            # both generators, all properties
    python bench/fuzz.py --minutes 2 --only bytes --seed 7
    python bench/fuzz.py --replay crashes/       # re-check saved reproducers
    python bench/fuzz.py --minutes 30 --only cel # CEL selectors only (random and mutated)

The generators and the properties are those of tests/test_fuzz.py and, for CEL selectors (kinds
``cel-random`` and ``cel-mutated``; ``--only cel`` runs both), tests/test_fuzz_cel.py (CI runs them
a few seconds each). Here inputs are drawn in batches with fresh seeds until the time is up; each failing input
is reduced to a signature (the rule and exception of an internal error, or the failed property)
and the smallest input per signature is written to ``--out`` (default ``fuzz-crashes/``) so that
it can be replayed and turned into a regression test. Exit code 1 when anything failed.

Every ``--progress`` seconds (default 60) a line gives the inputs run so far, the rate and the
resident memory (current and peak), so that a long run shows whether memory stays flat.

Memory: the harness runs a full garbage collection every GC_EVERY seconds. Each ``lint_files``
call (``dralint.engine.memory.quiet_gc``) freezes every object alive at that moment, garbage included, and
``gc.freeze`` resets the generation counters; on ``unfreeze`` those objects land in the oldest
generation, which the automatic collector then almost never examines. Hypothesis leaves cyclic
garbage behind for every input (measured ~110 KB per structured input, ~25 KB per byte input:
22 GB after 30 minutes without the explicit collection; flat at under 100 MB with it).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import re
import resource
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
from tests import test_fuzz_cel as cel_props  # noqa: E402

#: kind -> (hypothesis strategy, property); CEL kinds draw selector texts, the others file bytes.
#: The properties are looked up at each call, so that a test can replace them in their modules.
KINDS: dict[str, tuple[Any, Any]] = {
    "structured": (props.manifest(), lambda raw: props.check(raw)),
    "bytes": (props.raw_input, lambda raw: props.check(raw)),
    "cel-random": (cel_props.random_selector, lambda text: cel_props.check_cel(text)),
    "cel-mutated": (cel_props.mutated_selector(), lambda text: cel_props.check_cel(text)),
}


def signature(exc: BaseException) -> str:
    """What makes two failures the same bug: internal errors by rule and exception, else the message."""
    text = str(exc)
    rules = re.findall(r"'rule': '(DRA\d+)'.*?'detail': \"?'?([A-Za-z]+Error)", text)
    if rules:
        return " + ".join(sorted({f"{r} {e}" for r, e in rules}))
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    if first.startswith("CEL "):  # CEL failures name their phase, exception and line (tests/test_fuzz_cel.py)
        return first
    first = re.sub(r"\d+", "N", first)  # the same property failing at another position is the same bug
    return f"{type(exc).__name__}: {first[:120]}"


def make_probe(strategy: Any, batch_seed: int, found: list[tuple[Any, BaseException]], count: list[int],
               check: Any = props.check) -> Any:
    """50 generated inputs through `check`; failures are collected, not raised."""

    @hypothesis_seed(batch_seed)
    @settings(max_examples=50, deadline=None, database=None, derandomize=False,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def probe(raw: Any) -> None:
        count[0] += 1
        try:
            check(raw)
        except Exception as exc:  # collect every failure, keep generating
            found.append((raw, exc))

    return probe


#: seconds between full collections: one costs 15-60 ms even with nothing to free while a batch of
#: byte inputs takes ~60 ms (collecting after every batch cost ~30% of the inputs); one second of
#: garbage is ~25 MB at most (measured peak RSS: 68 MB collecting every batch, 92 MB every second)
GC_EVERY = 1.0


def rss_mb() -> tuple[float, float]:
    """Resident memory of this process now and at its peak, in MB (now = peak where /proc is missing)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    try:
        with open("/proc/self/status") as f:
            now = next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))
    except (OSError, StopIteration, ValueError):
        now = peak
    return now, max(now, peak)  # the kernel updates its high-water mark lazily


class Progress:
    """Prints inputs run, rate and memory every `every` seconds (0: never)."""

    def __init__(self, every: float) -> None:
        self.every = every
        self.start = self.last = time.monotonic()
        self.total = 0

    def tick(self, kind: str, count: int) -> None:
        t = time.monotonic()
        if self.every <= 0 or t - self.last < self.every:
            return
        self.last = t
        now, peak = rss_mb()
        print(f"  [{(t - self.start) / 60:5.1f} min] {kind}: {count:,} inputs ({self.total + count:,} in all, "
              f"{(self.total + count) / (t - self.start):.0f}/s)  rss {now:,.0f} MB, peak {peak:,.0f} MB", flush=True)


def run(kind: str, seconds: float, seed: int, out: Path, failures: dict[str, bytes],
        progress: Progress | None = None, max_batches: int | None = None) -> int:
    strategy, check = KINDS[kind]
    count = [0]
    deadline = time.monotonic() + seconds
    collected = time.monotonic()
    batch = 0
    while time.monotonic() < deadline and (max_batches is None or batch < max_batches):
        batch += 1
        found: list[tuple[Any, BaseException]] = []
        probe = make_probe(strategy, seed * 1_000_003 + batch, found, count, check)
        probe()
        if time.monotonic() - collected >= GC_EVERY:
            gc.collect()  # see the module docstring: without it the garbage of every input stays
            collected = time.monotonic()
        if progress is not None:
            progress.tick(kind, count[0])
        for drawn, e in found:
            raw = drawn.encode("utf-8", "surrogatepass") if isinstance(drawn, str) else drawn
            sig = signature(e)
            if sig not in failures or len(raw) < len(failures[sig]):
                if sig not in failures:
                    print(f"  new failure [{kind}]: {sig}", flush=True)
                    if "-v" in sys.argv:
                        traceback.print_exception(e)
                failures[sig] = raw
                name = hashlib.sha1(sig.encode()).hexdigest()[:12]
                out.mkdir(parents=True, exist_ok=True)
                (out / f"{name}{'.cel' if kind.startswith('cel') else '.yaml'}").write_bytes(raw)
                (out / f"{name}.txt").write_text(sig + "\n")
    if progress is not None:
        progress.total += count[0]
    return count[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--only", choices=[*KINDS, "cel"])
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--out", type=Path, default=Path("fuzz-crashes"))
    ap.add_argument("--replay", type=Path, help="check every *.yaml in this directory instead")
    ap.add_argument("--progress", type=float, default=60.0, metavar="SECONDS",
                    help="print inputs run and memory this often (0: never)")
    ap.add_argument("-v", action="store_true", help="print tracebacks of new failures")
    a = ap.parse_args(argv)
    if a.replay:
        bad = 0
        for p in sorted([*a.replay.glob("*.yaml"), *a.replay.glob("*.cel")]):
            try:
                if p.suffix == ".cel":
                    cel_props.check_cel(p.read_bytes().decode("utf-8", "surrogatepass"), lint=True)
                else:
                    props.check(p.read_bytes())
                print(f"ok      {p.name}")
            except Exception as e:  # report and go on
                bad += 1
                print(f"FAILS   {p.name}: {signature(e)}")
        return 1 if bad else 0
    kinds = ["cel-random", "cel-mutated"] if a.only == "cel" else [a.only] if a.only else list(KINDS)
    failures: dict[str, bytes] = {}
    t0 = time.monotonic()
    counts = {}
    progress = Progress(a.progress)
    for kind in kinds:
        counts[kind] = run(kind, a.minutes * 60 / len(kinds), a.seed, a.out, failures, progress)
    took = time.monotonic() - t0
    print(f"\nfuzzed {took / 60:.1f} min, seed {a.seed}: "
          + ", ".join(f"{n:,} {k} inputs" for k, n in counts.items())
          + f"; peak rss {rss_mb()[1]:,.0f} MB")
    if not failures:
        print("no failure")
        return 0
    print(f"{len(failures)} distinct failures (smallest input of each in {a.out}/):")
    for sig, raw in sorted(failures.items()):
        print(f"  {sig}  ({len(raw)} bytes)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
