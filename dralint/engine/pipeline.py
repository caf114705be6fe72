"""Paths on disk to a `Result`: load → index → check → suppress, the pipeline every command uses.

`lint_paths` (the CLI's entry) runs the rules (`dralint.engine.runner`) over files and directories, at
repository scale:

- Context files (``--context``) only contribute their *summary* to the index: object identities,
  plus the full data of the kinds other objects look up (`CARRIED_KINDS`). Summaries are cached
  on disk by content hash (`dralint.engine.cache`), so linting one changed file against a repository
  parses one file. Any other data a rule reads from a context object is loaded on demand
  (`RemoteObject`), so a summary can make a run slower but never change its findings.
- Large inputs are linted by worker processes (`dralint.engine.parallel`): each parses its share of the
  files, the summaries are exchanged so that every worker has the whole index, then each runs
  all rules on its own targets and sends back only findings.
Findings are the same with and without workers and cache (tests/test_parallel.py, test_cache.py).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dralint.engine import progress
from dralint.engine.cache import SummaryCache, default_cache_dir
from dralint.engine.config import Config, usable_cores
from dralint.engine.lazy import Input, add_summary
from dralint.engine.memory import quiet_gc, trees_built
from dralint.engine.runner import Result, _Runner, limits_for
from dralint.engine.summary import FileSummary, summarize
from dralint.inputs.files import discover, read_file
from dralint.inputs.index import Index
from dralint.inputs.load import Limits, SourceFile
from dralint.model import Finding


def load_paths(
    paths: Sequence[str], config: Config, follow_symlinks: bool = False
) -> tuple[list[SourceFile], list[str]]:
    refs, missing = discover(paths, config.exclude, config.root, follow_symlinks,
                             respect_gitignore=config.respect_gitignore)
    limits = limits_for(config)
    return [read_file(r, limits) for r in refs], missing


def lint_paths(
    paths: Sequence[str],
    config: Config,
    context: Sequence[str] = (),
    stdin: tuple[str, bytes] | None = None,
    follow_symlinks: bool = False,
    jobs: int | None = None,
) -> Result:
    """Lint files and directories (plus stdin as ``(display name, bytes)``).

    ``jobs`` (default: ``config.jobs``) is the number of worker processes; 0 or None picks one
    per core for large inputs and none for a handful of files.
    """
    limits = limits_for(config)
    refs, missing = discover(paths, config.exclude, config.root, follow_symlinks,
                             respect_gitignore=config.respect_gitignore)
    inputs = [Input.read(r, limits, target=True) for r in refs]
    if stdin is not None:
        inputs.append(Input(stdin[0], None, stdin[1], None, True))
    if context:
        target_keys = {_key(p) for p in paths} | {r.key or _key(str(r.path)) for r in refs}
        crefs, _ = discover(context, config.exclude, config.root, follow_symlinks,
                            respect_gitignore=config.respect_gitignore)
        inputs += [Input.later(r) for r in crefs if (r.key or _key(str(r.path))) not in target_keys]
    result = lint_inputs(inputs, config, jobs=config.jobs if jobs is None else jobs)
    result.missing = missing
    return result


def _key(p: str) -> str:
    try:
        return str(Path(p).resolve())
    except (OSError, RuntimeError):
        return p


# ----------------------------------------------------------------------------------------------
# paths on disk: read, summarise (or take summaries from the cache), parse targets, lint


def open_cache(config: Config, limits: Limits) -> SummaryCache | None:
    if not config.use_cache:
        return None
    directory = Path(config.cache_dir) if config.cache_dir else default_cache_dir(config.root)
    if not directory.is_absolute():
        directory = config.root / directory
    return SummaryCache(directory, f"{limits}", config.root)


#: below this much input, worker processes cost more than they save
PARALLEL_MIN_BYTES = 2_000_000
PARALLEL_MIN_FILES = 16


def choose_jobs(requested: int | None, nbytes: int, nfiles: int) -> int:
    cores = usable_cores()  # also caps an explicit request: API callers do not go through Config.set_jobs
    if requested is not None and requested > 0:
        return max(1, min(requested, nfiles, cores))
    if nbytes < PARALLEL_MIN_BYTES or nfiles < PARALLEL_MIN_FILES:
        return 1
    return max(1, min(cores, nfiles // 8))


def lint_inputs(inputs: list[Input], config: Config, jobs: int | None = None) -> Result:
    """The pipeline behind `lint_paths`: cache lookups, then serial or parallel linting."""
    limits = limits_for(config)
    cache = open_cache(config, limits)
    summaries: dict[int, FileSummary] = {}
    stored: dict[int, bytes] = {}  # the cache entries behind ``summaries`` (workers get them as they are)
    stat: dict[int, os.stat_result] = {}
    if cache is not None:
        cache.load_paths()
    # one unit per file read (or found in the cache) and one per target file checked
    progress.start(len(inputs) + sum(1 for inp in inputs if inp.target))
    for i, inp in enumerate(inputs):
        progress.advance()
        if cache is not None and inp.ref is not None and inp.ref.key:
            with contextlib.suppress(OSError):
                stat[i] = os.stat(inp.ref.path)
        if inp.unread and cache is not None and inp.ref is not None and i in stat:
            known = cache.known_key(inp.ref.key, stat[i])
            entry = cache.get(known) if known else None
            hit = FileSummary.from_bytes(entry) if entry is not None else None
            if hit is not None:
                inp.key = known
                summaries[i], stored[i] = hit, entry  # type: ignore[assignment]
                continue  # unchanged since it was summarised: not even read
        inp.ensure_read(limits)
        if cache is None or inp.raw is None:
            continue
        inp.key = cache.key(inp.raw, inp.display.lower().endswith(".json"))
        if not inp.target:
            entry = cache.get(inp.key)
            hit = FileSummary.from_bytes(entry) if entry is not None else None
            if hit is not None:
                summaries[i], stored[i] = hit, entry  # type: ignore[assignment]
    if cache is not None:
        for i, st in stat.items():
            ref, key = inputs[i].ref, inputs[i].key
            if ref is not None and key is not None:
                cache.remember(ref.key, st, key)
        if len(summaries) < len(inputs):
            cache.prepare()
        cache.save_paths()
    todo = [i for i, inp in enumerate(inputs) if i not in summaries]
    nbytes = sum(len(inputs[i].raw or b"") for i in todo)
    n = choose_jobs(jobs, nbytes, len(todo))
    cache_state = "off" if cache is None else str(cache.dir) if cache.enabled else f"off: {cache.problem}"
    stats: dict[str, Any] = {"jobs": n, "files": len(inputs), "parsed": len(todo),
                             "cache": cache_state, "cache_hits": len(summaries)}
    if n > 1:
        from dralint.engine import parallel

        result = parallel.lint_parallel(inputs, stored, summaries, config, cache, n, stats)
        if result is not None:
            return result
        stats["jobs"] = 1  # a worker failed: do it here
    return _lint_serial(inputs, summaries, config, cache, stats)


def _lint_serial(inputs: list[Input], summaries: dict[int, FileSummary], config: Config,
                 cache: SummaryCache | None, stats: dict[str, Any]) -> Result:
    with quiet_gc():
        return _lint_serial_quiet(inputs, summaries, config, cache, stats)


def _lint_serial_quiet(inputs: list[Input], summaries: dict[int, FileSummary], config: Config,
                       cache: SummaryCache | None, stats: dict[str, Any]) -> Result:
    limits = limits_for(config)
    parsed: dict[int, SourceFile] = {}
    for i, inp in enumerate(inputs):
        if i in summaries:
            continue
        sf = inp.parse(limits)
        if inp.target:
            parsed[i] = sf
            if cache is not None and inp.key is not None and not cache.has(inp.key):
                cache.put(inp.key, summarize(sf).to_bytes())
        else:
            summaries[i] = summarize(sf)  # the parse tree goes; the summary keeps what the index needs
            if cache is not None and inp.key is not None:
                cache.put(inp.key, summaries[i].to_bytes())
    index = Index()
    targets: list[SourceFile] = []
    for i, inp in enumerate(inputs):
        if i in parsed:
            index.add_file(parsed[i], target=True)
            targets.append(parsed[i])
        else:
            add_summary(index, inp.display, summaries[i], inp.target, inp.loader(limits, stats))
    runner = _Runner(config, index)
    trees_built(sum(len(inp.raw or b"") for inp in inputs))
    findings, suppressed = runner.lint_targets(targets)
    findings.sort(key=Finding.sort_key)
    if cache is not None:
        stats["cache_writes"] = cache.writes
    return Result(findings=findings, files=targets, index_or_builder=index, config=config, selected=runner.selected,
                  internal_errors=runner.errors, suppressed=suppressed, stats=stats,
                  suppressions=sorted(runner.suppressions, key=Finding.sort_key))
