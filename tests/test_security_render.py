"""Rendering a hostile chart or kustomization: contained, so it cannot read, hang, crash or connect.

A chart in a pull request runs inside the renderer. Each test here drives the real command (in a
subprocess, so a hang or an abort shows up as such) with a chart that attacks one way:
- a symlink to a fake HOME holding a canary secret, read with ``.Files.Get``/``.Files.Glob``
  (plain, base64 and through ``fail``): the canary is in no output;
- a symlink loop: the render ends at once, and the links are reported;
- nested ``until`` loops: a RenderError after the timeout, no hang; a renderer that started a
  child of its own loses it too;
- ``until 2e9`` (an allocation of 16 GB): a RenderError, dralint itself does not abort;
- a secret in dralint's environment: the renderer never sees it, nor HOME, git, or the network;
- a ``values.schema.json`` ``$ref`` to a local listener: no connection arrives.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.test_render import FIXTURES, KUSTOMIZE, needs_sdk
from tests.test_security import GUARD

CANARY = "CANARY-9f3b1c-do-not-print"
SECRETS = {"SECRET_TOKEN": CANARY + "-env", "GITHUB_TOKEN": CANARY + "-gh", "AWS_SECRET_ACCESS_KEY": CANARY + "-aws"}
GPU_POD = """apiVersion: v1
kind: Pod
metadata: {name: gpu}
spec:
  containers:
  - name: main
    resources: {limits: {nvidia.com/gpu: 1}}
"""


def leaked(text: str) -> bool:
    """The canary in any form a template can print it: plain, base64, or quoted."""
    encoded = base64.b64encode((CANARY + "\n").encode()).decode().rstrip("=")
    return CANARY in text or encoded[:20] in text or CANARY.encode().hex() in text


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dralint", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, errors="replace")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fake HOME with a secret in it (and nothing of the real one)."""
    h = tmp_path / "home"
    (h / ".config").mkdir(parents=True)
    (h / "secret").write_text(CANARY + "\n")
    (h / ".config" / "token").write_text(CANARY + "\n")
    return h


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    return {**os.environ, **SECRETS, "HOME": str(home), "DRALINT_HELM": "sdk", "PYTHONPATH": os.environ.get(
        "PYTHONPATH", str(REPO))}


