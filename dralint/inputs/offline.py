"""Refuse, before any renderer starts, a chart or kustomization that would make it reach the network.

Renderers fetch what their inputs name: kustomize downloads an ``http(s)://`` patch, generator file,
CRD or resource and runs ``git`` for a repository address (``github.com/org/repo``, ``git@host:x``,
``?ref=v1``); the Helm SDK loads a ``$ref`` of ``values.schema.json`` over HTTP from inside the
process that asked for it. The sandbox that renderers run in blocks the network only where the OS
allows it, so this static check is the guarantee: every field that takes a URL or a path is read
here first, and a remote form, or a path that leads out of the roots (through ``..`` or a symlink),
stops the run with an `OfflineRefusal` that names the file, line and field. Nothing here fetches,
runs, or reads a file through a link out of the roots.

Kustomize decodes its files through Go's encoding/json, which matches field names regardless of
case, so field names are compared case-folded here: ``Patches:`` is read as kustomize reads it.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NoReturn

import yaml

from dralint.inputs.files import input_roots
from dralint.inputs.load import COMPOSE_LOADER, Document, Limits, LMap, LSeq, SourceFile, load_bytes
from dralint.inputs.locate import locate
from dralint.inputs.render import KUSTOMIZATION_NAMES, RenderError
from dralint.inputs.roots import Roots, printable
from dralint.model import JsonPath, Span

#: kustomizations included from one another, and charts archived inside charts: far beyond real ones
MAX_DEPTH = 32
#: Helm's own limits for one file of a chart archive and for a whole decompressed chart
MAX_FILE_BYTES = 5 << 20
MAX_ARCHIVE_BYTES = 100 << 20
MAX_ARCHIVE_MEMBERS = 10_000

_OFFLINE = "dralint renders offline only"
_NO_HELM = "needs Helm chart inflation, which can download charts; render the chart with --helm-chart instead"

# kustomization fields (case-folded), by what their values are
_HELM_FIELDS = ("helmcharts", "helmglobals", "helmchartinflationgenerator")
_BASE_FIELDS = ("resources", "bases", "components")  # files, or directories holding kustomizations
_PLUGIN_FIELDS = ("generators", "transformers", "validators")  # plugin configs: files, directories, inline
_FILE_FIELDS = ("crds", "configurations", "patchesstrategicmerge")  # lists of files
_PATH_ITEM_FIELDS = ("patches", "patchesjson6902", "replacements")  # lists of mappings with a `path`
_GENERATOR_FIELDS = ("configmapgenerator", "secretgenerator")  # `files` (key=path), `envs`, `env`
#: the keys of a builtin plugin config that name files (`path` is also a field path in `fieldSpecs`:
#: that is checked the same way and always passes, being a relative path inside the tree)
_CONFIG_PATH_KEYS = ("path", "paths", "files", "envs", "env")
_GENERATOR_KEYS = ("files", "envs", "env")
_FUNCTION_ANNOTATIONS = ("config.kubernetes.io/function", "config.k8s.io/function")

_BINARY_TAG = "tag:yaml.org,2002:binary"
#: a colon before the first slash: a scheme (`https:`, `git::`, `ssh:`) or scp-like `[user@]host:path`
_SCHEME_OR_SCP = re.compile(r"^[^/]*:")
#: what kustomize takes for a git repository even when a local directory has the name
_REPO_FORM = re.compile(r"^(?:github\.com|gitlab\.com|bitbucket\.org)/|(?:^|/)(?:[^/]*\.git|_git)(?:/|$)", re.I)
#: the JSON Schema meta-schemas Helm's validator has built in (any other `$schema` is downloaded)
_BUILTIN_META = re.compile(r"https?://json-schema\.org/(?:draft-0[467]/schema|draft/20(?:19-09|20-12)/schema|schema)#?")
_SCHEMA_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef", "$id", "$schema")


class OfflineRefusal(RenderError):
    """A field names something remote (or out of the roots): nothing was rendered or fetched."""

    def __init__(self, path: str, span: Span, field: str, reason: str) -> None:
        super().__init__(f"{path}:{span.line}:{span.column}: `{field}` {reason}")
        self.path = path
        self.span = span
        self.field = field


def _show(value: str) -> str:
    """A value from the user's file, short and on one line, for a message."""
    text = printable(value).encode("unicode_escape").decode("ascii")
    return text if len(text) <= 120 else text[:120] + "…"


