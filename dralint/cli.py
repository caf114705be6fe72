"""Command line: ``dralint check | rules | explain`` (and the commands later modules add).

`main(argv) -> int` is the testable entry point; `entry()` is the console script. Exit codes:
0 nothing at or above ``--fail-on``; 1 findings; 2 usage or configuration error; 3 internal error.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from dralint import __version__, readiness
from dralint.commands import fix as fix_cmd
from dralint.commands import migrate as migrate_cmd
from dralint.docs import all_rules, rule_markdown, rules_json, rules_table
from dralint.engine import rendered
from dralint.engine.config import Config, ConfigError, load_config
from dralint.engine.runner import Result
from dralint.inputs.load import HAVE_LIBYAML
from dralint.knowledge.catalog import catalog
from dralint.knowledge.drivers import validate_profile as validate_drivers
from dralint.knowledge.profile import DriverProfile, ProfileError, newest_minor, parse_bool_map, target_minor
from dralint.model import Severity
from dralint.report import ReportOptions, format_names, get_formatter

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


#: results of this process's lint runs, kept until `entry` exits without freeing them (see there)
_KEEP_ALIVE: list[object] = []


class UsageError(click.UsageError):
    pass


def _codes(values: Sequence[str]) -> list[str]:
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


def use_color(choice: str, stream: Any) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


def common_lint_options(fn: Any) -> Any:
    """Options shared by every command that lints (check, fix, report, migrate)."""
    opts = [
        click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
                     help="Configuration file (default: nearest .dralint.yaml or pyproject.toml [tool.dralint])."),
        click.option("--isolated", is_flag=True, help="Ignore configuration files."),
        click.option("--select", multiple=True, help="Rule codes or prefixes to enable (comma-separated)."),
        click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable in addition."),
        click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable (comma-separated)."),
        click.option("--exclude", multiple=True, help="Glob of files or directories to skip (repeatable)."),
        click.option("--context", "context", multiple=True, type=click.Path(exists=True),
                     help="Directory loaded for cross-file lookups; findings are reported only for PATHS."),
        click.option("--kubernetes-version", help="Target Kubernetes minor, e.g. 1.35 (default: newest known)."),
        click.option("--feature-gates",
                     help="Kubernetes feature gates, e.g. DRAPrioritizedList=true,DRAAdminAccess=false."),
        click.option("--runtime-config", help="API versions switched on, e.g. resource.k8s.io/v1beta1=true."),
        click.option("--driver", "drivers", multiple=True,
                     help="Installed DRA driver as NAME or NAME=VERSION, e.g. gpu.nvidia.com=0.4.1 (repeatable)."),
        click.option("--inventory", multiple=True, type=click.Path(exists=True),
                     help="ResourceSlices (file, directory or `kubectl get resourceslices -o yaml` dump)."),
        click.option("--stdin-filename", help="Name to report for input read from `-`."),
        click.option("--max-file-size", type=click.IntRange(min=1), help="Largest file to read, in bytes."),
        click.option("--follow-symlinks", is_flag=True, help="Follow symlinks that lead outside the given paths."),
        click.option("-j", "--jobs", type=click.IntRange(min=0),
                     help="Worker processes (default: one per core for large inputs, none for a few files)."),
        click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
                     help="Where to cache per-file index summaries (default: .dralint_cache in the project)."),
        click.option("--no-cache", is_flag=True, help="Neither read nor write the cache."),
        click.option("-v", "--verbose", is_flag=True, help="Show the configuration and timing on stderr."),
    ]
    for o in reversed(opts):
        fn = o(fn)
    return fn


def build_run_config(kw: dict[str, Any]) -> Config:
    """Config file + CLI flags (flags win)."""
    if kw.get("isolated"):
        from dralint.engine.config import build_config

        cfg = build_config({}, None, Path.cwd())
    else:
        cfg = load_config(kw.get("config_path"))
    if kw.get("select"):
        cfg.select = _codes(kw["select"])
    if kw.get("extend_select"):
        cfg.extend_select += _codes(kw["extend_select"])
    if kw.get("ignore"):
        cfg.ignore += _codes(kw["ignore"])
    if kw.get("exclude"):
        cfg.exclude += list(kw["exclude"])
    if kw.get("max_file_size"):
        cfg.max_file_size = kw["max_file_size"]
    if kw.get("jobs") is not None:
        cfg.jobs = kw["jobs"]
    if kw.get("cache_dir"):
        cfg.cache_dir = str(Path(kw["cache_dir"]).absolute())
    if kw.get("no_cache"):
        cfg.use_cache = False
    p = cfg.profile
    try:
        if kw.get("kubernetes_version"):
            p.kubernetes_version = target_minor(kw["kubernetes_version"])
        if kw.get("feature_gates"):
            p.feature_gates.update(parse_bool_map(kw["feature_gates"], "feature gate"))
        if kw.get("runtime_config"):
            p.runtime_config.update(parse_bool_map(kw["runtime_config"], "runtime-config"))
    except ProfileError as e:
        raise ConfigError(str(e)) from e
    for d in kw.get("drivers") or ():
        name, _, version = d.partition("=")
        existing = {x.name: x for x in p.drivers}
        gates = existing[name].feature_gates if name in existing else {}
        p.drivers = [x for x in p.drivers if x.name != name] + [DriverProfile(name, version or None, gates)]
    try:
        validate_drivers(p)
    except ProfileError as e:
        raise ConfigError(str(e)) from e
    if kw.get("inventory"):
        p.inventory = [str(Path(x)) for x in kw["inventory"]]
    cfg.selected()  # validate selections
    return cfg


def run_lint(paths: Sequence[str], kw: dict[str, Any]) -> tuple[Result, Config, float]:
    cfg = build_run_config(kw)
    stdin = None
    paths = list(paths)
    if "-" in paths:
        paths.remove("-")
        data = sys.stdin.buffer.read()
        stdin = (kw.get("stdin_filename") or "-", data)
    elif not paths and not kw.get("helm_charts"):
        paths = ["."]
    t0 = time.perf_counter()
    result = rendered.lint(paths, cfg, context=kw.get("context") or (), stdin=stdin,
                         follow_symlinks=bool(kw.get("follow_symlinks")), helm_charts=kw.get("helm_charts") or (),
                         values_files=kw.get("helm_values") or (), sets=kw.get("helm_set") or ())
    return result, cfg, time.perf_counter() - t0


def report_problems(result: Result) -> int:
    """Missing paths and internal errors go to stderr; return the exit code they force."""
    code = EXIT_OK
    for m in result.missing:
        click.echo(f"dralint: error: {m}: no such file or directory", err=True)
        code = EXIT_USAGE
    for e in result.internal_errors:
        click.echo(f"dralint: internal error in rule {e.rule} while checking {e.path}: {e.detail} "
                   "(this is a bug; please report it)", err=True)
        code = EXIT_INTERNAL
    return code


def exit_code(result: Result, fail_on: str, exit_zero: bool) -> int:
    forced = report_problems(result)
    if forced:
        return forced
    if exit_zero or fail_on == "never":
        return EXIT_OK
    threshold = Severity.parse(fail_on)
    return EXIT_FINDINGS if any(f.severity >= threshold for f in result.findings) else EXIT_OK


def verbose_header(cfg: Config, result: Result, seconds: float) -> None:
    p = cfg.profile
    click.echo(f"dralint {__version__}: config {cfg.path or '(none)'}", err=True)
    click.echo(f"  target Kubernetes {p.kubernetes_version}; feature gates {p.feature_gates or '{}'}; "
               f"runtime-config {p.runtime_config or '{}'}", err=True)
    newest = newest_minor()
    if p.minor > tuple(int(x) for x in newest.split(".")):
        click.echo(f"  note: dralint has no data for Kubernetes {p.kubernetes_version}; judging with {newest}",
                   err=True)
    if p.drivers:
        click.echo("  drivers: " + ", ".join(f"{d.name}={d.version or 'newest'}" for d in p.drivers), err=True)
    if not HAVE_LIBYAML:
        click.echo("  warning: PyYAML without libyaml: parsing is ~9x slower", err=True)
    click.echo(f"  {len(result.files)} files, {len(result.index.objects)} objects, {len(result.selected)} rules, "
               f"{seconds:.2f}s", err=True)
    if result.stats:
        click.echo("  run: " + ", ".join(f"{k} {v}" for k, v in result.stats.items()), err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dralint")
def cli() -> None:
    """Lint Kubernetes manifests for Dynamic Resource Allocation and migrate them off the device plugin."""


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@common_lint_options
@click.option("--format", "fmt", default="text", show_default=True,
              help="Output format: " + ", ".join(format_names()) + ".")
@click.option("--output", "output", type=click.Path(dir_okay=False, writable=True),
              help="Write the report in --format to this file; text still goes to the terminal.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info", "never"]),
              help="Lowest severity that makes the exit code 1 (default: warning).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Show a count per rule.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
@click.option("--helm-chart", "helm_charts", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="Render this Helm chart offline (helm binary or dralint[helm]) and lint the output.")
@click.option("-f", "--values", "helm_values", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Values file for --helm-chart (repeatable).")
@click.option("--set", "helm_set", multiple=True, help="Value for --helm-chart, as helm --set (repeatable).")
@click.option("--fix", "apply_fixes", is_flag=True, help="Apply safe fixes (same as `dralint fix`).")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff: also apply unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
def check(paths: tuple[str, ...], fmt: str, output: str | None, fail_on: str | None, exit_zero: bool,
          statistics: bool, color: str, **kw: Any) -> None:
    """Lint manifests (files, directories, or - for stdin)."""
    if fmt not in format_names():
        raise UsageError(f"unknown format {fmt!r}; choose from {', '.join(format_names())}")
    apply_fixes, unsafe_fixes, diff = kw.pop("apply_fixes"), kw.pop("unsafe_fixes"), kw.pop("diff")
    if apply_fixes or diff:
        sys.exit(fix_cmd.run_fix(paths, kw, unsafe=unsafe_fixes, diff=diff, fmt=fmt, fail_on=fail_on,
                                 exit_zero=exit_zero, color=color, output=output, statistics=statistics))
    try:
        result, cfg, seconds = run_lint(paths, kw)
    except ConfigError as e:
        click.echo(f"dralint: error: {e}", err=True)
        sys.exit(EXIT_USAGE)
    _KEEP_ALIVE.append(result)
    if kw.get("verbose"):
        verbose_header(cfg, result, seconds)
    stream = sys.stdout
    opts = ReportOptions(color=use_color(color, stream), statistics=statistics,
                         verbose=bool(kw.get("verbose")))
    if output:
        file_opts = ReportOptions(statistics=statistics)
        Path(output).write_text(get_formatter(fmt)(result, file_opts), encoding="utf-8")
        click.echo(get_formatter("text")(result, opts), nl=False, color=opts.color)
    else:
        fmt_opts = opts if fmt == "text" else ReportOptions(statistics=statistics)
        click.echo(get_formatter(fmt)(result, fmt_opts), nl=False, color=opts.color)
    sys.exit(exit_code(result, fail_on or cfg.fail_on, exit_zero))


@cli.command("rules")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
def rules_cmd(fmt: str) -> None:
    """List every rule."""
    metas = all_rules()
    if fmt == "json":
        click.echo(json.dumps(rules_json(metas), indent=2))
    elif fmt == "markdown":
        click.echo(rules_table(metas), nl=False)
    else:
        for m in metas:
            fix = "[*]" if m.fixable else "   "
            off = "" if m.enabled_by_default else " (off by default)"
            click.echo(f"{m.code}  {fix} {m.severity!s:<7} {m.name}{off}")


@cli.command()
@click.argument("code")
def explain(code: str) -> None:
    """Explain a rule (by code or name)."""
    cat = catalog()
    meta = cat.get(code.upper()) or next((m for m in cat.values() if m.name == code), None)
    if meta is None:
        click.echo(f"dralint: error: unknown rule {code!r} (see `dralint rules`)", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(rule_markdown(meta))


cli.add_command(readiness.command())  # `dralint report`
cli.add_command(fix_cmd.command())  # `dralint fix`
cli.add_command(migrate_cmd.command())  # `dralint migrate`


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (never raises for bad input)."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="dralint", standalone_mode=False)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else EXIT_USAGE)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return EXIT_USAGE
    except click.ClickException as e:
        e.show()
        return EXIT_USAGE
    except ConfigError as e:
        click.echo(f"dralint: error: {e}", err=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug: say so plainly, with a pointer to the traceback switch
        click.echo(f"dralint: internal error: {type(e).__name__}: {e} (set DRALINT_DEBUG=1 for a traceback)", err=True)
        if os.environ.get("DRALINT_DEBUG"):
            raise
        return EXIT_INTERNAL
    return EXIT_OK


def entry() -> None:
    code = main()
    if sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)  # a profiler or coverage tool writes its report at normal exit
    # A large run holds millions of small objects (the parse trees); freeing them one by one at exit
    # took a tenth of a whole check. Everything has been written by now: flush, and skip the teardown.
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):
        pass  # a closed pipe (`dralint check | head`): what was not read is gone either way
    os._exit(code)
