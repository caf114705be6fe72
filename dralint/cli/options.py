"""What the commands share: the lint options, the configuration built from a config file plus flags,
the colour choice, the lint run behind them, and the exit codes."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from dralint.engine import rendered
from dralint.engine.cache import cache_location
from dralint.engine.config import Config, ConfigError, check_input_links, load_config
from dralint.engine.runner import Result
from dralint.knowledge.catalog import use_copy
from dralint.knowledge.drivers import validate_profile as validate_drivers
from dralint.knowledge.profile import DriverProfile, ProfileError, parse_bool_map, target_minor
from dralint.report.escaping import echo_err

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


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
    if os.environ.get("TERM") == "dumb":  # a terminal that does not understand escape sequences
        return False
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
                     help="Installed DRA driver as NAME or NAME=VERSION, e.g. gpu.nvidia.com=0.4.1 (repeatable). "
                          "A driver dralint has no data for is taken as installed, with classes named after it."),
        click.option("--device-class", "device_classes", multiple=True,
                     help="A DeviceClass the cluster has that the linted files do not define (repeatable)."),
        click.option("--inventory", multiple=True, type=click.Path(exists=True),
                     help="ResourceSlices (file, directory or `kubectl get resourceslices -o yaml` dump)."),
        click.option("--stdin-filename", help="Name to report for input read from `-`."),
        click.option("--max-file-size", type=click.IntRange(min=1), help="Largest file to read, in bytes."),
        click.option("--follow-symlinks", is_flag=True, help="Follow symlinks that lead outside the given paths."),
        click.option("-j", "--jobs", type=click.IntRange(min=0),
                     help="Worker processes, at most one per usable core (default: one per core for large "
                          "inputs, none for a few files)."),
        click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), envvar="DRALINT_CACHE_DIR",
                     help="Where to cache per-file index summaries, inside the project or the user cache "
                          "directory (default: .dralint_cache in the project; env: DRALINT_CACHE_DIR)."),
        click.option("--no-cache", is_flag=True, help="Neither read nor write the cache."),
        click.option("-v", "--verbose", is_flag=True, help="Show the configuration and timing on stderr."),
    ]
    for o in reversed(opts):
        fn = o(fn)
    return fn


def build_run_config(kw: dict[str, Any], paths: Sequence[str] = ()) -> Config:
    """Config file (the nearest to ``paths``, see `load_config`) + CLI flags (flags win)."""
    use_copy(not kw.get("no_cache"))  # before any data file is read: --no-cache uses no cache, not even this
    if kw.get("isolated"):
        from dralint.engine.config import build_config, discovery_start, project_root

        cfg = build_config({}, None, project_root(discovery_start(paths, Path.cwd()), Path.cwd()))
    else:
        cfg = load_config(kw.get("config_path"), follow_symlinks=bool(kw.get("follow_symlinks")), paths=paths)
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
        cfg.set_jobs(kw["jobs"])
    if kw.get("cache_dir"):
        cfg.cache_dir = str(Path(kw["cache_dir"]).absolute())
    if kw.get("no_cache"):
        cfg.use_cache = False
    if cfg.use_cache and cfg.cache_dir:
        problem = cache_location(Path(cfg.cache_dir), cfg.root)[1]
        if problem:
            raise ConfigError(f"--cache-dir / DRALINT_CACHE_DIR: {problem}")
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
        classes = existing[name].device_classes if name in existing else ()
        p.drivers = [x for x in p.drivers if x.name != name] + [DriverProfile(name, version or None, gates, classes)]
    for c in kw.get("device_classes") or ():
        if c not in p.device_classes:
            p.device_classes.append(c)
    try:
        validate_drivers(p)
    except ProfileError as e:
        raise ConfigError(str(e)) from e
    if kw.get("inventory"):
        p.inventory = [str(Path(x)) for x in kw["inventory"]]
    # inventory and values files that are symlinks out of the project: exit 2 before anything reads them
    check_input_links(cfg, kw.get("helm_values") or (), bool(kw.get("follow_symlinks")))
    cfg.selected()  # validate selections
    return cfg


def read_stdin(cfg: Config) -> bytes:
    """What ``-`` stands for: standard input, read no further than the file size limit. More is a usage
    error, not a file cut short: `fix` and `migrate` write their input back, and a cut copy would lose
    the rest of what was piped in."""
    data = sys.stdin.buffer.read(cfg.max_file_size + 1)
    if len(data) > cfg.max_file_size:
        raise ConfigError(f"standard input holds more than {cfg.max_file_size:,} bytes, the file size limit "
                          "(raise it with --max-file-size); nothing was checked or written")
    return data


def run_lint(paths: Sequence[str], kw: dict[str, Any]) -> tuple[Result, Config, float]:
    cfg = build_run_config(kw, paths)
    stdin = None
    paths = list(paths)
    if "-" in paths:
        paths.remove("-")
        stdin = (kw.get("stdin_filename") or "-", read_stdin(cfg))
    elif not paths and not kw.get("helm_charts"):
        paths = ["."]
    t0 = time.perf_counter()
    result = rendered.lint(paths, cfg, context=kw.get("context") or (), stdin=stdin,
                         follow_symlinks=bool(kw.get("follow_symlinks")), helm_charts=kw.get("helm_charts") or (),
                         values_files=kw.get("helm_values") or (), sets=kw.get("helm_set") or (),
                         helm_cli={k: v for k, v in kw.items() if k.startswith("helm_") and v})
    return result, cfg, time.perf_counter() - t0


def report_problems(result: Result) -> int:
    """Missing paths and internal errors go to stderr; return the exit code they force."""
    code = EXIT_OK
    for m in result.missing:
        echo_err(f"dralint: error: {m}: no such file or directory")
        code = EXIT_USAGE
    for e in result.internal_errors:
        echo_err(f"dralint: internal error in rule {e.rule} while checking {e.path}: {e.detail} "
                 "(this is a bug; please report it)")
        code = EXIT_INTERNAL
    return code