def _field_name(path: JsonPath) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


@dataclass(frozen=True)
class _At:
    """Where a value sits, for a refusal to point at: a file, its document and the path in it."""

    sf: SourceFile
    doc: Document | None
    path: JsonPath = ()
    #: inline text parsed on its own has no place in the file: refusals point at its entry instead
    outer: _At | None = None

    def sub(self, steps: JsonPath) -> _At:
        return _At(self.sf, self.doc, self.path + steps, self.outer)

    def refuse(self, reason: str) -> NoReturn:
        if self.outer is not None:
            inner = _field_name(self.path)
            self.outer.refuse(f"(in its `{inner}`) {reason}" if inner else reason)
        span = locate(self.sf, self.doc, self.path, "value") if self.doc is not None else Span(1, 1, 1, 1)
        raise OfflineRefusal(self.sf.path, span, _field_name(self.path) or Path(self.sf.path).name, reason)


def _where(path: Path) -> str:
    """A path as reports show it: relative to the working directory, not resolved (it may be a link)."""
    try:
        shown = path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        shown = path.as_posix()
    return printable(shown)


def _file_at(path: Path) -> _At:
    """A whole file, for refusals about the file itself."""
    return _At(SourceFile(path=_where(path), raw=b""), None)


def _url(value: str) -> str | None:
    """Why ``value`` is a URL or a network address (which kustomize fetches in any field), or None."""
    v = value.strip()
    if v.startswith(("//", "\\\\")):
        return "is a network path"
    if "://" in v or _SCHEME_OR_SCP.match(v):
        return "is a URL or a `host:path` repository address"
    return None


def _repository(value: str) -> str | None:
    """Why kustomize would take ``value`` for a git repository (where no local file has the name), or None."""
    value = value.strip()
    if "@" in value.split("/", 1)[0]:
        return "it is a `user@host` repository address"
    if "?" in value:
        return "it carries a query (`?ref=`, `?version=`), as only remote repositories do"
    if _REPO_FORM.search(value):
        return "kustomize takes it for a git repository"
    return None


def _remote_base(value: str, why: str) -> str:
    return f"`{_show(value)}` is a remote base; {_OFFLINE} ({why}; vendor it, or lint the output of `kustomize build`)"


def _inline(value: str) -> bool:
    """An entry that holds YAML itself rather than naming a file: no renderer loads it as a URL."""
    v = value.strip()
    return "\n" in v or v.startswith(("{", "["))


def _items(value: Any) -> list[tuple[JsonPath, Any]]:
    """The entries of a list field, as (steps, entry); a single value stands for itself."""
    if value is None:
        return []
    if isinstance(value, list):
        return [((i,), v) for i, v in enumerate(value)]
    return [((), value)]


def _string(at: _At, value: Any) -> str:
    if not isinstance(value, str):
        kind = "mapping" if isinstance(value, dict) else "list" if isinstance(value, list) else type(value).__name__
        at.refuse(f"holds a {kind} where a path belongs; dralint checks only plain paths before rendering")
    return value


def _read(path: Path | str) -> bytes:
    """A file's bytes, but no more than the loader accepts (it refuses the rest: a huge file is not read whole)."""
    with open(path, "rb") as fh:
        return fh.read(Limits().max_file_bytes + 1)


def _binary_at(text: str) -> int | None:
    """The offset of a `!!binary` scalar: kustomize decodes it to another string than the text dralint sees."""
    if "!" not in text:
        return None
    try:
        stack: list[yaml.Node] = [n for n in yaml.compose_all(text, Loader=COMPOSE_LOADER) if n is not None]
    except yaml.YAMLError:
        return None  # the loader reported it already
    seen: set[int] = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.tag == _BINARY_TAG:
            return int(n.start_mark.index)
        if isinstance(n, yaml.MappingNode):
            stack.extend(x for kv in n.value for x in kv)
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)
    return None


