"""Configuration: ``.dralint.yaml`` or ``[tool.dralint]`` in ``pyproject.toml``, found as ruff finds
its own: the nearest one from the linted paths upward (their deepest common directory), else from the
working directory; ``--config PATH`` names one, ``--isolated`` uses none. The project root (relative
``exclude`` patterns, the cache) is the directory of that file, else the git work tree around the
linted paths, else the working directory.

The file is validated against a JSON schema, and each rule's options against the options schema
in its ``rule.yaml``; unknown keys are errors (exit 2), because a typo in a CI gate's config
should fail loudly rather than silently check less.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dralint.inputs.files import matches_glob
from dralint.inputs.load import read_side_file, side_yaml, yaml_error_text
from dralint.inputs.roots import Roots, project_roots
from dralint.knowledge.catalog import RuleMeta, catalog
from dralint.knowledge.drivers import validate_profile as validate_drivers
from dralint.knowledge.legacy import PatternError, compile_pattern
from dralint.knowledge.profile import ClusterProfile, DriverProfile, ProfileError, target_minor
from dralint.model import ConfigError as ConfigError  # raised here; defined low so inputs can raise it too
from dralint.model import Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CONFIG_NAMES = (".dralint.yaml", ".dralint.yml")


_CODES = {"type": "array", "items": {"type": "string"}}
_BOOL_MAP = {"type": "object", "additionalProperties": {"type": "boolean"}}
#: how one chart renders; the same keys at `helm:` (every chart) and `helm: charts: <dir>:` (one)
_HELM_CHART: dict[str, Any] = {
    "release-name": {"type": "string"},
    "namespace": {"type": "string"},
    "values": {"type": "array", "items": {"type": "string"}},
    "set": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}},
    "set-string": {"type": "object", "additionalProperties": {"type": ["string", "number"]}},
    "api-versions": {"type": "array", "items": {"type": "string"}},
}

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "select": _CODES,
        "extend-select": _CODES,
        "ignore": _CODES,
        "per-file-ignores": {"type": "object", "additionalProperties": _CODES},
        "exclude": {"type": "array", "items": {"type": "string"}},
        "extend-exclude": {"type": "array", "items": {"type": "string"}},
        "severity": {
            "type": "object",
            "additionalProperties": {"enum": ["error", "warning", "info"]},
        },
        "rules": {"type": "object", "additionalProperties": {"type": "object"}},
        "fail-on": {"enum": ["error", "warning", "info", "never"]},
        "max-file-size": {"type": "integer", "minimum": 1},
        "kubernetes-version": {"type": ["string", "number"]},
        "feature-gates": _BOOL_MAP,
        "runtime-config": _BOOL_MAP,
        "drivers": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name"],
                "properties": {
                    "name": {"type": "string"},
                    "version": {"type": ["string", "number"]},
                    "feature-gates": _BOOL_MAP,
                    "device-classes": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
        "device-classes": {"type": "array", "items": {"type": "string"}},
        "inventory": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "extended-resources": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["pattern", "device-class"],
                "properties": {
                    "pattern": {"type": "string"},
                    "kind": {"enum": ["gpu", "mig", "shared"]},
                    "vendor": {"type": "string"},
                    "device-class": {"type": "string"},
                },
            },
        },
        "values-files": {
            "type": "object",
            "propertyNames": {"enum": ["gpu-operator", "dra-driver", "device-plugin"]},
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
        "helm": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                **_HELM_CHART,
                "charts": {"type": "object", "additionalProperties": {
                    "type": "object", "additionalProperties": False, "properties": _HELM_CHART}},
            },
        },
        "unsafe-fixes": {"type": "boolean"},
        "jobs": {"type": "integer", "minimum": 0},
        "output-format": {"type": "string"},
        "respect-gitignore": {"type": "boolean"},
    },
}


@dataclass
class Config:
    path: Path | None = None  # the file it came from
    root: Path = field(default_factory=Path.cwd)
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    #: skip what the walked directories' .gitignore files ignore (`respect-gitignore: false`: do not)
    respect_gitignore: bool = True
    severity: dict[str, Severity] = field(default_factory=dict)
    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    fail_on: str = "warning"
    max_file_size: int = 16 * 1024 * 1024
    unsafe_fixes: bool = False
    cache_dir: str | None = None
    use_cache: bool = True
    #: worker processes; None or 0 = one per core for large inputs, none for a handful of files
    jobs: int | None = None
    #: what `jobs` / `-j` asked for when that was more than the usable cores (for --verbose)
    jobs_requested: int | None = None
    profile: ClusterProfile = field(default_factory=ClusterProfile)
    #: the `helm:` table: how charts render (`dralint.engine.charts`); paths relative to `root`
    helm: dict[str, Any] = field(default_factory=dict)

    def set_jobs(self, requested: int | None) -> None:
        """Set the worker count, capped at the usable cores: a checked-in `jobs: 400` must not fork
        400 processes on a 2-core CI runner (more workers than cores only add memory and switching)."""
        cores = usable_cores()
        self.jobs = requested if requested is None or requested <= cores else cores
        self.jobs_requested = requested if self.jobs != requested else None

    # -- rule selection ------------------------------------------------------------------------
    def selected(self) -> dict[str, RuleMeta]:
        """The enabled rules: ruff-style prefixes; off-by-default rules need their exact code."""
        cat = catalog()
        chosen: set[str] = set()
        base = self.select if self.select is not None else ["ALL_DEFAULT"]
        for sel in [*base, *self.extend_select]:
            chosen |= _match(sel, cat)
        for ign in self.ignore:
            chosen -= _match(ign, cat, include_off=True)
        return {c: cat[c] for c in sorted(chosen)}

    def options_for(self, meta: RuleMeta) -> dict[str, Any]:
        opts = meta.option_defaults()
        opts.update(self.rule_options.get(meta.code, {}))
        return opts

    def severity_for(self, meta: RuleMeta) -> Severity:
        return self.severity.get(meta.code, meta.severity)

    def file_ignores(self, rel_path: str) -> set[str]:
        out: set[str] = set()
        for pattern, codes in self.per_file_ignores.items():
            if matches_glob(rel_path, pattern):
                out.update(codes)
        return out


def _match(sel: str, cat: dict[str, RuleMeta], include_off: bool = False) -> set[str]:
    sel = sel.strip().upper()
    if sel == "ALL_DEFAULT":
        return {c for c, m in cat.items() if m.enabled_by_default}
    if sel == "ALL":
        return set(cat)
    if sel in cat:
        return {sel}
    names = {m.name.upper(): c for c, m in cat.items()}
    if sel in names:
        return {names[sel]}
    if not sel.startswith("DRA") or not any(c.startswith(sel) for c in cat):
        raise ConfigError(f"unknown rule code or prefix {sel!r} (see `dralint rules`)")
    return {c for c, m in cat.items() if c.startswith(sel) and (m.enabled_by_default or include_off)}


def find_config(start: Path, follow_symlinks: bool = False) -> Path | None:
    """The nearest ``.dralint.yaml``, or a ``pyproject.toml`` with ``[tool.dralint]``.

    A candidate that is a symlink out of both ``start`` and its own directory is an error, raised
    before it is read (a committed ``.dralint.yaml -> ~/.aws/credentials`` would otherwise have its
    first line quoted in the parse error).
    """
    if start.exists() and not start.is_dir():
        start = start.parent  # a linted file: its directory is where the search starts
    for d in [start, *start.parents]:
        roots = Roots.of([start, d], follow_symlinks)
        for name in CONFIG_NAMES:
            if (d / name).is_file():
                _refuse_link(d / name, roots)
                return d / name
        pp = d / "pyproject.toml"
        if pp.is_file():
            _refuse_link(pp, roots)  # read below, to see whether it has a [tool.dralint] table
            try:
                if "dralint" in _toml(read_side_file(pp).decode("utf-8")).get("tool", {}):
                    return pp
            except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
                continue
    return None


def _refuse_link(path: Path, roots: Roots, what: str = "configuration file") -> None:
    why = roots.refusal(path, what)
    if why:
        raise ConfigError(why)


def _toml(text: str) -> dict[str, Any]:
    """A TOML document; nesting deeper than the recursive parser can follow is a decode error."""
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("nested too deeply to read") from None
    return data


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        text = read_side_file(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read config: {e}") from e
    if path.name == "pyproject.toml":
        try:
            raw = _toml(text).get("tool", {}).get("dralint", {})
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: invalid TOML: {e}") from e
    else:
        try:
            raw = side_yaml(text) or {}
        except yaml.YAMLError as e:
            raise ConfigError(f"{path}: invalid YAML: {yaml_error_text(e)}") from e
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the configuration must be a mapping")
    return raw


def _validate(raw: dict[str, Any], where: str) -> None:
    if not raw:
        return  # no configuration: nothing to check, and no jsonschema import (~30 ms) on every hook run
    _check_keys(raw, where)
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(CONFIG_SCHEMA).iter_errors(raw), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        loc = ".".join(str(p) for p in e.absolute_path) or "(top level)"
        raise ConfigError(f"{where}: invalid configuration at {loc}: {e.message}")


def _check_keys(raw: dict[str, Any], where: str) -> None:
    """Unknown keys (top level, and in each driver or extended resource) name the file, the key and
    the closest known key; an unquoted version that YAML or TOML read as a number gets a hint."""
    from dralint.suggest import closest

    def unknown(keys: Iterable[Any], known: dict[str, Any], at: str) -> None:
        for key in keys:
            if str(key) not in known:
                hint = closest(str(key), list(known))
                raise ConfigError(f"{where}: unknown configuration key {at + str(key)!r}"
                                  + (f"; did you mean {hint!r}?" if hint else f" (known keys: {', '.join(known)})"))

    props = CONFIG_SCHEMA["properties"]
    unknown(raw, props, "")
    for name in ("drivers", "extended-resources"):
        entries = raw.get(name)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(entry, dict):
                unknown(entry, props[name]["items"]["properties"], f"{name}.{i}.")
    version = raw.get("kubernetes-version")
    if isinstance(version, float) and len(repr(version).partition(".")[2]) < 2:
        # 1.30 unquoted is the number 1.3: say so rather than judge against a release from 2016
        shown = f"{version:.2f}"
        raise ConfigError(f"{where}: kubernetes-version is the number {version!r} (an unquoted {shown} is read "
                          f"as {version!r}); quote it: kubernetes-version: \"{shown}\"")


def _check_code_list(codes: Iterable[Any], where: str, at: str) -> None:
    """Codes and prefixes in `per-file-ignores` are checked as `ignore` is: a typo is an error."""
    cat = catalog()
    for code in codes:
        try:
            _match(str(code), cat, include_off=True)
        except ConfigError as e:
            raise ConfigError(f"{where}: {at}: {e}{_did_you_mean(str(code), cat)}") from None


def _did_you_mean(code: str, cat: dict[str, RuleMeta]) -> str:
    from dralint.suggest import closest

    hint = closest(code.upper(), list(cat)) or closest(code, [m.name for m in cat.values()])
    return f"; did you mean {hint!r}?" if hint else ""


def build_config(raw: dict[str, Any], path: Path | None, root: Path) -> Config:
    where = str(path) if path else "configuration"
    if "cache-dir" in raw:  # a checked-out tree must not choose where dralint writes (SECURITY.md)
        raise ConfigError(f"{where}: cache-dir cannot be set in a configuration file; "
                          "use --cache-dir or the DRALINT_CACHE_DIR environment variable instead")
    _validate(raw, where)
    cat = catalog()
    cfg = Config(path=path, root=root)
    if "select" in raw:
        cfg.select = list(raw["select"])
    cfg.extend_select = list(raw.get("extend-select", []))
    cfg.ignore = list(raw.get("ignore", []))
    cfg.per_file_ignores = {k: list(v) for k, v in raw.get("per-file-ignores", {}).items()}
    for pattern, codes in cfg.per_file_ignores.items():
        _check_code_list(codes, where, f"per-file-ignores.{pattern}")
    cfg.exclude = [*raw.get("exclude", []), *raw.get("extend-exclude", [])]
    cfg.respect_gitignore = bool(raw.get("respect-gitignore", True))
    for code, sev in raw.get("severity", {}).items():
        meta = _resolve_code(code, cat, where)
        cfg.severity[meta.code] = Severity.parse(sev)
    for code, opts in raw.get("rules", {}).items():
        meta = _resolve_code(code, cat, where)
        schema: dict[str, Any] = dict(meta.options) if meta.options else {"type": "object", "properties": {}}
        schema.setdefault("additionalProperties", False)
        import jsonschema

        try:
            jsonschema.validate(opts, schema)
        except jsonschema.ValidationError as e:
            raise ConfigError(f"{where}: invalid options for {meta.code}: {e.message}") from e
        cfg.rule_options[meta.code] = dict(opts)
    cfg.fail_on = raw.get("fail-on", "warning")
    cfg.max_file_size = raw.get("max-file-size", cfg.max_file_size)
    cfg.unsafe_fixes = bool(raw.get("unsafe-fixes", False))
    cfg.helm = dict(raw.get("helm", {}))
    cfg.set_jobs(raw.get("jobs"))
    _check_patterns(raw, where)
    inv = raw.get("inventory", [])
    try:
        cfg.profile = ClusterProfile(
            kubernetes_version=target_minor(str(raw["kubernetes-version"])) if "kubernetes-version" in raw else "",
            feature_gates=dict(raw.get("feature-gates", {})),
            runtime_config=dict(raw.get("runtime-config", {})),
            drivers=[
                DriverProfile(
                    d["name"], str(d["version"]) if "version" in d else None, dict(d.get("feature-gates", {})),
                    tuple(d.get("device-classes", [])),
                )
                for d in raw.get("drivers", [])
            ],
            inventory=[str(root / p) for p in ([inv] if isinstance(inv, str) else inv)],
            extended_resources=list(raw.get("extended-resources", [])),
            values_files={k: list(v) for k, v in raw.get("values-files", {}).items()},
            device_classes=list(raw.get("device-classes", [])),
        )
        validate_drivers(cfg.profile)
    except ProfileError as e:
        raise ConfigError(f"{where}: {e}") from e
    # validate selections early so that a typo is a usage error
    cfg.selected()
    return cfg


def _check_patterns(raw: dict[str, Any], where: str) -> None:
    """Compile every `extended-resources` pattern with RE2 now, so that a bad one is a configuration
    error (exit 2) naming the key, not an internal error in the first rule that matches a name."""
    for i, entry in enumerate(raw.get("extended-resources", [])):
        pattern = entry["pattern"]
        try:
            compile_pattern(pattern)
        except PatternError as e:
            shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
            raise ConfigError(f"{where}: invalid configuration at extended-resources.{i}.pattern: {shown!r} is "
                              f"not a valid RE2 regular expression ({e})") from None


def usable_cores() -> int:
    """CPUs this process may run on (its affinity mask, which containers and `taskset` narrow)."""
    if sys.version_info >= (3, 13):
        return os.process_cpu_count() or 1
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no affinity API (macOS, Windows)
        return os.cpu_count() or 1


def _resolve_code(code: str, cat: dict[str, RuleMeta], where: str) -> RuleMeta:
    c = code.upper()
    if c in cat:
        return cat[c]
    for m in cat.values():
        if m.name == code:
            return m
    raise ConfigError(f"{where}: unknown rule {code!r}{_did_you_mean(code, cat)}")


def load_config(explicit: Path | None = None, cwd: Path | None = None, follow_symlinks: bool = False,
                paths: Iterable[str] = ()) -> Config:
    """The configuration for a run over ``paths``: ``explicit`` if given, else the nearest file
    from the paths' deepest common directory upward (from ``cwd`` when no path exists: stdin)."""
    cwd = cwd or Path.cwd()
    start = discovery_start(paths, cwd)
    path = explicit if explicit is not None else find_config(start, follow_symlinks)
    if path is None:
        return build_config({}, None, project_root(start, cwd))
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    if explicit is not None:
        _refuse_link(path, Roots.of([cwd], follow_symlinks))
    return build_config(read_config_file(path), path, path.resolve().parent)


