"""Render Helm charts and kustomizations offline, grouped by the source file of each document.

Helm: ``check --helm-chart DIR [-f values.yaml] [--set k=v]`` renders with a real Helm engine — a
``helm`` binary on PATH (``helm template``), or the Helm Go SDK that the optional ``dralint[helm]``
extra installs (the ``helm-python-sdk`` wheel ships it as a shared library). With neither, the run
stops with exit 2 and says so: skipping the chart silently would report a clean run for manifests
nobody looked at. ``DRALINT_HELM`` picks the engine: a path to a helm binary, ``sdk``, or ``none``.

Kustomize: a directory given as a PATH that holds a ``kustomization.yaml`` is built with
``kustomize build`` or ``kubectl kustomize``. Every resource it names must exist locally: remote
bases (and names that do not exist, which kustomize would try to fetch) are refused before the
tool runs, and the tool runs with its proxies pointed at a closed local port as a second guard.

Findings land on the file a user edits: each rendered document is grouped by its origin (the
``# Source:`` template of Helm, the ``config.kubernetes.io/origin`` annotation that kustomize adds
when asked through ``buildMetadata``) and linted as that file; `dralint.engine.rendered` runs the
lint and moves each position to the line of the same key in the source file.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dralint.inputs.load import SourceFile, load_bytes
from dralint.model import ConfigError

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
RELEASE_NAME = "dralint"
TIMEOUT_SECONDS = 120

#: a closed port on the loopback interface: anything that tries the network fails at once
_NO_NETWORK = "http://127.0.0.1:9"


class RenderError(ConfigError):
    """A chart or kustomization could not be rendered (exit code 2)."""


@dataclass
class RenderedDoc:
    origin: str  # display path of the source file
    text: str
    source: str | None  # what the `# Source:` comment says (Helm only)


@dataclass
class Rendered:
    files: list[SourceFile] = field(default_factory=list)
    #: display path -> the source file on disk, for moving positions
    origins: dict[str, Path] = field(default_factory=dict)
    #: display paths whose source is a plain manifest (kustomize), not a template
    manifests: set[str] = field(default_factory=set)


# --------------------------------------------------------------------------------------------------
# shared plumbing


def _offline_env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update({
        "HTTP_PROXY": _NO_NETWORK, "HTTPS_PROXY": _NO_NETWORK, "ALL_PROXY": _NO_NETWORK,
        "http_proxy": _NO_NETWORK, "https_proxy": _NO_NETWORK, "all_proxy": _NO_NETWORK,
        "NO_PROXY": "", "no_proxy": "",
        "GIT_ALLOW_PROTOCOL": "file", "GIT_TERMINAL_PROMPT": "0",
        # no repositories, registries or plugins from the user's Helm setup
        "HELM_CACHE_HOME": os.path.join(home, "cache"), "HELM_CONFIG_HOME": os.path.join(home, "config"),
        "HELM_DATA_HOME": os.path.join(home, "data"), "HELM_PLUGINS": os.path.join(home, "plugins"),
        "KUBECONFIG": os.path.join(home, "kubeconfig"),
    })
    return env


def _run(cmd: list[str], what: str) -> str:
    with tempfile.TemporaryDirectory(prefix="dralint-render-") as home:
        try:
            p = subprocess.run(cmd, capture_output=True, env=_offline_env(home), timeout=TIMEOUT_SECONDS,
                               stdin=subprocess.DEVNULL, check=False)
        except FileNotFoundError as e:
            raise RenderError(f"{what}: cannot run {cmd[0]}: {e}") from e
        except subprocess.TimeoutExpired as e:
            raise RenderError(f"{what}: {cmd[0]} did not finish within {TIMEOUT_SECONDS}s") from e
    if p.returncode != 0:
        detail = p.stderr.decode("utf-8", "replace").strip() or f"exit code {p.returncode}"
        raise RenderError(f"{what}: `{' '.join(cmd)}` failed: {detail}")
    return p.stdout.decode("utf-8", "replace")


_DOC_SPLIT = re.compile(r"^---[ \t]*(?:#.*)?\r?$", re.MULTILINE)
_SOURCE = re.compile(r"^# Source: (\S.*?)\s*$", re.MULTILINE)


def split_documents(text: str) -> list[str]:
    """A YAML stream cut at column-0 ``---`` lines; blank chunks dropped (as Helm does)."""
    return [c.strip("\n") + "\n" for c in _DOC_SPLIT.split(text) if c.strip()]


def _display(p: Path) -> str:
    try:
        rel = p.resolve().relative_to(Path.cwd().resolve())
        return rel.as_posix()
    except ValueError:
        return p.as_posix()


def _group(docs: list[RenderedDoc], disk: dict[str, Path]) -> Rendered:
    by_origin: dict[str, list[RenderedDoc]] = {}
    for d in docs:
        by_origin.setdefault(d.origin, []).append(d)
    out = Rendered()
    for origin, group in by_origin.items():
        text = "".join(f"---\n# Source: {d.source}\n{d.text}" if d.source else f"---\n{d.text}" for d in group)
        out.files.append(load_bytes(origin, text.encode("utf-8")))
        if origin in disk:
            out.origins[origin] = disk[origin]
    return out


# --------------------------------------------------------------------------------------------------
# Helm


def parse_set(expr: str, values: dict[str, Any]) -> None:
    """Apply one ``--set`` argument the way Helm does (``a.b=1,list[0]=x,tags={a,b}``; ``\\`` escapes)."""
    for item in _split_unescaped(expr, ","):
        if not item:
            continue
        key, eq, raw = _partition_unescaped(item, "=")
        if not eq:
            raise RenderError(f"--set {expr!r}: `{item}` has no `=`")
        value: Any
        if raw.startswith("{") and raw.endswith("}"):
            value = [_typed(_unescape(v)) for v in _split_unescaped(raw[1:-1], ",") if v != ""]
        else:
            value = _typed(_unescape(raw))
        _assign(values, [_unescape(p) for p in _split_unescaped(key, ".")], value, expr)


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, cur, depth, i = [], "", 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            cur += text[i : i + 2]
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(depth - 1, 0)
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    parts.append(cur)
    return parts


def _partition_unescaped(text: str, sep: str) -> tuple[str, str, str]:
    parts = _split_unescaped(text, sep)
    if len(parts) == 1:
        return text, "", ""
    return parts[0], sep, sep.join(parts[1:])


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _typed(raw: str) -> Any:
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "null":
        return None
    if re.fullmatch(r"-?(0|[1-9][0-9]*)", raw):
        return int(raw)
    return raw


_INDEX = re.compile(r"^(.*?)\[(\d+)\]$")


def _assign(values: dict[str, Any], keys: list[str], value: Any, expr: str) -> None:
    node: Any = values
    for n, key in enumerate(keys):
        last = n == len(keys) - 1
        m = _INDEX.match(key)
        if m:
            name, idx = m.group(1), int(m.group(2))
            if idx > 10_000:
                raise RenderError(f"--set {expr!r}: list index {idx} is too large")
            lst = node.get(name)
            if not isinstance(lst, list):
                lst = node[name] = []
            while len(lst) <= idx:
                lst.append(None)
            if last:
                lst[idx] = value
            else:
                if not isinstance(lst[idx], dict):
                    lst[idx] = {}
                node = lst[idx]
        elif last:
            node[key] = value
        else:
            child = node.get(key)
            if not isinstance(child, dict):
                child = node[key] = {}
            node = child


def _deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def helm_engine() -> tuple[str, str] | None:
    """("binary", path) or ("sdk", module) for the Helm to use, or None."""
    choice = os.environ.get("DRALINT_HELM", "").strip()
    if choice == "none":
        return None
    if choice and choice != "sdk":
        return ("binary", choice)
    if choice != "sdk":
        found = shutil.which("helm")
        if found:
            return ("binary", found)
    if importlib.util.find_spec("helm_python") is not None:
        return ("sdk", "helm_python")
    return None


NO_HELM = (
    "no Helm available to render {chart}: install a `helm` binary on PATH, or the Helm engine that "
    "ships as a Python package: pip install 'dralint[helm]' (helm-python-sdk). dralint does not skip "
    "charts it cannot render"
)


def _chart_name(chart: Path) -> str:
    try:
        meta = yaml.safe_load((chart / "Chart.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise RenderError(f"{chart}: not a Helm chart (cannot read Chart.yaml: {e})") from e
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else chart.name


def _template_file(chart: Path, source: str) -> Path:
    """``gpu-app/templates/x.yaml`` (as Helm names it) -> ``<chart dir>/templates/x.yaml``."""
    rel = source.split("/", 1)[1] if "/" in source else source
    return chart / rel


def _helm_docs_binary(binary: str, chart: Path, values_files: Sequence[str], sets: Sequence[str],
                      namespace: str | None, kube_version: str | None) -> list[tuple[str, str]]:
    cmd = [binary, "template", RELEASE_NAME, str(chart)]
    for v in values_files:
        cmd += ["--values", str(v)]
    for s in sets:
        cmd += ["--set", s]
    if namespace:
        cmd += ["--namespace", namespace]
    if kube_version:
        cmd += ["--kube-version", f"{kube_version}.0"]
    out = _run(cmd, f"helm template {chart}")
    docs: list[tuple[str, str]] = []
    for chunk in split_documents(out):
        m = _SOURCE.search(chunk)
        source = m.group(1) if m else f"{chart.name}/(rendered)"
        body = _SOURCE.sub("", chunk, count=1).lstrip("\n") if m else chunk
        if body.strip():
            docs.append((source, body))
    return docs


def _helm_docs_sdk(chart: Path, values_files: Sequence[str], sets: Sequence[str],
                   namespace: str | None) -> list[tuple[str, str]]:
    try:
        import helm_python
    except Exception as e:  # the native library may not load on this platform
        raise RenderError(f"the Helm SDK (helm-python-sdk) is installed but cannot load: {e}") from e
    values: dict[str, Any] = {}
    for vf in values_files:
        try:
            data = yaml.safe_load(Path(vf).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as e:
            raise RenderError(f"values file {vf}: {e}") from e
        if data is None:
            continue
        if not isinstance(data, dict):
            raise RenderError(f"values file {vf}: must be a mapping")
        values = _deep_merge(values, data)
    for s in sets:
        parse_set(s, values)
    try:
        with helm_python.Chart.load(str(chart)) as c:
            rendered = c.render(values, name=RELEASE_NAME, namespace=namespace or "default", is_install=True)
    except helm_python.HelmError as e:
        raise RenderError(f"helm template {chart}: {e}") from e
    docs: list[tuple[str, str]] = []
    for name in sorted(rendered):
        base = name.rsplit("/", 1)[-1]
        # what `helm template` leaves out: NOTES.txt and partials (files starting with `_`)
        if base == "NOTES.txt" or base.startswith("_"):
            continue
        for chunk in split_documents(rendered[name]):
            docs.append((name, chunk))
    return docs


def render_helm(chart_dir: str, values_files: Sequence[str] = (), sets: Sequence[str] = (),
                namespace: str | None = None, kube_version: str | None = None) -> Rendered:
    chart = Path(chart_dir)
    if not (chart / "Chart.yaml").is_file():
        raise RenderError(f"{chart_dir}: not a Helm chart directory (no Chart.yaml)")
    _chart_name(chart)
    engine = helm_engine()
    if engine is None:
        raise RenderError(NO_HELM.format(chart=chart_dir))
    if engine[0] == "binary":
        docs = _helm_docs_binary(engine[1], chart, values_files, sets, namespace, kube_version)
    else:
        docs = _helm_docs_sdk(chart, values_files, sets, namespace)
    rendered_docs: list[RenderedDoc] = []
    disk: dict[str, Path] = {}
    for source, text in docs:
        f = _template_file(chart, source)
        origin = _display(f)
        if f.is_file():
            disk[origin] = f
        rendered_docs.append(RenderedDoc(origin, text, source))
    return _group(rendered_docs, disk)


# --------------------------------------------------------------------------------------------------
# kustomize


def kustomization_file(path: str | Path) -> Path | None:
    p = Path(path)
    if not p.is_dir():
        return None
    for n in KUSTOMIZATION_NAMES:
        if (p / n).is_file():
            return p / n
    return None


def check_offline(directory: Path, seen: set[Path] | None = None) -> None:
    """Refuse a kustomization that would reach the network (remote bases, Helm chart inflation)."""
    seen = seen if seen is not None else set()
    key = directory.resolve()
    if key in seen:
        return
    seen.add(key)
    kfile = kustomization_file(directory)
    if kfile is None:
        return
    try:
        data = yaml.safe_load(kfile.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise RenderError(f"{kfile}: cannot read: {e}") from e
    if not isinstance(data, dict):
        return
    if data.get("helmCharts") or data.get("helmGlobals"):
        raise RenderError(f"{kfile}: `helmCharts` needs Helm chart inflation, which can download charts; "
                          "render the chart with --helm-chart instead")
    for fld in ("resources", "bases", "components"):
        entries = data.get(fld) or []
        if not isinstance(entries, list):
            continue
        for entry in entries:
            if not isinstance(entry, str):
                continue
            if "://" in entry or entry.startswith(("git@", "git::", "github.com/", "gitlab.com/")) or "?ref=" in entry:
                raise RenderError(f"{kfile}: `{fld}` entry `{entry}` is a remote base; dralint renders offline "
                                  "only (vendor it, or lint the output of `kustomize build`)")
            target = directory / entry
            if not target.exists():
                raise RenderError(f"{kfile}: `{fld}` entry `{entry}` does not exist locally (kustomize would try "
                                  "to fetch it from the network; dralint renders offline only)")
            if target.is_dir():
                check_offline(target, seen)


def kustomize_command(directory: str) -> list[str]:
    kz = shutil.which("kustomize")
    if kz:
        return [kz, "build", directory]
    kubectl = shutil.which("kubectl")
    if kubectl:
        return [kubectl, "kustomize", directory]
    raise RenderError(f"{directory} holds a kustomization, but neither `kustomize` nor `kubectl` is on PATH "
                      "to build it")


def render_kustomize(directory: str) -> Rendered:
    d = Path(directory)
    check_offline(d)
    kfile = kustomization_file(d)
    assert kfile is not None
    with tempfile.TemporaryDirectory(prefix="dralint-kustomize-") as wrapper:
        # a wrapper kustomization asks for origin annotations without touching the user's files
        rel = os.path.relpath(d.resolve(), Path(wrapper).resolve())
        Path(wrapper, "kustomization.yaml").write_text(
            yaml.safe_dump({"resources": [rel], "buildMetadata": ["originAnnotations"]}), encoding="utf-8")
        out = _run(kustomize_command(wrapper), f"kustomize build {directory}")
        docs: list[RenderedDoc] = []
        disk: dict[str, Path] = {}
        for chunk in split_documents(out):
            origin_path = _origin(chunk, Path(wrapper))
            if origin_path is not None:
                origin = _display(origin_path)
                disk[origin] = origin_path
            else:  # generated objects (configMapGenerator, …) have no source file: blame the kustomization
                origin = _display(kfile)
            docs.append(RenderedDoc(origin, chunk, None))
    result = _group(docs, disk)
    result.manifests = set(disk)
    return result


def _origin(chunk: str, wrapper: Path) -> Path | None:
    try:
        data = yaml.safe_load(chunk)
    except yaml.YAMLError:
        return None
    try:
        raw = data["metadata"]["annotations"][ORIGIN_ANNOTATION]
        origin = yaml.safe_load(raw)
        path = origin["path"]
    except (KeyError, TypeError, yaml.YAMLError):
        return None
    if not isinstance(path, str) or (isinstance(origin, dict) and origin.get("repo")):
        return None
    p = (wrapper / path).resolve()
    return p if p.is_file() else None