def chart(root: Path, templates: dict[str, str], name: str = "app") -> Path:
    c = root / name
    (c / "templates").mkdir(parents=True)
    (c / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
    for fname, text in templates.items():
        (c / "templates" / fname).write_text(textwrap.dedent(text))
    return c


def findings(p: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert p.stdout.strip(), p.stderr[-2000:]
    result: list[dict[str, Any]] = json.loads(p.stdout)["findings"]
    return result


# -- reading through a link -------------------------------------------------------------------------

READS = {
    # each container name is what the template read: it lands in the DRA201 message
    "names": """\
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: {{ .Files.Get "h/secret" | trim | quote }}
            resources: {limits: {nvidia.com/gpu: 1}}
          - name: {{ .Files.Get "s.txt" | b64enc | quote }}
            resources: {limits: {nvidia.com/gpu: 1}}
          - name: {{ .Files.Get "alias.txt" | trim | quote }}
            resources: {limits: {nvidia.com/gpu: 1}}
        {{- range $path, $bytes := .Files.Glob "h/**" }}
          - name: {{ $bytes | toString | trim | quote }}
            resources: {limits: {nvidia.com/gpu: 1}}
        {{- end }}
        {{- range $path, $bytes := .Files.Glob "**" }}
          - name: {{ $bytes | toString | b64enc | quote }}
            resources: {limits: {nvidia.com/gpu: 1}}
        {{- end }}
        """,
    # the error message of a failing template is printed on stderr
    "fail": """\
        {{- with .Files.Get "h/.config/token" }}{{ fail (printf "leak %s" .) }}{{ end }}
        {{- with .Files.Get "s.txt" }}{{ fail (b64enc .) }}{{ end }}
        kind: ConfigMap
        apiVersion: v1
        metadata: {name: c}
        """,
}


@needs_sdk
@pytest.mark.parametrize("how", sorted(READS))
def test_chart_links_to_home_leak_nothing(tmp_path: Path, home: Path, env: dict[str, str], how: str) -> None:
    c = chart(tmp_path, {"pod.yaml": READS[how]})
    (c / "h").symlink_to(home)  # a directory link out of the chart
    (c / "s.txt").symlink_to(home / "secret")  # a file link out of the chart
    (c / "files").mkdir()
    (c / "files" / "inner.txt").write_text("inside-value\n")
    (c / "alias.txt").symlink_to(c / "files" / "inner.txt")  # stays inside: rendered as its content
    for fmt in ("json", "sarif", "github", "text"):
        p = run(["check", "--isolated", "--no-cache", "--format", fmt, "--helm-chart", "app"], tmp_path, env)
        assert not leaked(p.stdout + p.stderr), (fmt, p.stdout[-3000:], p.stderr[-3000:])
        assert p.returncode in (0, 1), (fmt, p.returncode, p.stderr[-2000:])
        assert "Traceback" not in p.stderr
    got = findings(run(["check", "--isolated", "--no-cache", "--format", "json", "--helm-chart", "app"],
                       tmp_path, env))
    (dropped,) = [f for f in got if f["rule"] == "DRA007"]
    assert dropped["severity"] == "info" and "app/h" in dropped["message"] and "app/s.txt" in dropped["message"]
    assert "alias.txt" not in dropped["message"]
    if how == "names":
        assert any("`inside-value`" in f["message"] for f in got)  # a link inside the chart still works


@needs_sdk
def test_chart_symlink_loop_ends_at_once(tmp_path: Path, env: dict[str, str]) -> None:
    c = chart(tmp_path, {"pod.yaml": GPU_POD})
    (c / "loop").symlink_to(".")
    (c / "templates" / "again").symlink_to("..")
    (c / "a").symlink_to("b")
    (c / "b").symlink_to("a")
    start = time.monotonic()
    p = run(["check", "--isolated", "--no-cache", "--format", "json", "--helm-chart", "app"], tmp_path, env, 60)
    assert time.monotonic() - start < 30
    assert p.returncode == 1, p.stderr[-2000:]
    assert "too many levels" not in p.stderr and len(p.stderr) < 2000
    rules = sorted(f["rule"] for f in findings(p))
    assert rules == ["DRA007", "DRA201"]  # the chart rendered; the four links were left out, in one finding


# -- templates that do not end, or allocate without end ---------------------------------------------

NESTED_UNTIL = '{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}\n' + GPU_POD


@needs_sdk
def test_nested_until_is_stopped_by_the_timeout(tmp_path: Path, env: dict[str, str]) -> None:
    chart(tmp_path, {"pod.yaml": NESTED_UNTIL})
    start = time.monotonic()
    p = run(["check", "--isolated", "--no-cache", "--helm-chart", "app"], tmp_path,
            {**env, "DRALINT_RENDER_TIMEOUT": "2"}, timeout=90)
    assert time.monotonic() - start < 45
    out = render_failed(p)
    # whichever limit is reached first stops it: the wall clock, or the CPU limit (the Go renderer runs
    # several threads, so on an idle machine its CPU seconds can outrun the wall-clock ones)
    assert "did not finish within 2s" in out or "killed by SIGXCPU (the CPU time limit)" in out
    assert "Traceback" not in out


HANGING_HELM = '''\
#!{python}
"""A helm that starts a child of its own, then hangs."""
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
with open({log!r}, "w") as fh:
    fh.write(str(child.pid))
time.sleep(300)
'''


def render_failed(p: subprocess.CompletedProcess[str]) -> str:
    """A chart that does not render is one DRA009 finding at its Chart.yaml (exit 1), never a crash."""
    assert p.returncode == 1, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert "app/Chart.yaml:1:1: DRA009 [error] the chart does not render: " in p.stdout, p.stdout[-2000:]
    return p.stdout


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie waits for a parent to reap it: it runs no more


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_timeout_kills_the_renderers_whole_process_group(tmp_path: Path, env: dict[str, str]) -> None:
    chart(tmp_path, {"pod.yaml": GPU_POD})
    fake, log = tmp_path / "helm", tmp_path / "child.pid"
    fake.write_text(HANGING_HELM.format(python=sys.executable, log=str(log)))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    p = run(["check", "--isolated", "--no-cache", "--helm-chart", "app"], tmp_path,
            {**env, "DRALINT_HELM": str(fake), "DRALINT_RENDER_TIMEOUT": "3"}, timeout=90)
    assert "did not finish within 3s" in render_failed(p)
    pid = int(log.read_text())
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid), "the renderer's own child outlived the timeout"


@needs_sdk
def test_until_2e9_does_not_abort_dralint(tmp_path: Path, env: dict[str, str]) -> None:
    chart(tmp_path, {"cm.yaml": "kind: ConfigMap\napiVersion: v1\nmetadata: {name: c}\n"
                                "data: {n: '{{ len (until 2000000000) }}'}\n"})
    p = run(["check", "--isolated", "--no-cache", "--helm-chart", "app"], tmp_path, env, timeout=120)
    out = render_failed(p)
    # dralint reports the renderer's crash as the chart's DRA009, cut short (not a whole goroutine dump)
    assert "out of memory" in out or "killed by" in out
    assert len(out) < 3000 and "Traceback" not in out + p.stderr


@needs_sdk
def test_a_long_fail_message_is_cut(tmp_path: Path, env: dict[str, str]) -> None:
    chart(tmp_path, {"cm.yaml": '{{ fail (repeat 100000 "x") }}\n'})
    p = run(["check", "--isolated", "--no-cache", "--helm-chart", "app"], tmp_path, env)
    out = render_failed(p)
    assert "xxxxxxxx" in out  # the message is kept…
    assert len(out) < 3000 and "more characters not shown" in out  # …but not all of it


def test_a_bad_timeout_setting_is_a_clear_error(tmp_path: Path, env: dict[str, str]) -> None:
    chart(tmp_path, {"pod.yaml": GPU_POD})
    for bad in ("soon", "0", "nan"):
        p = run(["check", "--isolated", "--no-cache", "--helm-chart", "app"], tmp_path,
                {**env, "DRALINT_RENDER_TIMEOUT": bad})
        assert p.returncode == 2 and "DRALINT_RENDER_TIMEOUT" in p.stderr, (bad, p.stderr[-2000:])


# -- what the renderer process gets ------------------------------------------------------------------

PROBE = '''\
#!{python}
"""A stand-in renderer ({what}) that records the process it runs in, then prints one Pod."""
import json, os, resource, shutil, stat, sys
names = ["RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_CPU", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_CORE"]
st, null = os.fstat(0), os.stat(os.devnull)
home = os.environ.get("HOME", "")
record = {{
    "argv": sys.argv[1:],
    "env": dict(os.environ),
    "limits": {{n: resource.getrlimit(getattr(resource, n)) for n in names}},
    "netns": os.readlink("/proc/self/ns/net"),
    "git": shutil.which("git"),
    "stdin_is_null": stat.S_ISCHR(st.st_mode) and st.st_rdev == null.st_rdev,
    "own_session": os.getsid(0) == os.getpid(),
    "home_files": sorted(str(p) for p in __import__("pathlib").Path(home).rglob("*") if p.is_file()) if home else None,
    "plugins": os.listdir(os.environ["HELM_PLUGINS"]) if os.path.isdir(os.environ.get("HELM_PLUGINS", "")) else None,
}}
with open({log!r}, "w") as fh:
    json.dump(record, fh)
sys.stdout.write({pod!r})
'''

ALLOWED_ENV = {
    "PATH", "HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
    "HELM_CONFIG_HOME", "HELM_CACHE_HOME", "HELM_DATA_HOME", "HELM_PLUGINS", "KUBECONFIG",
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
    "LC_CTYPE",  # set by the probe's own Python (locale coercion), not by dralint
}


def probe(path: Path, what: str, log: Path) -> Path:
    pod = GPU_POD if what == "kustomize" else "---\n# Source: app/templates/pod.yaml\n" + GPU_POD
    path.write_text(PROBE.format(python=sys.executable, what=what, log=str(log), pod=pod))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("renderer", ["helm", "kustomize"])
def test_the_renderer_gets_no_secret_no_home_no_git_and_limits(tmp_path: Path, env: dict[str, str],
                                                               home: Path, renderer: str) -> None:
    chart(tmp_path, {"pod.yaml": GPU_POD})
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    (tmp_path / "overlay" / "pod.yaml").write_text(GPU_POD)
    bindir, log = tmp_path / "bin", tmp_path / "probe.json"
    bindir.mkdir()
    fake = probe(bindir / renderer, renderer, log)
    run_env = {**env, "DRALINT_RENDER_TIMEOUT": "30", "KUBECONFIG": str(home / "kubeconfig")}
    if renderer == "helm":
        run_env["DRALINT_HELM"] = str(fake)
        args = ["--helm-chart", "app"]
    else:
        run_env["PATH"] = f"{bindir}{os.pathsep}{os.environ['PATH']}"  # found before any real kustomize
        args = ["overlay"]
    p = run(["check", "--isolated", "--no-cache", "--format", "json", *args], tmp_path, run_env)
    assert p.returncode == 1, p.stderr[-2000:]
    seen = json.loads(log.read_text())
    child_env: dict[str, str] = seen["env"]
    # nothing of ours: no secret, no HOME, no kubeconfig, no PATH
    assert set(child_env) <= ALLOWED_ENV, set(child_env) - ALLOWED_ENV
    assert not leaked(json.dumps(child_env)) and str(home) not in json.dumps(child_env)
    assert child_env["HOME"] != os.path.expanduser("~") and seen["home_files"] == []
    assert seen["plugins"] == [] and not os.path.exists(child_env["KUBECONFIG"])
    private = os.path.dirname(child_env["HOME"])  # the sandbox's own temporary directory
    assert seen["git"] is None and all(d.startswith(private) for d in child_env["PATH"].split(os.pathsep))
    assert seen["stdin_is_null"] and seen["own_session"]
    limits = seen["limits"]
    assert 0 < limits["RLIMIT_AS"][1] <= 2 << 30 and 0 < limits["RLIMIT_DATA"][1] <= 2 << 30
    assert 0 < limits["RLIMIT_CPU"][0] <= 30 and limits["RLIMIT_CORE"] == [0, 0]
    assert 0 < limits["RLIMIT_FSIZE"][1] <= 1 << 30 and limits["RLIMIT_NPROC"][1] > 0
    if renderer == "kustomize":
        assert {"--enable-helm=false", "--enable-alpha-plugins=false"} <= set(seen["argv"])
    from dralint.inputs import sandbox

    if sandbox_network() != sandbox.SHARED:
        assert seen["netns"] != os.readlink("/proc/self/ns/net")


def sandbox_network() -> str:
    """How the sandbox cuts a child off the network on this machine (it depends on privileges)."""
    from dralint.inputs import sandbox

    return sandbox.run_sandboxed([sys.executable, "-I", "-c", "pass"], cwd=REPO, timeout=30).network


@needs_sdk
def test_the_sdk_renders_in_a_sandboxed_child(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    from dralint.cli.app import main
    from dralint.inputs import sandbox

    calls: list[tuple[list[str], dict[str, Any]]] = []
    real = sandbox.run_sandboxed

    def spy(argv: list[str], **kw: Any) -> sandbox.Outcome:
        calls.append((list(argv), kw))
        return real(argv, **kw)

    monkeypatch.setattr(sandbox, "run_sandboxed", spy)
    monkeypatch.setenv("DRALINT_HELM", "sdk")
    monkeypatch.chdir(FIXTURES)
    assert main(["check", "--isolated", "--format", "json", "--helm-chart", "chart/gpu-app"]) == 1
    assert json.loads(capsys.readouterr().out)["summary"]["by_rule"] == {"DRA201": 1}
    assert len(calls) == 2  # the plain render, then the instrumented one for template positions
    for argv, kw in calls:
        assert argv[:3] == [sys.executable, "-I", "-B"] and argv[3].endswith("_render_child.py")
        assert kw["timeout"] == sandbox.DEFAULT_TIMEOUT and not Path(kw["cwd"]).is_relative_to(FIXTURES)


# -- the network -------------------------------------------------------------------------------------


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP server on 127.0.0.1 that records every connection it receives."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    hits: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    hits.append(conn.recv(200) or b"(connected)")
                except OSError:
                    hits.append(b"(connected)")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], hits
    stop.set()
    t.join(5)
    srv.close()


@needs_sdk
def test_a_schema_ref_to_a_local_server_gets_no_connection(tmp_path: Path, env: dict[str, str],
                                                           listener: tuple[int, list[bytes]]) -> None:
    port, hits = listener
    c = chart(tmp_path, {"pod.yaml": GPU_POD})
    (c / "values.schema.json").write_text(json.dumps({"$ref": f"http://127.0.0.1:{port}/schema.json"}))
    p = run(["check", "--isolated", "--no-cache", "--helm-chart", "app"], tmp_path, env)
    assert p.returncode in (1, 2) and "Traceback" not in p.stderr, p.stderr[-2000:]
    time.sleep(0.5)
    assert hits == []


def test_a_sandboxed_child_cannot_reach_a_local_server(tmp_path: Path, listener: tuple[int, list[bytes]]) -> None:
    """The containment itself, whatever refuses URLs before rendering."""
    from dralint.inputs import sandbox

    port, hits = listener
    code = f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), 2)\n    print('connected')\n" \
           "except OSError as e:\n    print('refused', e)"
    out = sandbox.run_sandboxed([sys.executable, "-I", "-c", code], cwd=tmp_path, timeout=30)
    if out.network == sandbox.SHARED:
        pytest.skip("this OS lets an unprivileged process make no network namespace")
    time.sleep(0.5)
    assert out.stdout.startswith(b"refused") and hits == []