def discovery_start(paths: Iterable[str], cwd: Path) -> Path:
    """Where the search for a configuration starts: the deepest directory holding every existing
    linted path (a file counts as its directory), else ``cwd``."""
    dirs = []
    for p in paths:
        if p == "-" or not os.path.exists(p):
            continue
        a = Path(os.path.abspath(os.path.join(cwd, p)))
        dirs.append(a if a.is_dir() else a.parent)
    if not dirs:
        return cwd
    try:
        return Path(os.path.commonpath([str(d) for d in dirs]))
    except ValueError:  # different drives (Windows)
        return dirs[0]


def project_root(start: Path, cwd: Path) -> Path:
    """The root without a configuration file: the git work tree holding ``start``, else ``cwd`` when
    ``start`` is inside it, else ``start`` (a cache is never put in an unrelated working directory)."""
    for d in [start, *start.parents]:
        if (d / ".git").exists():
            return d
    cwd_abs = Path(os.path.abspath(cwd))
    return cwd_abs if start == cwd_abs or start.is_relative_to(cwd_abs) else start


def owns_default_cache(cfg: Config, cwd: Path) -> bool:
    """Whether the default cache may be written at the project root: the root is a configuration
    file's directory, a git work tree, or the working directory. A tree linted from outside (a
    vendored or read-only checkout, another team's files) gets its cache in the user cache
    directory instead, so that linting never adds files to it."""
    root = Path(os.path.abspath(cfg.root))
    return cfg.path is not None or (root / ".git").exists() or root == Path(os.path.abspath(cwd))


def check_input_links(cfg: Config, values_files: Iterable[str] = (), follow_symlinks: bool = False) -> None:
    """Refuse (exit 2) inventory and Helm values files that are symlinks out of the project, before
    anything reads them: they are not findings, and a parse error would quote their content."""
    roots = project_roots(cfg.root, follow_symlinks)
    for v in values_files:
        _refuse_link(Path(v), roots, "values file")
    if not cfg.profile.inventory:
        return
    from dralint.cel.inventory import inventory_files

    for p in cfg.profile.inventory:
        _refuse_link(Path(p), roots, "inventory file")
    for f in inventory_files(cfg.profile.inventory):
        _refuse_link(f, roots, "inventory file")