def _parsed(display: str, raw: bytes, at: _At, inline: bool = False) -> SourceFile:
    """A kustomization or plugin config, parsed with positions. What dralint cannot read the way
    kustomize does it cannot check, so it is refused: at its place in the file, or at ``at`` for
    ``inline`` text (whose positions are not the file's)."""
    sf = load_bytes(display, raw)
    name = Path(display).name

    def refuse(span: Span, reason: str) -> NoReturn:
        if inline:
            at.refuse(reason)
        raise OfflineRefusal(sf.path, span, name, reason)

    for p in sf.problems:
        refuse(p.span, f"cannot be checked before rendering ({p.message}); {_OFFLINE}")
    for doc in sf.documents:
        for key, start, end, _ in doc.duplicates:
            refuse(sf.span(start, end), f"repeats the key `{_show(key)}`: kustomize and dralint could read "
                   "different values, so dralint cannot check it")
    binary = _binary_at(sf.text)
    if binary is not None:
        refuse(sf.span(binary, binary), "holds a `!!binary` value, which dralint cannot check; write the text itself")
    return sf


# --------------------------------------------------------------------------------------------------
# kustomize


def _vcs_top(directory: Path) -> Path | None:
    for d in (directory, *directory.parents):
        if (d / ".git").exists():
            return d
    return None


def check_kustomization(directory: Path, roots: Roots | None = None) -> None:
    """Refuse a kustomization (and every one it includes) that names anything remote or out of the roots.

    The roots default to the run's (`dralint.files.input_roots`: the working directory, the project
    and the directory itself) plus the repository the directory is in: a base in `../../base` of
    the same checkout is fine, a path out of it is not, whoever wrote it.
    """
    real = directory.resolve()
    if roots is None:
        top = _vcs_top(real)
        roots = input_roots([str(directory)]).with_dirs([top] if top is not None else [])
    _Kustomize(roots).directory(None, real, 0, False)


