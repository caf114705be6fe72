"""``dralint migrate``: the bulk device-plugin -> DRA transform (see `dralint.migrate`).

Exit codes: 0 done (or nothing to migrate); 1 with ``--diff``/``--dry-run`` when files would
change; 2 usage error or a file whose result failed its checks (that file is left unchanged).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from dralint.cli.options import build_run_config, common_lint_options, read_stdin  # the same config as `check`
from dralint.engine import progress, rendered_targets
from dralint.engine.config import ConfigError
from dralint.fix.write import atomic_write, unified_diff
from dralint.migrate import charts as chart_migrate
from dralint.migrate.records import MigrateOptions, MigrationReport, WorkloadReport
from dralint.migrate.run import migrate_paths, parse_class_map
from dralint.report.escaping import echo_err, json_text, log_guard, visible
from dralint.report.progress import MIN_FILES, Bar, wanted

EXIT_OK, EXIT_CHANGES, EXIT_USAGE = 0, 1, 2


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=False)) + "  " + r[-1]
            for r in rows]


def render_text(report: MigrationReport, would: bool) -> str:
    """The summary; names, paths and reasons come from the input, so each is shown through `visible`."""
    n_changed = len(report.changed()) + len(report.new_files)
    verb = "Would migrate" if would else "Migrated"
    out = [f"{verb} {len(report.migrated())} workload{'s' if len(report.migrated()) != 1 else ''}, "
           f"skipped {len(report.skipped())}; {n_changed} file{'s' if n_changed != 1 else ''} "
           f"{'would change' if would else 'changed'}."]
    if report.tolerations():
        added = report.tolerations()
        out.append(f"{'Would add' if would else 'Added'} {added} GPU toleration{'s' if added != 1 else ''} "
                   "(the taints ExtendedResourceToleration no longer tolerates once the extended resource is gone).")
    rows: list[tuple[str, ...]] = [("RESULT", "WORKLOAD", "WHERE", "DETAILS")]
    notes: list[tuple[WorkloadReport, str]] = []
    for w in sorted(report.workloads, key=lambda w: (w.status == "skipped", w.path, w.line)):
        detail = w.reason if w.status == "skipped" else (", ".join(w.objects) or "nothing new needed")
        rows.append((w.status, visible(w.label()), f"{visible(w.path)}:{w.line}", visible(detail)))
        notes.extend((w, n) for n in w.notes)
    if len(rows) > 1:
        out.append("")
        out.extend(_table(rows))
    if notes:
        out.append("")
        out.append("Notes:")
        out.extend(f"  {visible(w.label())}: {visible(n)}" for w, n in notes)
    for n in report.notes:
        out.append(f"Note: {visible(n)}")
    if report.new_files:
        out.append("")
        out.extend(f"{'Would write' if would else 'Wrote'} {visible(p)}" for p in sorted(report.new_files))
    return log_guard("\n".join(out) + "\n")


def command() -> click.Command:
    @click.command("migrate")
    @click.argument("paths", nargs=-1, type=click.Path())
    @common_lint_options
    @click.option("--template-name-pattern", default="{workload}-gpu", show_default=True,
                  help="Name of new ResourceClaimTemplates; placeholders {workload}, {kind}, {namespace}.")
    @click.option("--keep-extended-resources", is_flag=True,
                  help="Keep nvidia.com/gpu requests next to the new claims (double counts while both run).")
    @click.option("--convert-node-selectors", is_flag=True,
                  help="Turn gpu-feature-discovery nodeSelectors/affinities into CEL selectors on the claim.")
    @click.option("--device-class-map", multiple=True,
                  help="Use other device classes: FROM=TO (comma-separated, repeatable) or a YAML mapping file.")
    @click.option("--extended-resource-bridge", is_flag=True,
                  help="Leave pods as they are; verify or emit DeviceClasses with extendedResourceName instead.")
    @click.option("--bridge-file", default="dra-extended-resources.yaml", show_default=True,
                  help="Where --extended-resource-bridge writes new DeviceClasses.")
    @click.option("--include-custom-resources", is_flag=True,
                  help="Also migrate pod templates inside custom resources (check that their CRD keeps "
                       "resourceClaims).")
    @click.option("--no-gpu-toleration", "no_gpu_toleration", is_flag=True,
                  help="Do not add the nvidia.com/gpu NoSchedule toleration that ExtendedResourceToleration "
                       "added while pods requested the extended resource.")
    @click.option("--diff", is_flag=True, help="Print a unified diff and write nothing.")
    @click.option("--dry-run", is_flag=True, help="Show the summary and write nothing.")
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
                  help="Format of the summary.")
    @click.option("--progress/--no-progress", "show_progress", default=None,
                  help="Progress bar (default: on a terminal, for large inputs).")
    def migrate(paths: tuple[str, ...], template_name_pattern: str, keep_extended_resources: bool,
                convert_node_selectors: bool, device_class_map: tuple[str, ...], extended_resource_bridge: bool,
                bridge_file: str, include_custom_resources: bool, no_gpu_toleration: bool, diff: bool,
                dry_run: bool, fmt: str, show_progress: bool | None, **kw: Any) -> None:
        """Migrate workloads from NVIDIA device-plugin resources to DRA claims (files, directories, or -)."""
        sys.exit(run_migrate(paths, kw, MigrateArgs(
            template_name_pattern, keep_extended_resources, convert_node_selectors, device_class_map,
            extended_resource_bridge, bridge_file, include_custom_resources, diff, dry_run, fmt, show_progress,
            not no_gpu_toleration)))

    return migrate


class MigrateArgs:
    def __init__(self, pattern: str, keep: bool, convert: bool, class_map: tuple[str, ...], bridge: bool,
                 bridge_file: str, include_cr: bool, diff: bool, dry_run: bool, fmt: str,
                 progress: bool | None, gpu_toleration: bool = True) -> None:
        self.pattern, self.keep, self.convert, self.class_map = pattern, keep, convert, class_map
        self.bridge, self.bridge_file, self.include_cr = bridge, bridge_file, include_cr
        self.diff, self.dry_run, self.fmt, self.progress = diff, dry_run, fmt, progress
        self.gpu_toleration = gpu_toleration


def run_migrate(paths: tuple[str, ...], kw: dict[str, Any], a: MigrateArgs) -> int:
    try:
        cfg = build_run_config(kw, paths)
        class_map = parse_class_map(a.class_map)
    except (ConfigError, ValueError) as e:
        echo_err(f"dralint: error: {e}")
        return EXIT_USAGE
    if "{workload}" not in a.pattern:
        echo_err("dralint: error: --template-name-pattern must contain {workload}")
        return EXIT_USAGE
    opts = MigrateOptions(a.pattern, a.keep, a.convert, class_map, a.bridge, a.bridge_file, a.include_cr,
                          a.gpu_toleration)
    targets = list(paths)
    stdin: tuple[str, bytes] | None = None
    if "-" in targets:
        targets.remove("-")
        try:
            stdin = (kw.get("stdin_filename") or "-", read_stdin(cfg))
        except ConfigError as e:
            echo_err(f"dralint: error: {e}")
            return EXIT_USAGE
    elif not targets:
        targets = ["."]
    # the same bar as `check` and `fix`: it starts as soon as the files are read, the engine advances it
    # through the lint pass, then the apply pass restarts it for the files that get migrated
    listener = None
    if a.progress or (a.progress is None and wanted(sys.stderr)):
        listener = Bar(sys.stderr, min_files=0 if a.progress else MIN_FILES)
    total = 0
    applying = False

    def loaded(n: int) -> None:
        nonlocal total
        total = n
        progress.start(n, "files checked")  # the engine advances it as each target is linted

    def step(n: int) -> None:
        nonlocal applying
        if not applying:
            applying = True
            progress.start(total, "files migrated")
        progress.advance(n)

    # charts are rendered and get suggestions; overlays are refused: neither is ever rewritten
    rendered = rendered_targets.split(targets, cfg)
    targets = rendered.plain
    for note in rendered_targets.refusals("migrate", rendered_targets.Split(overlays=rendered.overlays)):
        echo_err(f"dralint: note: {visible(note)}")
    charts = chart_migrate.suggest(rendered.charts, cfg, opts, {k: v for k, v in kw.items() if k.startswith("helm_")})
    with progress.listening(listener):
        report = migrate_paths(targets, cfg, opts, kw.get("context") or (), stdin,
                               bool(kw.get("follow_symlinks")), step, loaded)
    code = EXIT_OK
    for m in report.missing:
        echo_err(f"dralint: error: {m}: no such file or directory")
        code = EXIT_USAGE
    for f in report.files:
        for g in f.failures:
            echo_err(f"dralint: error: not migrating {f.path}: {g.reason}; the file was left unchanged "
                     "(this is a bug; please report it)")
            code = EXIT_USAGE
    would = a.diff or a.dry_run
    stdin_name = stdin[0] if stdin else None
    for f in report.files:
        if f.path == stdin_name and not a.diff:
            sys.stdout.buffer.write(f.after if f.changed else f.before)
            sys.stdout.flush()
            continue
        if not f.changed:
            continue
        if a.diff:
            click.echo(log_guard(unified_diff(visible(f.path), f.before, f.after)), nl=False)
        elif not a.dry_run:
            try:
                atomic_write(report.write_to.get(f.path, f.path), f.after, report.roots)
            except OSError as e:
                echo_err(f"dralint: error: cannot write {f.path}: {e.strerror or e}")
                code = EXIT_USAGE
    for path, data in report.new_files.items():
        if a.diff:
            click.echo(log_guard(unified_diff(visible(path), b"", data)), nl=False)
        elif not a.dry_run:
            try:
                # a bridge file linked inside the project is written at its target; a link out is refused
                atomic_write(os.path.realpath(path), data, report.roots)
            except OSError as e:
                echo_err(f"dralint: error: cannot write {path}: {e.strerror or e}")
                code = EXIT_USAGE
    report.workloads += charts.workloads
    report.notes += charts.notes
    for problem in charts.errors:
        echo_err(f"dralint: error: {visible(problem)}")
        code = EXIT_USAGE
    for what, label, before, after in charts.diffs if a.diff else ():
        click.echo(log_guard(f"# {visible(what)}\n" + unified_diff(visible(label), before, after)), nl=False)
    if a.fmt == "json":
        summary = json_text(json.dumps(report.as_json(), indent=2)) + "\n"
    else:
        summary = render_text(report, would)
    to_err = stdin is not None or a.diff
    click.echo(summary, nl=False, err=to_err)
    if code:
        return code
    if would and (report.changed() or report.new_files or charts.diffs):
        return EXIT_CHANGES
    return EXIT_OK
