"""Rendering is offline: every field of a kustomization or chart that takes a URL is refused first.

Each attack points a field at a listener on 127.0.0.1 that this file starts: the listener must see
no connection, no renderer may start, and the error must name the file, line and field. Repository
forms (`github.com:org/repo`, `git@…`, `?ref=`) are refused before rendering, with a fake `git` on
PATH that leaves a canary file if anything runs it. A local overlay and a local chart still render.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import io
import json
import os
import shutil
import socket
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dralint.cli.app import main

KUSTOMIZE = shutil.which("kustomize") or shutil.which("kubectl")
HELM = shutil.which("helm") is not None or importlib.util.find_spec("helm_python") is not None
needs_kustomize = pytest.mark.skipif(KUSTOMIZE is None, reason="neither `kustomize` nor `kubectl` on PATH")
needs_helm = pytest.mark.skipif(not HELM, reason="no `helm` on PATH and no Helm SDK (pip install 'dralint[helm]')")

CANARY = "CANARY-fetched-7f3a9c"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"


class Listener:
    """A TCP listener on the loopback interface that counts connections and answers any request
    with an HTTP 200 whose body is the canary (so a fetch would also show up in the output)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        body = f"{CANARY}: x\n".encode()
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(1)
                try:
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                                 + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
                except OSError:
                    pass

    def close(self) -> None:
        self.stop.set()
        # wake the accept() that is waiting: without this, every test waited out its 0.2 s timeout
        # (where the OS refuses to shut a listening socket down, that timeout still ends the loop)
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    lst = Listener()
    yield lst
    lst.close()


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The programs dralint starts (every renderer starts through `subprocess.Popen`); they still run."""
    started: list[Any] = []

    class Spy(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            started.append(args[0] if args else kwargs.get("args"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", Spy)
    return started


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout to lint, as the working directory; ``tmp_path/outside`` is outside it."""
    root = tmp_path / "repo"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text(f"{CANARY}: secret\n", encoding="utf-8")
    (outside / "kustomization.yaml").write_text("resources: [secret.yaml]\n", encoding="utf-8")
    monkeypatch.chdir(root)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return root


def overlay(root: Path, kustomization: str, files: dict[str, str] | None = None) -> Path:
    app = root / "app"
    app.mkdir(exist_ok=True)
    (app / "cm.yaml").write_text(CONFIGMAP, encoding="utf-8")
    (app / "kustomization.yaml").write_text(kustomization, encoding="utf-8")
    for name, text in (files or {}).items():
        (app / name).parent.mkdir(parents=True, exist_ok=True)
        (app / name).write_text(text, encoding="utf-8")
    return app


