"""Worker processes for large inputs: parse and check in parallel, with the whole index everywhere.

Cross-file rules need every file in the index, so a plain "one file per task" pool does not work.
Each worker instead owns a fixed share of the files (balanced by size) for the whole run:

1. it parses its share and sends back each file's summary (`dralint.engine.summary.summarize`), writing
   it to the cache as well; its targets are checked as they are parsed (`dralint.engine.stream`),
   and only the units whose rules asked about other files stay parsed;
2. the main process joins all summaries (plus the cache hits) in file order and sends the list to
   every worker;
3. each worker builds the complete index — what it still holds parsed as it is, everything else
   from summaries — runs the waiting rules and sends back only findings.

Every file is parsed once, no parse tree crosses a process boundary, and the index each worker sees
holds the same objects in the same order as a one-process run, so the findings are identical.
If a worker dies or fails, the main process lints everything itself (`lint_parallel` returns None).
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing as mp
import os
import signal
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from dralint.checks.registry import load_checks
from dralint.engine import progress
from dralint.engine.cache import SummaryCache
from dralint.engine.config import Config
from dralint.engine.lazy import Input, LazySourceFile, add_summary
from dralint.engine.memory import trees_built
from dralint.engine.pipeline import _Run
from dralint.engine.results import Outcome
from dralint.engine.runner import InternalError, Result, _Runner, limits_for
from dralint.engine.stream import Stream
from dralint.engine.summary import FileSummary, summarize
from dralint.inputs.index import Index
from dralint.inputs.load import SourceFile
from dralint.model import Finding


@dataclass
class _Job:
    inputs: list[Input]
    config: Config
    cache: SummaryCache | None


@dataclass
class _FileResult:
    index: int
    findings: list[Finding]
    suppressed: int
    errors: list[InternalError]
    suppressions: list[Finding] = field(default_factory=list)


def shares(sizes: Sequence[int], todo: Sequence[int], workers: int) -> list[list[int]]:
    """Split input indexes into ``workers`` lists of similar total size (largest first, to the lightest)."""
    out: list[list[int]] = [[] for _ in range(workers)]
    load = [0] * workers
    for i in sorted(todo, key=lambda i: (-sizes[i], i)):
        w = load.index(min(load))
        out[w].append(i)
        load[w] += sizes[i] + 2048  # a per-file overhead, so that many tiny files still spread out
    return [sorted(s) for s in out]


def frame(parts: list[bytes]) -> bytes:
    """Length-prefixed concatenation (one message for all summaries)."""
    return b"".join(len(p).to_bytes(8, "little") + p for p in parts)


def unframe(data: bytes) -> list[bytes]:
    out = []
    pos = 0
    while pos < len(data):
        n = int.from_bytes(data[pos : pos + 8], "little")
        out.append(data[pos + 8 : pos + 8 + n])
        pos += 8 + n
    return out


def _context() -> Any:
    # fork shares the inputs (already read) without copying; elsewhere spawn pickles the job
    methods = mp.get_all_start_methods()
    return mp.get_context("fork" if "fork" in methods else "spawn")


def lint_parallel(run: _Run, stored: dict[int, bytes], workers: int) -> Result | None:
    """Lint ``run.inputs`` with ``workers`` processes; None when that failed (the caller then runs serially)."""
    inputs, summaries, config, stats = run.inputs, run.summaries, run.config, run.stats
    todo = [i for i in range(len(inputs)) if i not in summaries]
    sizes = [len(inp.raw or b"") for inp in inputs]
    plan = [s for s in shares(sizes, todo, workers) if s]
    job = _Job(inputs, config, run.cache)
    load_checks()  # import every rule module once, here: forked workers inherit them
    ctx = _context()
    procs: list[Any] = []
    conns: list[Connection] = []
    try:
        for share in plan:
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_worker, args=(child, job, share), daemon=True)
            p.start()
            child.close()
            procs.append(p)
            conns.append(parent)
        # phase 1: summaries of every parsed file
        parts: dict[int, bytes] = dict(stored)
        for i, summary in summaries.items():
            if i not in parts:
                parts[i] = summary.to_bytes()
        for i in run.candidates:  # read while the workers parse
            parts[i] = run.summary_bytes(i)
        pending = set(conns)
        while pending:
            for c in wait(list(pending)):
                assert isinstance(c, Connection)
                kind, payload = c.recv()
                if kind != "summaries":
                    stats["worker_error"] = payload
                    return None
                parts.update(payload)
                pending.discard(c)
        known = {i: summaries.get(i) or FileSummary.from_bytes(parts[i]) for i in range(len(inputs))}
        if any(v is None for v in known.values()):  # cannot happen: these bytes were just written
            raise RuntimeError("unreadable summary from a worker")
        rows = run.rows({i: v for i, v in known.items() if v is not None})
        reused = run.reuse(rows)
        # the candidates that no longer hold are linted after all, by the least loaded workers
        extra: list[list[int]] = [[] for _ in conns]
        load = [sum(sizes[i] for i in share) for share in plan]
        for i in sorted(i for i in run.candidates if i not in reused):
            w = load.index(min(load))
            extra[w].append(i)
            load[w] += sizes[i]
        joined = frame([parts[i] for i in range(len(inputs))])
        for c, more in zip(conns, extra, strict=True):
            c.send_bytes(joined)
            c.send(more)
        # the index the caller sees is built only if the caller reads it (`Result.index`); the targets
        # stay unparsed unless someone reads them
        limits = limits_for(config)
        loaders = [inp.loader(limits, stats) for inp in inputs]  # one per file, shared by its objects
        files: list[SourceFile] = [
            LazySourceFile(inp.display, loader) for inp, loader in zip(inputs, loaders, strict=True) if inp.target
        ]

        def build_index() -> Index:
            index = Index()
            for i, inp in enumerate(inputs):
                summary = known[i]
                assert summary is not None
                if inp.target:  # parsed again: reports point at the targets' objects
                    index.add_file(loaders[i].source("targets_parsed_again"), True)
                else:
                    add_summary(index, inp.display, summary, False, loaders[i])
            return index

        # phase 2: findings
        results: list[_FileResult] = []
        reads: set[str] = set()
        progress.advance(len(reused))
        for c in conns:
            kind, payload = c.recv()
            if kind != "findings":
                stats["worker_error"] = payload
                return None
            results.extend(payload[0])
            reads.update(payload[2])
            progress.advance(len(payload[0]))  # a worker's whole share at once: the rest is in the workers
            for k, v in payload[1].items():
                if k.endswith("_seconds"):
                    stats.setdefault(k, []).append(round(v, 3))
                else:
                    stats[k] = stats.get(k, 0) + v
    except (EOFError, OSError) as e:
        stats["worker_error"] = f"a worker process ended unexpectedly ({type(e).__name__})"
        return None
    finally:
        for c in conns:
            c.close()
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
                p.join()
    outcomes = {r.index: Outcome(r.findings, r.suppressed, r.suppressions, bool(r.errors)) for r in results}
    run.store(outcomes, reads, rows)
    run.update_pack({i: v for i, v in known.items() if v is not None})
    if run.cache is not None:
        stats["cache_writes"] = stats.get("cache_writes", 0)
    errors = [e for r in sorted(results, key=lambda r: r.index) for e in r.errors]
    return run.result(outcomes, reused, files, build_index, errors, rows)


def _worker(conn: Connection, job: _Job, share: list[int]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C and stops us
    gc.disable()  # see dralint.engine.memory.quiet_gc; this process ends with the run
    try:
        conn.send(_phase1(conn, job, share))
    except Exception:  # report any failure; the main process then lints serially
        with contextlib.suppress(OSError):
            conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()
        os._exit(0)


def _phase1(conn: Connection, job: _Job, share: list[int]) -> tuple[str, Any]:
    t0 = time.perf_counter()
    limits = limits_for(job.config)
    cache = job.cache
    runner = _Runner(job.config, Index())
    runner.seal()
    stream = Stream(runner, [inp.display for inp in job.inputs])  # checked as parsed (dralint.engine.stream)
    mine: dict[int, FileSummary] = {}
    out: dict[int, bytes] = {}
    writes = 0
    for i in share:
        inp = job.inputs[i]
        sf = inp.parse(limits)
        summary = stream.check(i, sf, owned=inp.loaded is None) if inp.target else summarize(sf)
        text = summary.to_bytes()
        if cache is not None and inp.key is not None and not (inp.target and cache.has(inp.key)):
            cache.put(inp.key, text)
            writes += 1
        out[i] = text
        if inp.target:
            mine[i] = summary
    conn.send(("summaries", out))
    t1 = time.perf_counter()
    return ("findings", _phase2(conn, job, stream, mine, {"cache_writes": writes, "parse_seconds": t1 - t0}))


def _phase2(
    conn: Connection, job: _Job, stream: Stream, mine: dict[int, FileSummary], stats: dict[str, Any]
) -> tuple[list[_FileResult], dict[str, Any], list[str]]:
    limits = limits_for(job.config)
    parts = unframe(conn.recv_bytes())
    t0 = time.perf_counter()
    for i in conn.recv():  # targets whose stored results no longer hold: checked here after all
        inp = job.inputs[i]
        mine[i] = stream.check(i, inp.parse(limits), owned=inp.loaded is None)
    index = Index()
    for i, inp in enumerate(job.inputs):
        if i in mine:
            stream.add(index, i, inp.display, mine[i], inp.loader(limits, stats))
            continue
        summary = FileSummary.from_bytes(parts[i])
        if summary is None:
            raise RuntimeError(f"unreadable summary for {inp.display}")
        add_summary(index, inp.display, summary, inp.target, inp.loader(limits, stats))
    del parts
    trees_built()
    stream.finish(index)
    results = [_FileResult(i, o.findings, o.suppressed, stream.errors_of(i), o.suppressions)
               for i, o in sorted(stream.outcomes.items())]
    stats["check_seconds"] = time.perf_counter() - t0
    stats["kept_trees"] = len(stream.waiting)
    return results, stats, sorted(index.reads)
