"""The entry points: plan and apply a migration for parsed files (`migrate_files`) or paths on disk
(`migrate_paths`); nothing is written here (the command writes the outcomes)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from dralint.checks.registry import Context
from dralint.engine.config import Config
from dralint.engine.memory import linger, quiet_gc, trees_built
from dralint.engine.runner import lint_files
from dralint.fix.loop import FileOutcome, load_run
from dralint.fix.splice import PlannedFix
from dralint.inputs.load import SourceFile, read_side_file, side_yaml, yaml_error_text
from dralint.inputs.roots import project_roots
from dralint.migrate.apply import _Job, _merge, _run, _workers
from dralint.migrate.bridge import _bridge
from dralint.migrate.planner import _Planner
from dralint.migrate.records import MigrateOptions, MigrationReport, WorkloadReport

# ----------------------------------------------------------------------------------------------
# running it


def migrate_files(targets: Sequence[SourceFile], context: Sequence[SourceFile], config: Config,
                  opts: MigrateOptions, progress: Callable[[int], None] | None = None) -> MigrationReport:
    """Plan and apply the migration in memory (nothing is written); gate every changed file."""
    scan = replace(config, select=["DRA204"], extend_select=[], ignore=[], per_file_ignores={})
    result = lint_files(list(targets), list(context), scan)
    ctx = Context(index=result.index, profile=config.profile)
    if opts.extended_resource_bridge:
        bridged, new_files, notes = _bridge(result, config, opts, targets, ctx)
        return MigrationReport(bridged, [FileOutcome(sf.path, sf.raw, sf.raw) for sf in targets], new_files, notes)
    # The index, the findings and what the planner works out (plain specs, fingerprints, plans) live
    # until the end of the run, like the trees: the planner runs with the collector paused (its full
    # collections walked everything it had built so far, 0.12 s on the bench corpus), and the edits run
    # with all of it frozen, so that the collections their allocations set off do not walk it again and
    # again, nor write to the pages a forked worker shares with this process (which copies them).
    with quiet_gc():
        planner = _Planner(result, config, opts)
        by_obj = {(f.path, f.doc_index, f.base_path) for f in result.findings if f.rule == "DRA204"}
        planner.dra204 = {id(o) for o in result.index.objects if (o.file.path, o.doc.index, o.base_path) in by_obj}
        plans: dict[str, list[PlannedFix]] = defaultdict(list)
        reports: list[WorkloadReport] = []
        rep_of: dict[int, WorkloadReport] = {}
        target_ids = {id(sf) for sf in targets}
        for obj in result.index.objects:
            if not obj.target or id(obj.file) not in target_ids:
                continue
            pf, rep = planner.plan(obj)
            if rep is not None:
                reports.append(rep)
            if pf is not None and rep is not None:
                plans[obj.file.path].append(pf)
                rep_of[id(pf)] = rep
        outcomes = [FileOutcome(sf.path, sf.raw, sf.raw) for sf in targets]
        todo = [k for k, sf in enumerate(targets) if plans.get(sf.path)]
        job = _Job(list(targets), [plans.get(sf.path, []) for sf in targets], config, opts.keep_extended_resources)
        trees_built(sum(len(sf.text) for sf in result.index.files))
        for done in _run(job, todo, _workers(config, job, todo)):
            _merge(done, outcomes[done.index], job.plans[done.index], rep_of)
            if progress is not None:
                progress(1)
    if progress is not None:
        progress(len(targets) - len(todo))
    linger((result, planner, job))
    return MigrationReport(reports, outcomes)


# ----------------------------------------------------------------------------------------------
# applying the plans, file by file (in worker processes for large inputs)


def migrate_paths(paths: Sequence[str], config: Config, opts: MigrateOptions, context: Sequence[str] = (),
                  stdin: tuple[str, bytes] | None = None, follow_symlinks: bool = False,
                  progress: Callable[[int], None] | None = None,
                  on_loaded: Callable[[int], None] | None = None) -> MigrationReport:
    # the loaded trees live for the whole run: out of the garbage collector's sight, as `check` keeps them
    with quiet_gc():
        loaded = load_run(paths, config, context, stdin, follow_symlinks)
        if on_loaded is not None:
            on_loaded(len(loaded.targets))
        report = migrate_files(loaded.targets, loaded.context, config, opts, progress)
    linger(loaded)
    report.missing, report.write_to, report.roots = loaded.missing, loaded.write_to, loaded.roots
    return report


def parse_class_map(values: Sequence[str]) -> dict[str, str]:
    """``--device-class-map``: ``FROM=TO`` pairs (comma-separated, repeatable) or a YAML mapping file."""
    out: dict[str, str] = {}
    for v in values:
        p = Path(v)
        if "=" not in v and p.is_file():
            import yaml

            refused = project_roots().refusal(p, "--device-class-map file", hint=False)
            if refused:
                raise ValueError(refused)
            try:
                data = side_yaml(read_side_file(p).decode("utf-8"))
            except (OSError, UnicodeDecodeError) as e:
                raise ValueError(f"{v}: cannot read: {e}") from e
            except yaml.YAMLError as e:
                raise ValueError(f"{v}: invalid YAML: {yaml_error_text(e)}") from e
            if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(x, str)
                                                     for k, x in data.items()):
                raise ValueError(f"{v}: expected a mapping of device class names")
            out.update(data)
            continue
        for pair in v.split(","):
            if not pair.strip():
                continue
            src, sep, dst = pair.partition("=")
            if not sep or not src.strip() or not dst.strip():
                raise ValueError(f"--device-class-map expects FROM=TO, got {pair!r}")
            out[src.strip()] = dst.strip()
    return out