def check(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["check", "--isolated", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def assert_refused(result: tuple[int, str, str], where: str, field: str, listener: Listener,
                   spawned: list[Any]) -> str:
    """The checks every refusal passes; returns what dralint printed."""
    code, out, err = result
    output = out + err
    assert code == 2, output
    assert where in output, output
    assert f"`{field}`" in output, output
    assert listener.connections == 0
    assert spawned == [], "a renderer started although the input was refused"
    assert CANARY not in output
    return output


# --------------------------------------------------------------------------------------------------
# kustomize: every field that takes a URL or a path

R = "resources:\n  - cm.yaml\n"
KUSTOMIZE_FIELDS = [
    # (id, kustomization with {url}, field named in the error, line of the offending value)
    ("resources", "resources:\n  - cm.yaml\n  - {url}/r.yaml\n", "resources[1]", 3),
    ("bases", "bases:\n  - {url}/base\n" + R, "bases[0]", 2),
    ("components", R + "components:\n  - {url}/component\n", "components[0]", 4),
    ("patches", R + "patches:\n  - path: {url}/p.yaml\n", "patches[0].path", 4),
    ("patchesStrategicMerge", R + "patchesStrategicMerge:\n  - {url}/p.yaml\n", "patchesStrategicMerge[0]", 4),
    ("patchesJson6902", R + "patchesJson6902:\n  - target: {{version: v1, kind: ConfigMap, name: a}}\n"
     "    path: {url}/p.json\n", "patchesJson6902[0].path", 5),
    ("openapi", R + "openapi:\n  path: {url}/schema.json\n", "openapi.path", 4),
    ("crds", R + "crds:\n  - {url}/crd.json\n", "crds[0]", 4),
    ("configurations", R + "configurations:\n  - {url}/config.yaml\n", "configurations[0]", 4),
    ("configMapGenerator.files", R + "configMapGenerator:\n  - name: g\n    files:\n      - data={url}/f\n",
     "configMapGenerator[0].files[0]", 6),
    ("configMapGenerator.envs", R + "configMapGenerator:\n  - name: g\n    envs:\n      - {url}/e.env\n",
     "configMapGenerator[0].envs[0]", 6),
    ("configMapGenerator.env", R + "configMapGenerator:\n  - name: g\n    env: {url}/e.env\n",
     "configMapGenerator[0].env", 5),
    ("secretGenerator.files", R + "secretGenerator:\n  - name: s\n    files:\n      - {url}/key\n",
     "secretGenerator[0].files[0]", 6),
    ("replacements", R + "replacements:\n  - path: {url}/r.yaml\n", "replacements[0].path", 4),
    ("generators", R + "generators:\n  - {url}/gen.yaml\n", "generators[0]", 4),
    ("transformers", R + "transformers:\n  - {url}/t.yaml\n", "transformers[0]", 4),
    ("validators", R + "validators:\n  - {url}/v.yaml\n", "validators[0]", 4),
    ("helmCharts", R + "helmCharts:\n  - name: x\n    repo: {url}/charts\n    version: 1.0.0\n", "helmCharts", 4),
    ("helmChartInflationGenerator", R + "helmChartInflationGenerator:\n  - chartName: x\n"
     "    chartRepoUrl: {url}/charts\n", "helmChartInflationGenerator", 4),
    ("helmGlobals", R + "helmGlobals:\n  chartHome: {url}/charts\n", "helmGlobals", 4),
    # kustomize decodes field names regardless of case (Go's encoding/json)
    ("case-folded", "Resources:\n  - cm.yaml\nPatches:\n  - Path: {url}/p.yaml\n", "Patches[0].Path", 4),
    ("https", R + "patches:\n  - path: https://127.0.0.1:{port}/p.yaml\n", "patches[0].path", 4),
    ("network path", R + "crds:\n  - //127.0.0.1:{port}/crd.json\n", "crds[0]", 4),
]


@pytest.mark.parametrize(("text", "field", "line"), [c[1:] for c in KUSTOMIZE_FIELDS],
                         ids=[c[0] for c in KUSTOMIZE_FIELDS])
def test_kustomize_url_field_is_refused_before_rendering(text: str, field: str, line: int, repo: Path,
                                                         listener: Listener, spawned: list[Any],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    overlay(repo, text.format(url=listener.url, port=listener.port))
    assert_refused(check(["app"], capsys), f"app/kustomization.yaml:{line}:", field, listener, spawned)


PATCH_TRANSFORMER = ("apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\n"
                     "path: {url}/p.yaml\ntarget:\n  kind: ConfigMap\n")
CONFIG_FILES = [
    # (id, kustomization, other files, file and line of the error, field)
    ("transformer config with a URL", R + "transformers:\n  - patch.yaml\n", {"patch.yaml": PATCH_TRANSFORMER},
     "app/patch.yaml:5:", "path"),
    ("generator config in a kustomization directory", R + "generators:\n  - gen\n",
     {"gen/kustomization.yaml": "resources:\n  - cmgen.yaml\n",
      "gen/cmgen.yaml": "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: g\nfiles:\n"
                        "  - {url}/f\n"},
     "app/gen/cmgen.yaml:6:", "files[0]"),
    ("inline transformer config", R + "transformers:\n  - |\n    apiVersion: builtin\n    kind: PatchTransformer\n"
     "    metadata: {{name: p}}\n    path: {url}/p.yaml\n    target: {{kind: ConfigMap}}\n", {},
     "app/kustomization.yaml:4:", "transformers[0]"),
    ("KRM function", R + "transformers:\n  - fn.yaml\n",
     {"fn.yaml": "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n  annotations:\n"
                 "    config.kubernetes.io/function: |\n      exec:\n        path: ./fn.sh\n"},
     "app/fn.yaml:6:", "metadata.annotations.config.kubernetes.io/function"),
    ("external plugin", R + "generators:\n  - plugin.yaml\n",
     {"plugin.yaml": "apiVersion: someteam.example.com/v1\nkind: Fetcher\nmetadata:\n  name: f\n"
                     "url: {url}/x\n"},
     "app/plugin.yaml:1:", "apiVersion"),
    ("Helm inflation config", R + "generators:\n  - helm.yaml\n",
     {"helm.yaml": "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: h\n"
                   "repo: {url}/charts\n"},
     "app/helm.yaml:2:", "kind"),
    ("included kustomization", "resources:\n  - sub\n", {"sub/kustomization.yaml": R + "patches:\n  - path: {url}/p\n",
                                                          "sub/cm.yaml": CONFIGMAP},
     "app/sub/kustomization.yaml:4:", "patches[0].path"),
]


@pytest.mark.parametrize(("text", "files", "where", "field"), [c[1:] for c in CONFIG_FILES],
                         ids=[c[0] for c in CONFIG_FILES])
def test_plugin_configs_and_included_files_are_checked(text: str, files: dict[str, str], where: str, field: str,
                                                       repo: Path, listener: Listener, spawned: list[Any],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    overlay(repo, text.format(url=listener.url), {k: v.format(url=listener.url) for k, v in files.items()})
    assert_refused(check(["app"], capsys), where, field, listener, spawned)


def test_binary_scalar_hiding_a_url_is_refused(repo: Path, listener: Listener, spawned: list[Any],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    hidden = base64.b64encode(f"{listener.url}/p.yaml".encode()).decode()
    overlay(repo, R + f"patches:\n  - path: !!binary {hidden}\n")
    output = assert_refused(check(["app"], capsys), "app/kustomization.yaml:4:", "kustomization.yaml", listener,
                            spawned)
    assert "!!binary" in output


OUT_OF_ROOTS = [
    ("dot-dot patch", R + "patches:\n  - path: ../../outside/secret.yaml\n", "patches[0].path", 4),
    ("absolute patch", R + "patches:\n  - path: {outside}/secret.yaml\n", "patches[0].path", 4),
    ("dot-dot base", "resources:\n  - ../../outside\n", "resources[0]", 2),
    ("symlinked patch", R + "patches:\n  - path: link.yaml\n", "patches[0].path", 4),
    ("symlinked generator file", R + "configMapGenerator:\n  - name: g\n    files:\n      - k=link.yaml\n",
     "configMapGenerator[0].files[0]", 6),
]


@pytest.mark.parametrize(("text", "field", "line"), [c[1:] for c in OUT_OF_ROOTS], ids=[c[0] for c in OUT_OF_ROOTS])
def test_paths_out_of_the_project_are_refused(text: str, field: str, line: int, repo: Path, listener: Listener,
                                              spawned: list[Any], capsys: pytest.CaptureFixture[str]) -> None:
    outside = repo.parent / "outside"
    app = overlay(repo, text.format(outside=outside))
    (app / "link.yaml").symlink_to(outside / "secret.yaml")
    output = assert_refused(check(["app"], capsys), f"app/kustomization.yaml:{line}:", field, listener, spawned)
    assert "outside the project" in output


def test_kustomization_files_linked_out_of_the_project_are_not_read(repo: Path, listener: Listener,
                                                                     spawned: list[Any],
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    outside = repo.parent / "outside"
    (outside / "kustomization.yaml").write_text(f"resources: [secret.yaml]\n# {CANARY}\n", encoding="utf-8")
    app = overlay(repo, "resources:\n  - sub\n")
    (app / "sub").mkdir()
    (app / "sub" / "kustomization.yaml").symlink_to(outside / "kustomization.yaml")
    output = assert_refused(check(["app"], capsys), "app/kustomization.yaml:2:", "resources[0]", listener, spawned)
    assert "app/sub/kustomization.yaml" in output
    assert "points outside the project; it was not read" in output


def test_repeated_key_is_refused(repo: Path, listener: Listener, spawned: list[Any],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    # dralint and kustomize could keep different copies of a repeated key: neither is trusted
    overlay(repo, R + "patches:\n  - path: patch.yaml\npatches:\n  - path: " + listener.url + "/p.yaml\n")
    output = assert_refused(check(["app"], capsys), "app/kustomization.yaml:5:", "kustomization.yaml", listener,
                            spawned)
    assert "repeats the key `patches`" in output


# --------------------------------------------------------------------------------------------------
# git forms: refused before rendering, and git never runs

GIT_FORMS = [
    "github.com:org/repo",  # scp-like host:path
    "git@github.com:org/repo.git",
    "git::https://github.com/org/repo",
    "ssh://git@github.com/org/repo.git",
    "https://github.com/org/repo//deploy?ref=v1",
    "example.com/org/repo.git//deploy",  # host.tld/org/repo.git
    "github.com/org/repo",
    "deploy?version=v1",
    "//github.com/org/repo",
]


@pytest.fixture
def fake_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on PATH that leaves a canary file when anything runs it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    canary = tmp_path / "git-ran"
    git = bin_dir / "git"
    git.write_text(f"#!/bin/sh\necho \"$@\" >> '{canary}'\nexit 1\n", encoding="utf-8")
    git.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return canary


@pytest.mark.parametrize("field", ["resources", "components"])
@pytest.mark.parametrize("form", GIT_FORMS)
def test_git_forms_are_refused_and_git_never_runs(form: str, field: str, repo: Path, fake_git: Path,
                                                  listener: Listener, spawned: list[Any],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    app = overlay(repo, f"{field}:\n  - {form}\n" + ("" if field == "resources" else R))
    if "://" not in form and not form.startswith("//"):
        # a local directory of that name exists: kustomize still takes the name for a repository
        local = app / form
        local.mkdir(parents=True)
        (local / "kustomization.yaml").write_text("resources: [cm.yaml]\n", encoding="utf-8")
        (local / "cm.yaml").write_text(CONFIGMAP, encoding="utf-8")
    assert_refused(check(["app"], capsys), "app/kustomization.yaml:2:", f"{field}[0]", listener, spawned)
    assert not fake_git.exists(), "git ran"


# --------------------------------------------------------------------------------------------------
# Helm: schema references and dependencies

CHART_YAML = "apiVersion: v2\nname: app\nversion: 0.1.0\n"
TEMPLATE = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-{{ .Chart.Name }}\n"
            "data:\n  x: {{ .Values.x | quote }}\n")


def chart(root: Path, schema: dict[str, Any] | None = None, chart_yaml: str = CHART_YAML,
          name: str = "chart") -> Path:
    c = root / name
    (c / "templates").mkdir(parents=True, exist_ok=True)
    (c / "Chart.yaml").write_text(chart_yaml, encoding="utf-8")
    (c / "values.yaml").write_text("x: hello\n", encoding="utf-8")
    (c / "templates" / "cm.yaml").write_text(TEMPLATE, encoding="utf-8")
    if schema is not None:
        (c / "values.schema.json").write_text(json.dumps(schema, indent=2), encoding="utf-8")
    return c


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


SCHEMAS = [
    # (id, schema with {url}, field named, text on the offending line)
    ("http $ref", {"type": "object", "properties": {"x": {"$ref": "{url}/s.json"}}}, "properties.x.$ref"),
    ("https $ref", {"properties": {"x": {"$ref": "https://127.0.0.1:{port}/s.json"}}}, "properties.x.$ref"),
    ("file $ref", {"properties": {"x": {"$ref": "file:///etc/passwd"}}}, "properties.x.$ref"),
    ("network-path $ref", {"properties": {"x": {"$ref": "//127.0.0.1:{port}/s.json"}}}, "properties.x.$ref"),
    ("relative file out of the chart", {"properties": {"x": {"$ref": "../outside/s.json"}}}, "properties.x.$ref"),
    ("remote $id", {"$id": "{url}/", "properties": {"x": {"$ref": "s.json#/x"}}}, "$id"),
    ("remote $schema", {"$schema": "{url}/meta", "type": "object"}, "$schema"),
    ("$dynamicRef", {"$defs": {"a": {"$dynamicRef": "{url}/d.json"}}}, "$defs.a.$dynamicRef"),
    ("in a list", {"anyOf": [{"type": "null"}, {"$ref": "{url}/s.json"}]}, "anyOf[1].$ref"),
]


def _fill(value: Any, url: str, port: int) -> Any:
    if isinstance(value, dict):
        return {k: _fill(v, url, port) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, url, port) for v in value]
    return value.format(url=url, port=port) if isinstance(value, str) else value


@pytest.fixture
def helm_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prefer the in-process-capable SDK where it is installed: it is what loaded `$ref` URLs."""
    if importlib.util.find_spec("helm_python") is not None:
        monkeypatch.setenv("DRALINT_HELM", "sdk")


@pytest.mark.parametrize(("schema", "field"), [c[1:] for c in SCHEMAS], ids=[c[0] for c in SCHEMAS])
def test_schema_reference_is_refused_before_rendering(schema: dict[str, Any], field: str, repo: Path,
                                                      listener: Listener, spawned: list[Any], helm_sdk: None,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    c = chart(repo, _fill(schema, listener.url, listener.port))
    needle = f'"{field.rsplit(".", 1)[-1]}"'
    where = f"chart/values.schema.json:{line_of(c / 'values.schema.json', needle)}:"
    assert_refused(check(["--helm-chart", "chart"], capsys), where, field, listener, spawned)


def test_subchart_schemas_are_checked(repo: Path, listener: Listener, spawned: list[Any], helm_sdk: None,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    c = chart(repo)
    sub = chart(c / "charts", {"properties": {"x": {"$ref": f"{listener.url}/s.json"}}},
                "apiVersion: v2\nname: sub\nversion: 0.1.0\n", name="sub")
    where = f"chart/charts/sub/values.schema.json:{line_of(sub / 'values.schema.json', '$ref')}:"
    assert_refused(check(["--helm-chart", "chart"], capsys), where, "properties.x.$ref", listener, spawned)


def _tgz(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_archived_subchart_schemas_are_checked(repo: Path, listener: Listener, spawned: list[Any], helm_sdk: None,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    c = chart(repo)
    schema = json.dumps({"properties": {"x": {"$ref": f"{listener.url}/s.json"}}})
    inner = _tgz({"deep/Chart.yaml": "apiVersion: v2\nname: deep\nversion: 0.1.0\n", "deep/values.schema.json": schema})
    (c / "charts").mkdir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in {"sub/Chart.yaml": b"apiVersion: v2\nname: sub\nversion: 0.1.0\n",
                           "sub/charts/deep-0.1.0.tgz": inner}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    (c / "charts" / "sub-0.1.0.tgz").write_bytes(buf.getvalue())
    output = assert_refused(check(["--helm-chart", "chart"], capsys), "chart/charts/sub-0.1.0.tgz:1:",
                            "sub/charts/deep-0.1.0.tgz:deep/values.schema.json", listener, spawned)
    assert "properties.x.$ref" in output


def test_archive_bomb_is_refused_without_unpacking_it(repo: Path, listener: Listener, spawned: list[Any],
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    offline = importlib.import_module("dralint.inputs.offline")
    monkeypatch.setattr(offline, "MAX_ARCHIVE_BYTES", 1 << 20)  # so that the bomb can be small
    c = chart(repo)
    (c / "charts").mkdir()
    (c / "charts" / "sub-0.1.0.tgz").write_bytes(_tgz({"sub/Chart.yaml": "apiVersion: v2\nname: sub\n",
                                                       "sub/zeros.txt": "0" * (4 << 20)}))
    output = assert_refused(check(["--helm-chart", "chart"], capsys), "chart/charts/sub-0.1.0.tgz:1:",
                            "sub-0.1.0.tgz", listener, spawned)
    assert "too large to check" in output


def test_unvendored_dependency_is_refused(repo: Path, listener: Listener, spawned: list[Any], helm_sdk: None,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    chart(repo, chart_yaml=CHART_YAML + f"dependencies:\n  - name: dep\n    version: 0.1.0\n"
                                        f"    repository: {listener.url}/charts\n")
    output = assert_refused(check(["--helm-chart", "chart"], capsys), "chart/Chart.yaml:7:",
                            "dependencies[0].repository", listener, spawned)
    assert "not vendored under charts/" in output
    assert "cannot render offline" in output


# --------------------------------------------------------------------------------------------------
# what stays allowed renders as before


@needs_kustomize
def test_local_overlay_still_renders(repo: Path, listener: Listener, capsys: pytest.CaptureFixture[str]) -> None:
    base = repo / "base"
    base.mkdir()
    (base / "kustomization.yaml").write_text("resources:\n  - cm.yaml\n", encoding="utf-8")
    (base / "cm.yaml").write_text(CONFIGMAP, encoding="utf-8")
    overlay(repo, "resources:\n  - ../base\npatches:\n  - path: patch.yaml\n"
                  "configMapGenerator:\n  - name: g\n    files:\n      - key=data.txt\n"
                  "transformers:\n  - prefix.yaml\n"
                  "patchesStrategicMerge:\n  - |\n    apiVersion: v1\n    kind: ConfigMap\n"
                  "    metadata: {name: a, annotations: {docs: 'http://example.invalid/'}}\n",
            {"patch.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: patched\n",
             "data.txt": "local\n",
             "prefix.yaml": "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata:\n  name: p\n"
                            "prefix: dev-\nfieldSpecs:\n  - path: metadata/name\n"})
    code, out, err = check(["--format", "json", "app"], capsys)
    assert code in (0, 1), err
    assert "error" not in err
    assert json.loads(out)["summary"]["objects"] == 2  # the patched ConfigMap and the generated one
    assert listener.connections == 0


@needs_helm
def test_local_chart_still_renders(repo: Path, listener: Listener, helm_sdk: None,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "definitions": {"text": {"type": "string"}}, "properties": {"x": {"$ref": "#/definitions/text"}}}
    c = chart(repo, schema, CHART_YAML + "dependencies:\n  - name: dep\n    version: 0.1.0\n"
                                         "    repository: https://charts.example.invalid\n")
    chart(c / "charts", {"$schema": "https://json-schema.org/draft/2020-12/schema"},
          "apiVersion: v2\nname: dep\nversion: 0.1.0\n", name="dep")
    code, out, err = check(["--format", "json", "--helm-chart", "chart"], capsys)
    assert code in (0, 1), err
    assert "error" not in err
    assert json.loads(out)["summary"]["objects"] == 2  # the chart's ConfigMap and its dependency's
    assert listener.connections == 0
