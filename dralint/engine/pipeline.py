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
- Target files are streamed (`dralint.engine.stream`): each is checked as it is parsed and its tree
  goes, except the objects whose rules asked about other files; those are checked once the kinds
  they asked about are complete (the files that may hold them come first), or at the end.
- Target files whose stored findings still hold (`dralint.engine.results`) are neither read nor parsed.
Findings are the same with and without workers and caches (tests/test_parallel.py, test_cache.py,
test_results_cache.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dralint.engine import progress
from dralint.engine.cache import SummaryCache, default_cache_dir
from dralint.engine.config import Config, owns_default_cache, usable_cores
from dralint.engine.lazy import FileLoader, Input, add_summary
from dralint.engine.memory import quiet_gc, trees_built
from dralint.engine.pack import PACK_MIN_FILES, LazyIndex, Pack, pack_bytes
from dralint.engine.results import Entry, FileRow, Outcome, ResultsCache, row_of
from dralint.engine.runner import InternalError, Result, _Runner, limits_for
from dralint.engine.stream import STAGED_KINDS, STAGES, Ahead, Stream, stage_of, staged_part
from dralint.engine.summary import FileSummary, summarize
from dralint.inputs.files import FileRef, discover, read_file
from dralint.inputs.index import Index
from dralint.inputs.load import Limits, SourceFile
from dralint.knowledge.catalog import user_cache_dir
from dralint.model import Finding


def discover_files(paths: Sequence[str], config: Config, follow_symlinks: bool = False,
                   ) -> tuple[list[FileRef], list[str]]:
    """`discover` with the configuration's excludes, project root and gitignore setting, never
    entering the run's cache directory (`walk_skips`)."""
    return discover(paths, config.exclude, config.root, follow_symlinks,
                    respect_gitignore=config.respect_gitignore, skip=walk_skips(config))


def load_paths(
    paths: Sequence[str], config: Config, follow_symlinks: bool = False
) -> tuple[list[SourceFile], list[str]]:
    refs, missing = discover_files(paths, config, follow_symlinks)
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
    refs, missing = discover_files(paths, config, follow_symlinks)
    inputs = [Input.later(r, target=True) for r in refs]
    if stdin is not None:
        inputs.append(Input(stdin[0], None, stdin[1], None, True))
    if context:
        target_keys = {_key(p) for p in paths} | {ref_key(r) for r in refs}
        crefs, _ = discover_files(context, config, follow_symlinks)
        inputs += [Input.later(r) for r in crefs if ref_key(r) not in target_keys]
    result = lint_inputs(inputs, config, jobs=config.jobs if jobs is None else jobs)
    result.missing = missing
    return result


def ref_key(ref: FileRef) -> str:
    """A discovered file's resolved path (discovery knows it, except for a link it refused)."""
    return ref.key or _key(str(ref.path))


def _key(p: str) -> str:
    try:
        return str(Path(p).resolve())
    except (OSError, RuntimeError):
        return p


# ----------------------------------------------------------------------------------------------
# paths on disk: read, summarise (or take summaries from the cache), parse targets, lint


def cache_directory(config: Config) -> Path | None:
    """Where the run's cache lives (None: no cache)."""
    if not config.use_cache:
        return None
    if config.cache_dir:
        directory = Path(config.cache_dir)
    elif owns_default_cache(config, Path.cwd()):
        directory = default_cache_dir(config.root)
    else:  # a tree linted from outside: its cache goes to the user cache directory, one per tree
        tree = hashlib.blake2b(os.path.abspath(config.root).encode("utf-8", "surrogateescape"), digest_size=8)
        directory = user_cache_dir() / "trees" / tree.hexdigest()
    if not directory.is_absolute():
        directory = config.root / directory
    return directory


def walk_skips(config: Config) -> frozenset[str]:
    """Directories discovery never enters whatever their name: the run's own cache (`--cache-dir`
    can put it anywhere in the project, and with `respect-gitignore: false` its own `.gitignore`
    would not keep its entries out of the lint)."""
    directory = cache_directory(config)
    if directory is None:
        return frozenset()
    try:
        return frozenset({str(directory.resolve())})
    except (OSError, RuntimeError):
        return frozenset()


def open_cache(config: Config, limits: Limits) -> SummaryCache | None:
    directory = cache_directory(config)
    if directory is None:
        return None
    return SummaryCache(directory, f"{limits}", config.root)


#: the share of context files the stored pack may lack before a run writes a new one
PACK_STALE_FRACTION = 0.05

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
    results = ResultsCache(cache, config) if cache is not None and cache.enabled else None
    summaries: dict[int, FileSummary] = {}
    stored: dict[int, bytes] = {}  # the cache entries behind ``summaries`` (workers get them as they are)
    #: target files whose stored results may still hold (checked once every file's summary is known)
    candidates: dict[int, Entry] = {}
    #: context files known unchanged by stat whose summaries are read only if the run needs them
    lazy: set[int] = set()
    stat: dict[int, os.stat_result] = {}
    pack: Pack | None = None
    if cache is not None:
        cache.load_paths()
        pack = _read_pack(cache, inputs)
    # one unit per file read (or found in the cache) and one per target file checked
    progress.start(len(inputs) + sum(1 for inp in inputs if inp.target))
    with quiet_gc():  # stored results and summaries are many small objects, none of them in a cycle
        _read_inputs(inputs, cache, results, limits, stat, lazy, summaries, stored, candidates, pack)
    if cache is not None:
        for i, st in stat.items():
            ref, key = inputs[i].ref, inputs[i].key
            if ref is not None and key is not None:
                cache.remember(ref.key, st, key)
        if len(summaries) + len(lazy) < len(inputs) or results is not None:
            cache.prepare()
        cache.save_paths()
    todo = [i for i in range(len(inputs)) if i not in summaries and i not in candidates and i not in lazy]
    nbytes = sum(len(inputs[i].raw or b"") for i in todo)
    n = choose_jobs(jobs, nbytes, len(todo))
    cache_state = "off" if cache is None else str(cache.dir) if cache.enabled else f"off: {cache.problem}"
    stats: dict[str, Any] = {"jobs": n, "files": len(inputs), "parsed": len(todo),
                             "cache": cache_state, "cache_hits": len(summaries) + len(lazy)}
    _count_reads(stats, summaries)
    run = _Run(inputs, summaries, candidates, results, config, cache, stats, lazy, pack)
    if n > 1:
        from dralint.engine import parallel

        for i in sorted(lazy):  # every worker gets every summary
            stored[i] = run.summary_bytes(i)

        result = parallel.lint_parallel(run, stored, n)
        if result is not None:
            return result
        stats["jobs"] = 1  # a worker failed: do it here
    return _lint_serial(run)


def _read_pack(cache: SummaryCache, inputs: list[Input]) -> Pack | None:
    """The stored context pack, when the run has enough context files for it to matter."""
    if sum(1 for inp in inputs if not inp.target) < PACK_MIN_FILES:
        return None
    raw = cache.get_pack()
    return Pack.from_bytes(raw) if raw is not None else None


def _read_inputs(inputs: list[Input], cache: SummaryCache | None, results: ResultsCache | None, limits: Limits,
                 stat: dict[int, os.stat_result], lazy: set[int], summaries: dict[int, FileSummary],
                 stored: dict[int, bytes], candidates: dict[int, Entry], pack: Pack | None = None) -> None:
    """Read each input, or learn from the caches that it need not be read (yet): see `lint_inputs`."""
    for i, inp in enumerate(inputs):
        progress.advance()
        if cache is not None and inp.ref is not None and inp.ref.key:
            with contextlib.suppress(OSError):
                stat[i] = os.stat(inp.ref.path)
        known = cache.known_key(inp.ref.key, stat[i]) if (
            cache is not None and inp.unread and inp.ref is not None and i in stat) else None
        if known is not None and cache is not None and not inp.target and (
                (pack is not None and known in pack.files) or cache.has(known)):
            inp.key = known  # unchanged since it was last seen: not even read, its summary read if needed
            lazy.add(i)
            continue
        if known is not None and cache is not None and _from_cache(
                i, inp, known, cache, results, summaries, stored, candidates):
            continue  # unchanged since it was last seen: not even read
        inp.ensure_read(limits)
        if cache is None or inp.raw is None:
            continue
        inp.key = cache.key(inp.raw, inp.display.lower().endswith(".json"))
        if not inp.target and pack is not None and inp.key in pack.files:
            lazy.add(i)  # changed by stat only (or too recent to remember): the pack still knows its bytes
        elif inp.key != known:  # the same key was just looked up
            _from_cache(i, inp, inp.key, cache, results, summaries, stored, candidates)


def _from_cache(i: int, inp: Input, key: str, cache: SummaryCache, results: ResultsCache | None,
                summaries: dict[int, FileSummary], stored: dict[int, bytes], candidates: dict[int, Entry]) -> bool:
    """What the caches know of a file with content ``key``: for a target, stored results (checked
    later); for a context file, its summary. True when the file need not be parsed (yet)."""
    if inp.target:
        found = results.lookup(inp.display, key) if results is not None else None
        if found is None:
            return False
        inp.key, candidates[i] = key, found
        return True
    entry = cache.get(key)
    hit = FileSummary.from_bytes(entry) if entry is not None else None
    if hit is None or entry is None:
        return False
    inp.key, summaries[i], stored[i] = key, hit, entry
    return True


def _count_reads(stats: dict[str, Any], summaries: dict[int, FileSummary]) -> None:
    """Summaries decoded while reading the inputs (files found changed by stat, then by key)."""
    if summaries:
        stats["summaries_read"] = len(summaries)


@dataclass
class _Run:
    """One run's inputs and what the caches already know of them."""

    inputs: list[Input]
    #: summaries of the inputs not parsed (yet): cache hits, and the candidates' own
    summaries: dict[int, FileSummary]
    candidates: dict[int, Entry]
    results: ResultsCache | None
    config: Config
    cache: SummaryCache | None
    stats: dict[str, Any]
    #: context inputs whose summaries are in the cache but not read yet (`summary` reads them)
    lazy: set[int]
    #: the stored context pack: rows and objects of lazy inputs without reading their summaries
    pack: Pack | None = None
    #: the candidates whose stored results hold, once `decide` has worked them out
    decided: set[int] | None = None

    def rows(self, parsed: dict[int, FileSummary], nothing_read: bool = False) -> list[FileRow]:
        """Every input as the dependency digest sees it (``parsed``: summaries of the parsed files).

        ``nothing_read``: no rule read another file, so the digest looks at no row but the targets'
        own, and unread summaries stay unread (the pre-commit case: one changed file, a warm cache)."""
        out = []
        for i, inp in enumerate(self.inputs):
            if i in self.lazy and i not in self.summaries:
                if nothing_read:
                    out.append(FileRow(inp.display, inp.key, frozenset(), False))
                    continue
                packed = self.pack.file(inp.key) if self.pack is not None and inp.key is not None else None
                if packed is not None and inp.key is not None:
                    out.append(packed.row(inp.display, inp.key))
                    continue
                self.summary(i)
            summary = self.summaries.get(i) or parsed.get(i)
            if i in self.candidates and inp.key is not None:
                out.append(self.candidates[i].row(inp.display, inp.key))
            elif summary is not None:
                out.append(row_of(inp.display, inp.key, summary))
            else:
                out.append(FileRow(inp.display, None, frozenset(), False))
        return out

    def decide(self, todo: list[int], limits: Limits) -> set[int]:
        """The candidates whose stored results hold, worked out before the stream (once a run): from
        the candidates' own rows and the summaries of the files to parse (``todo``, parsed here once
        more for their summaries alone), so that the stale ones can stream with them, in stages."""
        if self.decided is None:
            own = {i: summarize(self.inputs[i].parse(limits)) for i in todo}
            self.decided = self.reuse(self.rows(own, nothing_read=not any(e.reads for e in self.candidates.values())))
        return self.decided

    def reuse(self, rows: list[FileRow]) -> set[int]:
        """The candidates whose results hold; the others must be parsed and linted after all."""
        if self.results is None or not self.candidates:
            return set()
        valid = self.results.still_valid(self.candidates, rows)
        self.stats["parsed"] += len(self.candidates) - len(valid)
        return valid

    def summary_bytes(self, i: int) -> bytes:
        """The stored summary of a reused target (written with its results); parsed again if it is gone."""
        inp = self.inputs[i]
        self.stats["summaries_read"] = self.stats.get("summaries_read", 0) + 1
        raw = self.cache.get(inp.key) if self.cache is not None and inp.key is not None else None
        found = FileSummary.from_bytes(raw) if raw is not None else None
        if found is None or raw is None:
            found = summarize(inp.parse(limits_for(self.config)))
            raw = found.to_bytes()
        self.summaries[i] = found
        return raw

    def summary(self, i: int) -> FileSummary:
        if i not in self.summaries:
            self.summary_bytes(i)
        return self.summaries[i]

    def index_of(self, own: dict[int, FileSummary], stream: Stream | None, loaders: list[FileLoader]) -> Index:
        """The index of the run: what the stream still holds parsed as it is, everything else from
        summaries (``own``: those of the parsed targets). Without a stream, the index the caller
        gets: targets parsed again (reports point at their objects), context files from summaries."""
        lazy = LazyIndex(self.pack, self.summary) if stream is not None and self.pack is not None else None
        index = lazy or Index()
        for i, inp in enumerate(self.inputs):
            if lazy is not None:
                if (i in self.lazy and i not in self.summaries and inp.key is not None
                        and lazy.defer(i, inp.display, inp.key, loaders[i], inp.target)):
                    self.stats["packed"] = self.stats.get("packed", 0) + 1
                    continue  # its objects join when a query asks about their kinds
                lazy.at(i)
            if stream is None and inp.target:
                index.add_file(loaders[i].source("targets_parsed_again"), True)
            elif stream is not None and i in own:
                stream.add(index, i, inp.display, own[i], loaders[i])
            else:
                add_summary(index, inp.display, own[i] if i in own else self.summary(i), inp.target, loaders[i])
        return index

    def ahead_index(self, ahead: Ahead) -> Index:
        """The objects of the staged kinds, as the whole index will list them: from the summaries
        known already and from the documents parsed ahead (`Ahead`), in input order."""
        index = Index()
        for i, inp in enumerate(self.inputs):
            known = self.summaries.get(i)
            part = staged_part(known) if known is not None else ahead.parts.get(i)
            if part is not None and part.objects:
                add_summary(index, inp.display, part, inp.target, None)  # their data is carried
        return index

    def early_index(self, own: dict[int, FileSummary], stream: Stream, loaders: list[FileLoader],
                    kinds: frozenset[str]) -> tuple[Index, frozenset[str]]:
        """An index of the files summarised so far that hold ``kinds`` or still wait, built as
        `index_of` builds the whole one (so it lists the objects of ``kinds`` as that one will, when no
        file still to parse holds one), and the paths of its files."""
        index = Index()
        paths: set[str] = set()
        for i, inp in enumerate(self.inputs):
            summary = own[i] if i in own else self.summaries.get(i)
            if summary is None or not (stream.waits(i) or any(o.kind in kinds for o in summary.objects)):
                continue
            if i in own:
                stream.add(index, i, inp.display, summary, loaders[i])
            else:
                add_summary(index, inp.display, summary, inp.target, loaders[i])
            paths.add(inp.display)
        return index, frozenset(paths)

    def update_pack(self, known: dict[int, FileSummary] | None = None) -> None:
        """Store a new context pack when there is none, or when more than `PACK_STALE_FRACTION` of
        this run's context files are not in it (``known``: summaries the caller holds, such as those
        the workers sent).

        The pack then holds exactly this run's context files (files gone since, or now targets,
        drop out); the next run with the same context reads it instead of each file's entry. A file
        changed since the pack was written is read from its own entry: after each commit, the
        pre-commit hook's context holds the files the last commit changed, and rewriting the whole
        pack for those few cost more than it saved."""
        context = [(i, inp.key) for i, inp in enumerate(self.inputs) if not inp.target and inp.key is not None]
        if self.cache is None or not self.cache.enabled or len(context) < PACK_MIN_FILES:
            return
        old = self.pack
        missing = sum(1 for _, k in context if old is None or k not in old.files)
        if old is not None and missing <= len(context) * PACK_STALE_FRACTION:
            return  # the few files changed since come from their own entries; a rewrite would cost more
        from_old = old.summaries() if old is not None else None
        summaries: dict[str, FileSummary] = {}
        for i, key in context:
            if key in summaries:
                continue
            have = (known or {}).get(i) or self.summaries.get(i) or (from_old or {}).get(key)
            summaries[key] = have if have is not None else self.summary(i)
        self.cache.put_pack(pack_bytes(summaries))
        self.stats["pack_written"] = len(summaries)

    def store(self, outcomes: dict[int, Outcome], reads: set[str], rows: list[FileRow]) -> None:
        if self.results is None:
            return
        keys = {i: (self.inputs[i].display, k) for i in outcomes if (k := self.inputs[i].key) is not None}
        self.results.store(outcomes, keys, reads, rows)

    def result(self, outcomes: dict[int, Outcome], reused: set[int], files: list[SourceFile],
               index: Index | Callable[[], Index], errors: list[InternalError], rows: list[FileRow] | None) -> Result:
        """The run's `Result`: linted files' outcomes plus the reused entries, in input order."""
        findings: list[Finding] = []
        suppressions: list[Finding] = []
        suppressed = 0
        for i in sorted([*outcomes, *reused]):
            got: Outcome | Entry = outcomes[i] if i in outcomes else self.candidates[i]
            findings.extend(got.findings)
            suppressions.extend(got.suppressions)
            suppressed += got.suppressed
        findings.sort(key=Finding.sort_key)
        if self.cache is not None:
            self.stats["cache_writes"] = self.cache.writes
        if self.results is not None:
            self.stats["results_reused"] = self.results.hits
            self.stats["results_stale"] = self.results.stale
        return Result(findings=findings, files=files, index_or_builder=index, config=self.config,
                      selected=self.config.selected(), internal_errors=errors, suppressed=suppressed,
                      stats=self.stats, suppressions=sorted(suppressions, key=Finding.sort_key),
                      known_target_objects=self.target_objects(rows))

    def target_objects(self, rows: list[FileRow] | None) -> int | None:
        """Objects in the target files, from the rows (every target has one once summarised)."""
        if rows is None:
            return None
        return sum(r.objects for r, inp in zip(rows, self.inputs, strict=True) if inp.target)


def _stages(inputs: list[Input], todo: list[int]) -> list[list[int]]:
    """The files to parse, by the first stage whose kinds they may hold (`dralint.engine.stream.STAGES`),
    each group in input order."""
    groups: list[list[int]] = [[] for _ in range(len(STAGES) + 1)]
    for i in todo:
        groups[stage_of(inputs[i].raw)].append(i)
    return groups


def _lint_serial(run: _Run) -> Result:
    with quiet_gc():
        try:
            return _lint_serial_quiet(run, ahead=True)
        except _Disagrees:  # a file's documents are not where the scan for them said: in stages instead
            run.stats["parsed_ahead"] = "disagreed"
            return _lint_serial_quiet(run, ahead=False)


class _Disagrees(Exception):
    """A file parsed in the stream holds other objects of the staged kinds than were parsed ahead."""


def _lint_serial_quiet(run: _Run, ahead: bool) -> Result:
    """Stream the files: each target is parsed, checked on its own and summarised, and its parse tree
    goes, unless a rule asked the index about it (`dralint.engine.runner.SealedIndex`). Those
    (rule, unit) pairs run again when the kinds they asked about are complete, or at the end, on an
    index of summaries plus the few trees kept for them. The staged kinds are complete before the
    stream when their documents are parsed ahead (``ahead``: `dralint.engine.stream.Ahead`), else
    once the files that may hold them, parsed first, are done (`dralint.engine.stream.STAGES`).
    Peak memory then grows with the index, not with the repository."""
    inputs, cache = run.inputs, run.cache
    limits = limits_for(run.config)
    runner = _Runner(run.config, Index())
    runner.seal()
    stream = Stream(runner, [inp.display for inp in inputs])
    own: dict[int, FileSummary] = {}  # summaries of the parsed targets (index, dependency digest, cache)
    loaders: list[FileLoader] | None = None

    def parse(i: int) -> None:
        inp = inputs[i]
        sf = inp.parse(limits)
        if inp.target:
            summary = own[i] = stream.check(i, sf, owned=inp.loaded is None)
            progress.advance()
        else:
            summary = run.summaries[i] = summarize(sf).compact()  # the parse tree goes: the summary keeps
            # what the index needs
            if cache is not None and inp.key is not None:
                cache.put(inp.key, summary.to_bytes())
        if parsed_ahead is not None and not parsed_ahead.agrees(i, summary):
            raise _Disagrees(inp.display)

    todo = [i for i in range(len(inputs)) if i not in run.summaries and i not in run.candidates and i not in run.lazy]
    # Staged only when every input is parsed now or summarised already: a file the caches answer
    # for later (a stored result, a packed context file) could hold any kind. With stored results and
    # no packed context, which results hold is decided first: when some do not (an edited claim
    # template makes every file that looked one up stale), the stale files join the stream, and the
    # summaries of the reused ones are read for the stages, instead of all of them waiting unstaged.
    reused: set[int] | None = None
    stale: list[int] = []
    if run.candidates and not run.lazy:
        reused = run.decide(todo, limits)
        stale = [i for i in run.candidates if i not in reused]
        if stale:
            for i in reused:
                run.summary(i)
            todo = sorted([*todo, *stale])
    staged = not run.lazy and (not run.candidates or bool(stale))
    parsed_ahead = Ahead.parse([(i, inputs[i].display, b"" if inputs[i].problem is not None else inputs[i].raw)
                                for i in todo], limits) if staged and ahead and len(todo) > 1 else None
    if parsed_ahead is not None:  # the staged kinds are complete before the stream: no stages
        runner.sealed.complete(run.ahead_index(parsed_ahead), STAGED_KINDS, frozenset())
        run.stats["parsed_ahead"] = len(parsed_ahead.parts)
    groups = _stages(inputs, todo) if staged and parsed_ahead is None else [todo]
    complete: frozenset[str] = frozenset()
    for n, group in enumerate(groups):
        if n and any(groups[n:]):  # the kinds of the stages before are complete: rules may ask about them
            loaders = loaders or [inp.loader(limits, run.stats) for inp in inputs]
            complete |= STAGES[n - 1]
            early, done = run.early_index(own, stream, loaders, complete)
            runner.sealed.complete(early, complete, done)
            stream.advance()
        for i in group:
            parse(i)
    rows: list[FileRow] | None = None
    if reused is None:
        reused = set()
        if run.candidates:  # the changed targets are part of what the stored results depend on
            # stored results that read no other file depend on no other row: unread summaries stay unread
            rows = run.rows(own, nothing_read=not any(e.reads for e in run.candidates.values()))
            reused = run.reuse(rows)
            for i in run.candidates:
                if i not in reused:
                    parse(i)
    progress.advance(len(reused))
    loaders = loaders or [inp.loader(limits, run.stats) for inp in inputs]
    run.stats["kept_trees"] = len(stream.waiting)  # waiting for the whole index
    run.stats["waited"] = stream.waited
    index: Index | None = None
    runner.sealed.let_go()  # the early index goes before the whole one is built
    if stream.waiting:  # else no rule asked the index: it is built only if a report asks for it
        index = run.index_of(own, stream, loaders)
        # what is still parsed lives to the end: out of the collector's sight (when it is much)
        trees_built(sum(len(inputs[i].raw or b"") for i in stream.waiting))
        stream.finish(index)
    files = [stream.file_of(i, inp.display, loaders[i]) for i, inp in enumerate(inputs) if i in own or i in reused]
    if cache is not None and run.results is not None:
        for i, summary in own.items():
            key = inputs[i].key
            if key is not None and not cache.has(key):
                cache.put(key, summary.to_bytes())
    reads = runner.early_reads | (index.reads if index is not None else set())
    if rows is None or reads:  # what the rules read decides which rows the digest needs
        rows = run.rows(own, nothing_read=not reads and index is None)
    run.store(stream.outcomes, reads, rows)
    run.update_pack()
    # the caller's index is built from the summaries if a report reads it: the trees kept for the
    # waiting rules go now, before the report takes its own memory
    del index
    stream.release()
    return run.result(stream.outcomes, reused, files, lambda: run.index_of(own, None, loaders), stream.errors(), rows)