class _Kustomize:
    def __init__(self, roots: Roots) -> None:
        self.roots = roots
        self.seen: set[tuple[Path, bool]] = set()

    def inside(self, at: _At, base: Path, value: str) -> Path:
        """``value`` resolved against ``base``; refused when it (or what a link in it points to) is out of the roots."""
        try:
            joined = os.path.join(base, value)
            lexical = os.path.normpath(joined)
            # the path as written, where kustomize opens it (cleaned, as Go's filepath.Join does), and
            # where the OS takes it through links: all of them must stay inside
            reals = (os.path.realpath(lexical), os.path.realpath(joined))
        except (ValueError, OSError):
            at.refuse(f"`{_show(value)}` is not a usable path")
        for p in (lexical, *reals):
            if not self.roots.holds(p):
                at.refuse(f"`{_show(value)}` points outside the project (through `..`, an absolute path or a "
                          "symbolic link); dralint reads nothing outside it")
        return Path(lexical)

    def file(self, at: _At, value: Any, base: Path, key_value: bool = False) -> None:
        """A field that names one file (kustomize fetches it when it is an http(s) URL)."""
        v = _string(at, value)
        # `files` of a generator may be `key=path`: both the whole entry and the path part are checked
        path = v.split("=", 1)[1] if key_value and "=" in v else v
        for candidate in dict.fromkeys((v, path)):
            why = _url(candidate)
            if why:
                at.refuse(f"`{_show(candidate)}` {why}: kustomize would fetch it; {_OFFLINE}")
        self.inside(at, base, path)

    def base(self, at: _At, value: Any, directory: Path, depth: int, configs: bool) -> None:
        """A resource, base or component: a file, a directory with a kustomization, or a repository."""
        v = _string(at, value)
        why = _url(v)
        if why:  # fetched even when a local file has the name
            at.refuse(_remote_base(v, f"it {why}"))
        target = self.inside(at, directory, v)
        if target.is_file():  # kustomize reads an existing file before it tries a repository
            if configs:
                self.config_file(at, target, directory)
            return
        why = _repository(v)
        if why:
            at.refuse(_remote_base(v, why))
        if not target.exists():
            at.refuse(f"`{_show(v)}` does not exist locally (kustomize would try to fetch it from the network; "
                      f"{_OFFLINE})")
        if target.is_dir():
            self.directory(at, target, depth + 1, configs)

    def directory(self, at: _At | None, directory: Path, depth: int, configs: bool) -> None:
        """Every kustomization file of a directory (kustomize refuses more than one; each is checked)."""
        if depth > MAX_DEPTH:
            assert at is not None
            at.refuse(f"includes kustomizations more than {MAX_DEPTH} levels deep")
        key = (Path(os.path.realpath(directory)), configs)
        if key in self.seen:
            return
        self.seen.add(key)
        for name in KUSTOMIZATION_NAMES:
            f = directory / name
            if f.is_symlink() or f.exists():
                self.kustomization(at or _file_at(f), f, depth, configs)

    def kustomization(self, at: _At, kfile: Path, depth: int, configs: bool) -> None:
        real = os.path.realpath(kfile)
        # named when the refusal points at the entry that leads to it, not at the file itself
        named = "" if at.sf.path == _where(kfile) else f"leads to `{_show(_where(kfile))}`, which "
        if not self.roots.holds(real):
            at.refuse(f"{named}is a symbolic link that points outside the project; it was not read")
        if not os.path.isfile(real):
            at.refuse(f"{named}is not a regular file")
        base = Path(real).parent
        sf = _parsed(_where(kfile), _read(real), at)
        for doc in sf.documents:
            if isinstance(doc.data, LMap):
                self.fields(_At(sf, doc), doc.data, base, depth, configs)

    def fields(self, at: _At, data: LMap, base: Path, depth: int, configs: bool) -> None:
        for key, value in data.items():
            k = key.casefold()
            here = at.sub((key,))
            if k in _HELM_FIELDS:
                if value:
                    here.refuse(_NO_HELM)
            elif k in _BASE_FIELDS:
                for steps, v in _items(value):
                    self.base(here.sub(steps), v, base, depth, configs)
            elif k in _PLUGIN_FIELDS:
                for steps, v in _items(value):
                    if isinstance(v, str) and _inline(v):
                        self.inline_config(here.sub(steps), v, base)
                    else:
                        self.base(here.sub(steps), v, base, depth, True)
            elif k in _FILE_FIELDS:
                for steps, v in _items(value):
                    if not (k == "patchesstrategicmerge" and isinstance(v, str) and _inline(v)):
                        self.file(here.sub(steps), v, base)
            elif k in _PATH_ITEM_FIELDS or k in _GENERATOR_FIELDS:
                for steps, item in _items(value):
                    if isinstance(item, LMap):
                        self.path_keys(here.sub(steps), item, base, _GENERATOR_KEYS if k in _GENERATOR_FIELDS
                                       else ("path",), deep=False)
            elif k == "openapi" and isinstance(value, LMap):
                self.path_keys(here, value, base, ("path",), deep=False)

    def path_keys(self, at: _At, node: LMap, base: Path, keys: tuple[str, ...], deep: bool) -> None:
        """The values of ``keys`` in a mapping (and, ``deep``, in every mapping inside it) as file paths."""
        todo: list[tuple[JsonPath, Any]] = [((), node)]
        while todo:
            steps, n = todo.pop()
            if isinstance(n, LSeq) and deep:
                todo.extend(((*steps, i), v) for i, v in enumerate(n))
            if not isinstance(n, LMap):
                continue
            for key, value in n.items():
                if key.casefold() in keys:
                    for sub, v in _items(value):
                        self.file(at.sub((*steps, key, *sub)), v, base, key_value=key.casefold() == "files")
                elif deep:
                    todo.append(((*steps, key), value))

    def config_file(self, at: _At, path: Path, base: Path) -> None:
        """A file of generator/transformer/validator configs (the path is checked already)."""
        sf = _parsed(_where(path), _read(path), at)
        for doc in sf.documents:
            self.config(_At(sf, doc), doc.data, base)

    def inline_config(self, at: _At, text: str, base: Path) -> None:
        sf = _parsed(at.sf.path, text.encode("utf-8"), at, inline=True)
        for doc in sf.documents:
            self.config(_At(sf, doc, outer=at), doc.data, base)

    def config(self, at: _At, data: Any, base: Path) -> None:
        """One plugin config: only kustomize's builtin plugins run, and only with local files."""
        if not isinstance(data, LMap):
            return  # not an object: kustomize refuses it itself
        meta = data.get("metadata")
        annotations = meta.get("annotations") if isinstance(meta, LMap) else None
        for key in annotations if isinstance(annotations, LMap) else ():
            if key.casefold() in _FUNCTION_ANNOTATIONS:
                at.sub(("metadata", "annotations", key)).refuse(
                    "makes this config a KRM function, which runs a program or a container; dralint renders "
                    "with kustomize plugins off")
        if data.get("kind") == "HelmChartInflationGenerator":
            at.sub(("kind",)).refuse(_NO_HELM)
        api = data.get("apiVersion")
        if api != "builtin":
            at.sub(("apiVersion",)).refuse(
                f"`{_show(str(api))}` makes this config an external kustomize plugin (a program); dralint renders "
                "with plugins off and accepts only `apiVersion: builtin` configs")
        self.path_keys(at, data, base, _CONFIG_PATH_KEYS, deep=True)