# -- the guard of test_security sees the renderers too -----------------------------------------------

# starts from the guard of tests/test_security.py (network and exec denied, and logged), then lets a
# process start only from dralint/inputs/sandbox.py, logging what it was given
SPAWN_GUARD = "import subprocess as _sp\n_real_init = _sp.Popen.__init__\n" + GUARD + '''
import json, traceback

def _spawn(self, args, *rest, **kwargs):
    callers = [f.filename for f in traceback.extract_stack()[:-1]]
    allowed = any(c.replace(os.sep, "/").endswith("dralint/inputs/sandbox.py") for c in callers)
    with open(_log, "a") as fh:
        fh.write(json.dumps({"allowed": allowed, "argv": [str(a) for a in args],
                             "env": kwargs.get("env"), "session": kwargs.get("start_new_session"),
                             "preexec": kwargs.get("preexec_fn") is not None}) + "\\n")
    if not allowed:
        raise PermissionError("guard: a process started outside dralint.sandbox")
    return _real_init(self, args, *rest, **kwargs)

subprocess.Popen.__init__ = _spawn
'''


@needs_sdk
def test_every_renderer_starts_through_the_sandbox(tmp_path: Path, env: dict[str, str]) -> None:
    site, log = tmp_path / "guard", tmp_path / "guard.log"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SPAWN_GUARD)
    log.write_text("")
    guarded = {**env, "PYTHONPATH": f"{site}{os.pathsep}{REPO}", "DRALINT_GUARD_LOG": str(log)}
    chart(tmp_path, {"pod.yaml": GPU_POD})
    runs = [["--helm-chart", "app"]]
    if KUSTOMIZE is not None:
        (tmp_path / "overlay").mkdir()
        (tmp_path / "overlay" / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
        (tmp_path / "overlay" / "pod.yaml").write_text(GPU_POD)
        runs.append(["overlay"])
    for args in runs:
        p = run(["check", "--isolated", "--no-cache", *args], tmp_path, guarded)
        assert p.returncode == 1 and "guard:" not in p.stderr, (args, p.stderr[-2000:])
    lines = log.read_text().splitlines()
    assert all(line.startswith("{") for line in lines), lines  # nothing denied (connect, exec, …)
    spawns = [json.loads(line) for line in lines]
    # the Helm SDK too (it no longer runs inside dralint); a chart renders twice (plain, instrumented)
    assert len(spawns) == len(runs) + 1, spawns
    for s in spawns:
        assert s["allowed"] and s["session"] and s["preexec"]
        assert not leaked(json.dumps(s["env"])) and s["env"]["HOME"] != env["HOME"]
