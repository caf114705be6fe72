"""Render Helm charts and kustomizations offline, grouped by the source file of each document.

Helm: ``check --helm-chart DIR [-f values.yaml] [--set k=v]`` renders with a real Helm engine — a
``helm`` binary on PATH (``helm template``), or the Helm Go SDK that the optional ``dralint[helm]``
extra installs (the ``helm-python-sdk`` wheel ships it as a shared library). With neither, the run
stops with exit 2 and says so: skipping the chart silently would report a clean run for manifests
nobody looked at. ``DRALINT_HELM`` picks the engine: a path to a helm binary, ``sdk``, or ``none``.

Kustomize: a directory given as a PATH that holds a ``kustomization.yaml`` is built with
``kustomize build`` or ``kubectl kustomize`` (plugins and Helm inflation off). Every resource it
names must exist locally: remote bases (and names that do not exist, which kustomize would try to
fetch) are refused before the tool runs.

Charts and kustomizations are untrusted input that the renderers execute, so both are contained:
- the renderer reads a COPY of the chart or kustomize tree made without following symlinks: a link
  is copied as its target's content only when that is a regular file inside the tree; any other
  link (out of the tree, to a directory, a loop) is left out and reported as one DRA007 finding, so
  ``.Files.Get``/``.Files.Glob`` see nothing outside the chart;
- every renderer — helm, kustomize/kubectl, and the Helm SDK, which runs in a child process of its
  own (`dralint.inputs._render_child`) — starts through `dralint.inputs.sandbox.run_sandboxed`: a timeout
  (``DRALINT_RENDER_TIMEOUT`` seconds, default 120), memory/CPU/process limits, an empty
  environment, and no network where the OS allows an empty network namespace;
- what a renderer says when it fails (Helm ``fail``/``required``, kustomize errors) becomes the
  error text, cut to `MESSAGE_CHARS`.

Findings land on the file a user edits: each rendered document is grouped by its origin (the
``# Source:`` template of Helm, the ``config.kubernetes.io/origin`` annotation that kustomize adds
when asked through ``buildMetadata``) and linted as that file; `dralint.engine.rendered` runs the
lint and moves each position to the line of the same key in the source file.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dralint.inputs import sandbox
from dralint.inputs.files import SKIPPED_LINK, input_roots
from dralint.inputs.helm_positions import Instrumented, Origin, instrument, pin_capabilities, strip
from dralint.inputs.kustomize_patches import KustomizeObject, applied_from_annotation, read_kustomization
from dralint.inputs.load import LoadProblem, SourceFile, load_bytes, read_side_file, side_yaml, yaml_error_text
from dralint.inputs.render_spec import (
    KUSTOMIZATION_NAMES,
    RELEASE_NAME,
    HelmOptions,
    RenderError,
    RenderFailed,
    kustomization_file,
)
from dralint.inputs.roots import printable
from dralint.model import Span

__all__ = ["KUSTOMIZATION_NAMES", "RELEASE_NAME", "HelmOptions", "RenderError", "RenderFailed", "Rendered",
           "kustomization_file", "render_helm", "render_kustomize"]

ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
#: what is kept of a renderer's message: enough for any `fail` text, not a whole file or crash dump
MESSAGE_CHARS = 2048
#: a copied chart or kustomize tree: far above any real one, low enough to copy in a moment
COPY_MAX_ENTRIES = 20_000
COPY_MAX_BYTES = 256 << 20
#: kustomization fields whose entries can be directories holding further kustomizations
_KUSTOMIZE_DIR_FIELDS = ("resources", "bases", "components", "generators", "transformers", "validators")
_CHILD = Path(__file__).with_name("_render_child.py")
_VCS_DIRS = frozenset({".git", ".hg", ".svn"})


@dataclass
class RenderedDoc:
    origin: str  # display path of the source file
    text: str
    source: str | None  # what the `# Source:` comment says (Helm only)
    #: per line of ``text``: the template line it came from and whether exactly (instrumented Helm)
    lines: list[tuple[Origin, bool] | None] | None = None


@dataclass
class Rendered:
    files: list[SourceFile] = field(default_factory=list)
    #: display path -> the source file on disk, for moving positions
    origins: dict[str, Path] = field(default_factory=dict)
    #: display paths whose source is a plain manifest (kustomize), not a template
    manifests: set[str] = field(default_factory=set)
    #: files that only carry a finding about the render (links left out of the copy)
    notes: list[SourceFile] = field(default_factory=list)
    #: display path -> per line of the rendered file: (chart dir, template origin, exact) or None
    line_origins: dict[str, list[tuple[Path, Origin, bool] | None]] = field(default_factory=dict)
    #: display path -> the chart directory it was rendered from (Helm only)
    charts: dict[str, Path] = field(default_factory=dict)
    #: (display path, kind, namespace, name) of a built object -> its kustomization and the patch
    #: transformers that changed it (kustomize only; `dralint.inputs.kustomize_patches`)
    kustomize: dict[tuple[str, str, str, str], KustomizeObject] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------------
# shared plumbing


def _capped(text: str) -> str:
    text = text.strip()
    if len(text) <= MESSAGE_CHARS:
        return text
    return f"{text[:MESSAGE_CHARS]}… ({len(text) - MESSAGE_CHARS:,} more characters not shown)"


def _run(argv: list[str], what: str, cwd: Path, stdin: bytes | None = None) -> str:
    """Run a renderer contained (`dralint.inputs.sandbox`) and return its output; any failure is a RenderError."""
    try:
        timeout = sandbox.timeout_seconds()
    except sandbox.SandboxError as e:  # a bad setting, not the input's fault
        raise RenderError(str(e)) from e
    try:
        outcome = sandbox.run_sandboxed(argv, cwd=cwd, timeout=timeout, stdin=stdin)
    except sandbox.SandboxError as e:
        raise RenderFailed(f"{what}: {e}") from e
    problem = outcome.failure()
    if problem is not None:
        raise RenderFailed(f"{what} failed: {_capped(problem)}")
    return outcome.stdout.decode("utf-8", "replace")


def _inside(real: str, roots: Sequence[str]) -> bool:
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots)


def copy_tree(roots: Sequence[Path], top: Path, dest: Path) -> list[str]:
    """Copy each directory of ``roots`` (real paths under ``top``) to the same place under ``dest``.

    No symlink is followed: a link is copied as its target's content when that is a regular file
    inside ``roots``; any other link (out of them, to a directory, dangling, a loop) and any special
    file is left out, and its path is returned. The renderer reads the copy, so it can neither read
    a file through a link nor walk a link loop. A tree too large to copy is a RenderError.
    """
    real_roots = [os.path.realpath(r) for r in roots]
    dropped: list[str] = []
    budget = {"entries": COPY_MAX_ENTRIES, "bytes": COPY_MAX_BYTES}
    # a root inside another one is copied with it
    tops = sorted({r for r in real_roots if not any(r != o and _inside(r, [o]) for o in real_roots)})
    todo = [(Path(r), dest / os.path.relpath(r, top)) for r in tops]
    while todo:
        src, dst = todo.pop()
        try:
            dst.mkdir(parents=True, exist_ok=True)
            with os.scandir(src) as it:
                entries = sorted(it, key=lambda e: e.name)
            for e in entries:
                budget["entries"] -= 1
                if budget["entries"] < 0:
                    raise RenderError(f"{top}: more than {COPY_MAX_ENTRIES:,} files and directories to render")
                if e.is_dir(follow_symlinks=False):
                    if e.name not in _VCS_DIRS:  # history, not content: a chart or overlay never reads it
                        todo.append((Path(e.path), dst / e.name))
                    continue
                source = e.path
                if e.is_symlink():
                    source = os.path.realpath(e.path)
                    if not (_inside(source, real_roots) and os.path.isfile(source)):
                        dropped.append(e.path)
                        continue
                elif not e.is_file(follow_symlinks=False):
                    dropped.append(e.path)  # a FIFO, socket or device
                    continue
                if not _copy_file(source, dst / e.name, budget):
                    dropped.append(e.path)
        except OSError as err:
            raise RenderError(f"{printable(str(src))}: cannot copy it to render: {err.strerror or err}") from err
    return dropped


def _copy_file(source: str, target: Path, budget: dict[str, int]) -> bool:
    """Copy one regular file; False when it turns out not to be one (it changed since it was listed)."""
    # O_NOFOLLOW: a file swapped for a link meanwhile is not followed; O_NONBLOCK: nor is a FIFO waited on
    fd = os.open(source, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with open(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return False
        data = fh.read(budget["bytes"] + 1)
    budget["bytes"] -= len(data)
    if budget["bytes"] < 0:
        raise RenderError(f"{printable(source)}: the files to render are over {COPY_MAX_BYTES:,} bytes")
    target.write_bytes(data)
    return True


def _dropped_links(links: Sequence[str], what: str) -> SourceFile:
    """One DRA007 finding for the links left out of a copied tree, on the first of them."""
    shown = ", ".join(printable(_display_link(p)) for p in links[:5])
    more = f" and {len(links) - 5} more" if len(links) > 5 else ""
    noun = "symbolic link" if len(links) == 1 else f"{len(links)} symbolic links"
    message = (f"{noun} left out when rendering {what}: {shown}{more} (only a link to a regular file "
               "inside it is rendered)")
    sf = SourceFile(path=printable(_display_link(links[0])), raw=b"")
    sf.problems.append(LoadProblem(SKIPPED_LINK, message, Span(1, 1, 1, 1)))
    return sf


def _display_link(path: str) -> str:
    """A path relative to the working directory without resolving it (it may be a link)."""
    try:
        return Path(path).relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path


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


def _group(docs: list[RenderedDoc], disk: dict[str, Path], chart: Path | None = None) -> Rendered:
    by_origin: dict[str, list[RenderedDoc]] = {}
    for d in docs:
        by_origin.setdefault(d.origin, []).append(d)
    out = Rendered()
    for origin, group in by_origin.items():
        text = "".join(f"---\n# Source: {d.source}\n{d.text}" if d.source else f"---\n{d.text}" for d in group)
        out.files.append(load_bytes(origin, text.encode("utf-8")))
        if origin in disk:
            out.origins[origin] = disk[origin]
        if chart is not None and any(d.lines for d in group):
            # the same layout as `text`: one line for `---`, one for `# Source:`, then the document
            per_line: list[tuple[Path, Origin, bool] | None] = []
            for d in group:
                per_line += [None, None] if d.source else [None]
                body = d.lines or []
                count = d.text.count("\n")
                per_line += [(chart, o[0], o[1]) if o else None for o in body[:count]]
                per_line += [None] * (count - min(count, len(body)))
            out.line_origins[origin] = per_line
        if chart is not None:
            out.charts[origin] = chart
    return out


# --------------------------------------------------------------------------------------------------
# Helm


def parse_set(expr: str, values: dict[str, Any], typed: bool = True) -> None:
    """Apply one ``--set`` argument the way Helm does (``a.b=1,list[0]=x,tags={a,b}``; ``\\`` escapes);
    ``typed=False`` is ``--set-string``: every value stays a string."""
    conv = _typed if typed else str
    for item in _split_unescaped(expr, ","):
        if not item:
            continue
        key, eq, raw = _partition_unescaped(item, "=")
        if not eq:
            raise RenderError(f"--set {expr!r}: `{item}` has no `=`")
        value: Any
        if raw.startswith("{") and raw.endswith("}"):
            value = [conv(_unescape(v)) for v in _split_unescaped(raw[1:-1], ",") if v != ""]
        else:
            value = conv(_unescape(raw))
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


def _refuse_link_out(path: Path, directory: Path, what: str) -> None:
    """A chart's or kustomization's own file that is a symlink out of its directory and the working
    directory is an error, raised before it is read (a parse error would quote its first line)."""
    why = input_roots([str(directory)]).refusal(path, what, hint=False)
    if why:
        raise RenderError(why)


def _why(e: OSError | yaml.YAMLError) -> str:
    """The reason of a failed read or parse, without the excerpt of the file PyYAML appends."""
    return yaml_error_text(e) if isinstance(e, yaml.YAMLError) else str(e.strerror or e)


def _chart_name(chart: Path) -> str:
    _refuse_link_out(chart / "Chart.yaml", chart, "Chart.yaml")
    try:
        meta = side_yaml(read_side_file(chart / "Chart.yaml"))
    except (OSError, yaml.YAMLError) as e:
        raise RenderError(f"{chart}: not a Helm chart (cannot read Chart.yaml: {_why(e)})") from e
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else chart.name


def _template_file(chart: Path, source: str) -> Path:
    """``gpu-app/templates/x.yaml`` (as Helm names it) -> ``<chart dir>/templates/x.yaml``."""
    rel = source.split("/", 1)[1] if "/" in source else source
    return chart / rel


def _own_file(top: Path, f: Path) -> bool:
    """Whether ``f`` is a regular file under ``top`` (a chart, or the directories of a build).

    A ``# Source:`` line is text a template can print, and an origin annotation text a manifest can
    carry, so the file either names is read (to move positions) only when neither ``..`` nor a link
    takes it out of ``top``."""
    real, within = os.path.realpath(f), os.path.realpath(top)
    return real.startswith(within.rstrip("/") + "/") and os.path.isfile(real)


def _helm_docs_binary(binary: str, chart: Path, opts: HelmOptions, what: str) -> list[tuple[str, str]]:
    # run from the copy's directory; `./name` keeps helm from taking the name for a repository chart
    cmd = [binary, "template", opts.release_name, f"./{chart.name}"]
    for v in opts.values_files:
        cmd += ["--values", os.path.abspath(v)]
    for s in opts.sets:
        cmd += ["--set", s]
    for s in opts.set_strings:
        cmd += ["--set-string", s]
    if opts.namespace:
        cmd += ["--namespace", opts.namespace]
    if opts.kube_version:
        cmd += ["--kube-version", f"v{opts.kube_version}.0"]
    for a in opts.api_versions:
        cmd += ["--api-versions", a]
    out = _run(cmd, what, cwd=chart.parent)
    docs: list[tuple[str, str]] = []
    for chunk in split_documents(out):
        m = _SOURCE.search(chunk)
        source = m.group(1) if m else f"{chart.name}/(rendered)"
        body = _SOURCE.sub("", chunk, count=1).lstrip("\n") if m else chunk
        if body.strip():
            docs.append((source, body))
    return docs


def _sdk_values(opts: HelmOptions) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for vf in opts.values_files:
        try:
            data = side_yaml(read_side_file(vf))
        except (OSError, yaml.YAMLError) as e:
            raise RenderError(f"values file {vf}: {_why(e)}") from e
        if data is None:
            continue
        if not isinstance(data, dict):
            raise RenderError(f"values file {vf}: must be a mapping")
        values = _deep_merge(values, data)
    for s in opts.sets:
        parse_set(s, values)
    for s in opts.set_strings:
        parse_set(s, values, typed=False)
    return values


def _helm_docs_sdk(chart: Path, opts: HelmOptions, what: str) -> list[tuple[str, str]]:
    spec = importlib.util.find_spec("helm_python")
    if spec is None or not spec.submodule_search_locations or not sys.executable:
        raise RenderError("the Helm SDK (helm-python-sdk) is installed but cannot be started")
    request = {"path": str(Path(next(iter(spec.submodule_search_locations))).parent), "chart": chart.name,
               "values": _sdk_values(opts), "name": opts.release_name, "namespace": opts.namespace or "default",
               "kube_version": f"v{opts.kube_version}.0" if opts.kube_version else None,
               "api_versions": list(opts.api_versions)}
    # -I: neither the environment nor the current directory decides what the child imports
    out = _run([sys.executable, "-I", "-B", str(_CHILD)], what, cwd=chart.parent,
               stdin=json.dumps(request, default=str).encode("utf-8"))  # str: YAML dates, as Helm reads them
    try:
        reply = json.loads(out)
        rendered = reply.get("manifests")
        error = reply.get("error")
    except (ValueError, AttributeError) as e:
        raise RenderError(f"{what}: the Helm SDK child answered something that is not its reply") from e
    if error is not None or not isinstance(rendered, dict):
        if reply.get("stage") == "load":
            raise RenderError(f"the Helm SDK (helm-python-sdk) is installed but cannot load: {_capped(str(error))}")
        raise RenderFailed(f"{what}: {_capped(str(error))}")
    docs: list[tuple[str, str]] = []
    for name in sorted(rendered):
        base = name.rsplit("/", 1)[-1]
        # what `helm template` leaves out: NOTES.txt and partials (files starting with `_`)
        if base == "NOTES.txt" or base.startswith("_") or not isinstance(rendered[name], str):
            continue
        for chunk in split_documents(rendered[name]):
            docs.append((name, chunk))
    return docs


def _render_copy(engine: tuple[str, str], copy: Path, opts: HelmOptions, what: str) -> list[tuple[str, str]]:
    if engine[0] == "binary":
        return _helm_docs_binary(engine[1], copy, opts, what)
    return _helm_docs_sdk(copy, opts, what)


def _marked_lines(docs: list[tuple[str, str]], marked_docs: list[tuple[str, str]] | None,
                  inst: Instrumented | None) -> dict[int, list[tuple[Origin, bool] | None]]:
    """Per plain document (by index), the origins of its lines, where the marked render agrees.

    A document whose marked render, markers stripped, differs from the plain one (a marker that
    changed what a template computed) gets none: its positions fall back to matching keys."""
    out: dict[int, list[tuple[Origin, bool] | None]] = {}
    if inst is None or marked_docs is None:
        return out
    cleaned: list[tuple[str, str, list[tuple[Origin, bool] | None]]] = []
    for source, text in marked_docs:
        clean, lines = strip(text, inst)
        lead = len(clean) - len(clean.lstrip("\n"))
        clean, lines = clean.strip("\n") + "\n", lines[lead:]
        if clean.strip():
            cleaned.append((source, clean, lines))
    if len(cleaned) != len(docs):
        return out

    def norm(t: str) -> list[str]:
        return [ln.rstrip() for ln in t.strip("\n").split("\n")]

    for n, ((source, text), (msource, mtext, lines)) in enumerate(zip(docs, cleaned, strict=True)):
        if source == msource and norm(text) == norm(mtext):
            out[n] = lines
    return out


def render_helm(chart_dir: str, values_files: Sequence[str] = (), sets: Sequence[str] = (),
                namespace: str | None = None, kube_version: str | None = None,
                options: HelmOptions | None = None, positions: bool = True) -> Rendered:
    """Render a chart (``options`` wins over the separate arguments, kept for callers of old).

    With ``positions``, the chart is rendered instrumented (`dralint.inputs.helm_positions`) and
    each rendered line knows its template line; a chart that renders only plainly loses that."""
    opts = options or HelmOptions(values_files=values_files, sets=sets, namespace=namespace,
                                  kube_version=kube_version)
    chart = Path(chart_dir)
    if not (chart / "Chart.yaml").is_file():
        raise RenderError(f"{chart_dir}: not a Helm chart directory (no Chart.yaml)")
    check_offline(chart, chart=True)
    _chart_name(chart)
    engine = helm_engine()
    if engine is None:
        raise RenderError(NO_HELM.format(chart=chart_dir))
    what = f"helm template {chart_dir}"
    real = Path(os.path.realpath(chart))
    inst: Instrumented | None = None
    with tempfile.TemporaryDirectory(prefix="dralint-chart-") as tmp:
        dropped = copy_tree([real], real.parent, Path(tmp))
        copy = Path(tmp) / real.name
        if opts.resource_versions is not None:
            pin_capabilities(copy, set(opts.resource_versions))
        # the plain render is what is linted; the marked one only says where each line came from
        docs = _render_copy(engine, copy, opts, what)
        marked_docs: list[tuple[str, str]] | None = None
        if positions:
            with tempfile.TemporaryDirectory(prefix="dralint-chart-marked-") as marked_tmp:
                marked = Path(marked_tmp) / real.name
                shutil.copytree(copy, marked, symlinks=True)
                inst = instrument(marked)
                try:
                    marked_docs = _render_copy(engine, marked, opts, what)
                except RenderError:
                    inst = None  # a chart the markers break: its positions fall back to matching keys
    positions_of = _marked_lines(docs, marked_docs, inst)
    rendered_docs: list[RenderedDoc] = []
    disk: dict[str, Path] = {}
    for n, (source, text) in enumerate(docs):
        f = _template_file(chart, source)
        origin = _display(f)
        if _own_file(chart, f):
            disk[origin] = f
        rendered_docs.append(RenderedDoc(origin, text, source, positions_of.get(n)))
    result = _group(rendered_docs, disk, chart)
    if dropped:
        result.notes.append(_dropped_links(dropped, f"the chart `{chart_dir}`"))
    return result


# --------------------------------------------------------------------------------------------------
# kustomize


def check_offline(path: Path, *, chart: bool = False) -> None:
    """Refuse a kustomization (or, ``chart``, a Helm chart) that names anything remote or out of the
    project, before any renderer runs: `dralint.inputs.offline` holds the rules."""
    from dralint.inputs import offline

    if chart:
        offline.check_chart(path)
    else:
        offline.check_kustomization(path)


def kustomize_command(directory: str) -> list[str]:
    """The command that builds a kustomization (its directory to be appended); ``directory`` is for the error."""
    # the defaults, said out loud: no plugins (they run programs), no Helm inflation (it downloads),
    # no file read from outside a kustomization's own directory
    flags = ["--enable-alpha-plugins=false", "--enable-helm=false", "--load-restrictor=LoadRestrictionsRootOnly"]
    kz = shutil.which("kustomize")
    if kz:
        return [kz, "build", *flags]
    kubectl = shutil.which("kubectl")
    if kubectl:
        return [kubectl, "kustomize", *flags]
    raise RenderError(f"{directory} holds a kustomization, but neither `kustomize` nor `kubectl` is on PATH "
                      "to build it")


def kustomization_dirs(directory: Path) -> list[Path]:
    """The real directories a build of ``directory`` reads: it, and each local kustomization it includes.

    Only entries reached without a symlink are followed (a linked base is not part of the copy, so
    kustomize reports it missing); kustomize itself reads files only inside these directories.
    """
    found: list[Path] = []
    todo = [Path(os.path.realpath(directory))]
    while todo:
        current = todo.pop()
        if current in found:
            continue
        found.append(current)
        read = read_kustomization(current)
        data = read[1] if read is not None else {}
        for fld in _KUSTOMIZE_DIR_FIELDS:
            entries = data.get(fld)
            for entry in entries if isinstance(entries, list) else ():
                if not isinstance(entry, str) or "://" in entry:
                    continue
                target = os.path.normpath(current / entry)
                if os.path.isdir(target) and os.path.realpath(target) == target:
                    todo.append(Path(target))
    return found


#: what the build annotates: each object's file and the transformers that changed it
BUILD_METADATA = ["originAnnotations", "transformerAnnotations"]


def render_kustomize(directory: str) -> Rendered:
    d = Path(directory)
    check_offline(d)
    kfile = kustomization_file(d)
    assert kfile is not None
    command = kustomize_command(directory)
    dirs = kustomization_dirs(d)
    top = Path(os.path.commonpath([str(p) for p in dirs]))
    with tempfile.TemporaryDirectory(prefix="dralint-kustomize-") as tmp:
        tree, wrapper = Path(tmp).resolve() / "tree", Path(tmp).resolve() / "build"
        dropped = copy_tree(dirs, top, tree)
        wrapper.mkdir()
        # a wrapper kustomization asks for the annotations without touching the user's files
        rel = os.path.relpath(tree / dirs[0].relative_to(top), wrapper)
        out = _build_wrapped(command, directory, wrapper, rel, Path(tmp), tree, top)
        docs: list[RenderedDoc] = []
        disk: dict[str, Path] = {}
        built: dict[tuple[str, str, str, str], KustomizeObject] = {}

        def to_user(path: str) -> Path | None:
            try:
                return top / Path(os.path.normpath(wrapper / path)).relative_to(tree)
            except ValueError:  # not a file of the copy
                return None

        for chunk in split_documents(out):
            origin_path = _origin(chunk, wrapper, tree, top)
            if origin_path is not None:
                origin = _display(origin_path)
                disk[origin] = origin_path
            else:  # generated objects (configMapGenerator, …) have no source file: blame the kustomization
                origin = _display(kfile)
            docs.append(RenderedDoc(origin, chunk, None))
            key = _object_key(origin, chunk)
            if key is not None:
                built[key] = KustomizeObject(d, dirs, applied_from_annotation(_safe_load(chunk), to_user))
    result = _group(docs, disk)
    result.manifests = set(disk)
    result.kustomize = built
    if dropped:
        result.notes.append(_dropped_links(dropped, f"the kustomization `{directory}`"))
    return result


def _build_wrapped(command: list[str], directory: str, wrapper: Path, rel: str, cwd: Path, tree: Path,
                   top: Path) -> str:
    """Build through the wrapper; a kustomize that does not know transformer annotations builds
    with origins only. A failure's message names the user's folders, not the copy."""
    what = f"kustomize build {directory}"
    for metadata in (BUILD_METADATA, BUILD_METADATA[:1]):
        (wrapper / "kustomization.yaml").write_text(
            yaml.safe_dump({"resources": [rel], "buildMetadata": metadata}), encoding="utf-8")
        try:
            return _run([*command, "build"], what, cwd=cwd)
        except RenderError as e:
            message = _user_paths(str(e), cwd, wrapper, tree, top, directory)
            if metadata is BUILD_METADATA and "transformerAnnotations" in message:
                continue
            raise RenderError(message) from None
    raise RenderError(f"{what} failed")  # pragma: no cover - the loop returns or raises


def _user_paths(message: str, tmp: Path, wrapper: Path, tree: Path, top: Path, directory: str) -> str:
    """A renderer's message with every path of the temporary copy replaced by the user's path."""
    shown_top = _display(top)
    for copy, user in ((str(tree), shown_top), (str(wrapper), directory),
                       (os.path.relpath(tree, wrapper), shown_top), (str(tmp), directory)):
        message = message.replace(copy, user)
    return message


def _safe_load(chunk: str) -> Any:
    try:
        return side_yaml(chunk)
    except yaml.YAMLError:
        return None


def _object_key(origin: str, chunk: str) -> tuple[str, str, str, str] | None:
    data = _safe_load(chunk)
    if not isinstance(data, dict) or not isinstance(data.get("metadata"), dict):
        return None
    meta = data["metadata"]
    return (origin, str(data.get("kind") or ""), str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def _origin(chunk: str, wrapper: Path, tree: Path, top: Path) -> Path | None:
    """The user's file an object came from: its origin annotation names the copy under ``tree``."""
    try:
        data = side_yaml(chunk)
    except yaml.YAMLError:
        return None
    try:
        raw = data["metadata"]["annotations"][ORIGIN_ANNOTATION]
        origin = side_yaml(raw)
        path = origin["path"]
    except (KeyError, TypeError, yaml.YAMLError):
        return None
    if not isinstance(path, str) or (isinstance(origin, dict) and origin.get("repo")):
        return None
    try:
        p = top / Path(os.path.normpath(wrapper / path)).relative_to(tree)
    except ValueError:  # not a file of the copy
        return None
    return p if _own_file(top, p) else None