# --------------------------------------------------------------------------------------------------
# Helm


def check_chart(chart: Path) -> None:
    """Refuse a chart whose schemas (its own and every subchart's, archived or not) reference anything
    but their own fragments, or whose dependencies are not vendored under ``charts/``.

    Links out of the chart are not followed: the renderer reads a copy that leaves them out.
    """
    root = chart.resolve()
    _Chart(Roots.of([root])).directory(root, 0)


def _schema_problem(key: str, value: str) -> str | None:
    if key == "$schema":
        if _BUILTIN_META.fullmatch(value):
            return None
        return "is not a JSON Schema draft Helm has built in, so Helm would download it"
    if value.startswith("#"):
        return None
    if key == "$id":
        return "gives the schema a base address other than its own fragments, so references could leave the file"
    return "is not a fragment of this file (`#/…`), so Helm would load it from a URL or a file"


class _Chart:
    def __init__(self, roots: Roots) -> None:
        self.roots = roots
        #: bytes left to unpack from all the archives of the chart, nested ones too (a gzip bomb stops here)
        self.budget = [MAX_ARCHIVE_BYTES]

    def readable(self, path: Path) -> bool:
        """Whether ``path`` is a regular file inside the chart (a link out of it is left to the copy to drop)."""
        return os.path.isfile(path) and self.roots.holds(os.path.realpath(path))

    def directory(self, chart: Path, depth: int) -> None:
        if depth == 0:  # Helm checks the dependencies of the chart it renders, not of its subcharts
            for name in ("Chart.yaml", "requirements.yaml"):
                if self.readable(chart / name):
                    self.dependencies(chart, chart / name)
        schema = chart / "values.schema.json"
        if self.readable(schema):
            raw = _read(schema)
            self.schema(load_bytes(_where(schema), raw), raw, None)
        charts = chart / "charts"
        if not (charts.is_dir() and self.roots.holds(os.path.realpath(charts))):
            return
        for entry in sorted(charts.iterdir()):
            if not self.roots.holds(os.path.realpath(entry)):
                continue
            if entry.is_dir():
                if depth >= MAX_DEPTH:
                    _file_at(entry).refuse(f"nests subcharts more than {MAX_DEPTH} levels deep")
                self.directory(entry, depth + 1)
            elif entry.name.endswith(".tgz") and entry.is_file():
                with entry.open("rb") as fh:
                    self.archive(_file_at(entry), fh, depth + 1)

    def dependencies(self, chart: Path, meta: Path) -> None:
        sf = load_bytes(_where(meta), _read(meta))
        vendored = _vendored(chart / "charts")
        for doc in sf.documents:
            deps = doc.data.get("dependencies") if isinstance(doc.data, LMap) else None
            for i, dep in enumerate(deps if isinstance(deps, LSeq) else ()):
                if not isinstance(dep, LMap):
                    continue
                name, repo = dep.get("name"), dep.get("repository")
                if not isinstance(repo, str) or not repo.strip():
                    continue
                if isinstance(name, str) and any(v == name or v.startswith(name + "-") for v in vendored):
                    continue
                _At(sf, doc, ("dependencies", i, "repository")).refuse(
                    f"`{_show(repo)}`: dependency `{_show(str(name))}` is not vendored under charts/, so Helm would "
                    f"have to download it, and an unvendored dependency cannot render offline; {_OFFLINE} "
                    "(run `helm dependency build` and commit charts/)")

    def schema(self, sf: SourceFile, raw: bytes, outer: _At | None) -> None:
        """Every reference in a values.schema.json must be a fragment of it (or a built-in meta-schema)."""
        here = _At(sf, sf.documents[0] if sf.documents and not sf.problems else None, outer=outer)
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            here.refuse("is not UTF-8 JSON that dralint can read, so it cannot check what the schema references; "
                        f"{_OFFLINE}")
        todo: list[tuple[JsonPath, Any]] = [((), data)]
        while todo:
            steps, node = todo.pop()
            if isinstance(node, list):
                todo.extend(((*steps, i), v) for i, v in enumerate(node))
            elif isinstance(node, dict):
                for key, value in node.items():
                    problem = _schema_problem(key, value) if key in _SCHEMA_REF_KEYS and isinstance(value, str) \
                        else None
                    if problem:
                        here.sub((*steps, key)).refuse(f"`{_show(value)}` {problem}; {_OFFLINE}")
                    todo.append(((*steps, key), value))

    def archive(self, at: _At, fh: IO[bytes], depth: int) -> None:
        """The schemas inside a chart archive, and inside the archives it holds, within Helm's size limits."""
        if depth > MAX_DEPTH:
            at.refuse(f"nests chart archives more than {MAX_DEPTH} levels deep")
        try:
            # read as a stream through the budget: no read, not even of a member's header, goes past it
            with gzip.GzipFile(fileobj=fh) as gz, tarfile.open(fileobj=_Capped(gz, self.budget), mode="r|") as tf:
                for n, member in enumerate(tf):
                    if n >= MAX_ARCHIVE_MEMBERS:
                        raise _TooLarge
                    # Helm reads archives written on Windows too: `\` separates names there
                    name = member.name.replace("\\", "/").rsplit("/", 1)[-1]
                    if not member.isfile() or not (name == "values.schema.json" or name.endswith(".tgz")):
                        continue
                    if member.size > MAX_FILE_BYTES:
                        raise _TooLarge
                    inside = tf.extractfile(member)
                    data = inside.read() if inside is not None else b""
                    # the member is named in the field: `outer.tgz:inner.tgz:values.schema.json`
                    named = f"{at.path[0]}:{member.name}" if at.path else member.name
                    inner = _At(at.sf, at.doc, (named,), at.outer)
                    if name == "values.schema.json":
                        self.schema(load_bytes(member.name, data), data, inner)
                    else:
                        self.archive(inner, io.BytesIO(data), depth + 1)
        except _TooLarge:
            at.refuse(f"is over {MAX_ARCHIVE_BYTES >> 20} MiB unpacked, {MAX_ARCHIVE_MEMBERS:,} files, or "
                      f"{MAX_FILE_BYTES >> 20} MiB for one file: too large to check before rendering (Helm "
                      "refuses such charts too)")
        except (tarfile.TarError, OSError, EOFError, zlib.error):
            at.refuse(f"cannot be read as a chart archive, so its schemas cannot be checked; {_OFFLINE}")


class _TooLarge(Exception):
    pass


class _Capped(io.RawIOBase):
    """A reader that spends a shared budget of bytes and fails beyond it (tarfile reads it in small chunks)."""

    def __init__(self, raw: gzip.GzipFile, budget: list[int]) -> None:
        super().__init__()
        self.raw = raw
        self.budget = budget

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self.raw.read(min(len(view), self.budget[0] + 1))
        self.budget[0] -= len(data)
        if self.budget[0] < 0:
            raise _TooLarge
        view[: len(data)] = data
        return len(data)


def _vendored(charts: Path) -> list[str]:
    """Names under ``charts/``: subchart directories, and archives (``name-1.2.3.tgz``) without the suffix."""
    if not charts.is_dir():
        return []
    return [e.name.removesuffix(".tgz") for e in charts.iterdir() if e.is_dir() or e.name.endswith(".tgz")]
