"""Every run is bounded, whatever a pull request commits: a `.dralint.yaml` pattern cannot make
matching hang (RE2), `jobs` cannot fork more workers than there are cores, and a CEL selector
cannot make one evaluation build more than the cost limit pays for (memory stays bounded).

The hang and memory tests run dralint in a subprocess with a timeout or an address-space limit,
so that the unfixed behaviour fails the test instead of hanging or exhausting the test run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from dralint.cli.app import cli
from dralint.engine.config import build_config, load_config
from dralint.engine.pipeline import choose_jobs

from .conftest import codes, lint_text

GPU = 'device.attributes["gpu.nvidia.com"].productName'
LONG = 40_000  # characters of the hostile inventory attribute (Kubernetes allows 64)


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}


def _pod(resource: str) -> str:
    return textwrap.dedent(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: p, namespace: ml}}
        spec:
          containers:
          - name: c
            image: registry.example/app:1
            resources:
              limits: {{{resource}: 1}}
        """)


# -------------------------------------------------------------------------------------------------
# patterns from the configuration


def test_catastrophic_pattern_finishes(tmp_path: Path) -> None:
    # Python's `re` backtracks exponentially on this pattern: over a minute for one 60-character name
    (tmp_path / ".dralint.yaml").write_text(
        "extended-resources:\n  - {pattern: '(a|aa)+$b', device-class: x.example.com}\n")
    (tmp_path / "pod.yaml").write_text(_pod("a" * 60))
    try:
        p = subprocess.run([sys.executable, "-m", "dralint", "check", "--no-cache", "pod.yaml"], cwd=tmp_path,
                           env=_env(tmp_path), capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail("matching one resource name against the configured pattern did not finish in 10 s")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize(("pattern", "problem"), [
    ("amd\\.com/(gpu", "missing )"),  # not a regular expression at all
    ("(a)\\1", "invalid escape sequence"),  # a back-reference: Python accepts it, RE2 cannot match it in linear time
    ("(?=amd)amd\\.com/gpu", "invalid perl operator"),  # look-ahead: the same
])
def test_invalid_pattern_is_a_configuration_error(tmp_path: Path, pattern: str, problem: str) -> None:
    cfg = tmp_path / ".dralint.yaml"
    cfg.write_text("extended-resources:\n"
                   f"  - {{pattern: '{pattern}', device-class: gpu.amd.com}}\n")
    (tmp_path / "pod.yaml").write_text(_pod("amd.com/gpu"))
    r = CliRunner().invoke(cli, ["check", "--no-cache", "--config", str(cfg), str(tmp_path / "pod.yaml")])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert str(cfg) in r.output and "extended-resources.0.pattern" in r.output and problem in r.output


def test_pattern_error_in_pyproject_names_the_file(tmp_path: Path) -> None:
    pp = tmp_path / "pyproject.toml"
    pp.write_text("[tool.dralint]\nextended-resources = [{pattern = 'x(', device-class = 'x.example.com'}]\n")
    r = CliRunner().invoke(cli, ["check", "--no-cache", "--config", str(pp), str(tmp_path)])
    assert r.exit_code == 2 and str(pp) in r.output and "extended-resources.0.pattern" in r.output, r.output


def test_patterns_still_match_whole_names() -> None:
    extra = {"extended-resources": [{"pattern": r"amd\.com/gpu", "device-class": "gpu.amd.com"}]}
    assert codes(lint_text(_pod("amd.com/gpu"), select=["DRA201"], **extra)) == ["DRA201"]
    # a full match, as documented: neither a prefix nor a substring counts
    assert codes(lint_text(_pod("amd.com/gpu-extra"), select=["DRA201"], **extra)) == []
    assert codes(lint_text(_pod("x.amd.com/gpu"), select=["DRA201"], **extra)) == []
    # the built-in patterns (named groups included) work under RE2 too
    [f] = lint_text(_pod("nvidia.com/mig-1g.5gb"), select=["DRA202"]).findings
    assert "1g.5gb" in f.message


# -------------------------------------------------------------------------------------------------
# worker count


def _cores() -> int:
    if sys.version_info >= (3, 13):
        return os.process_cpu_count() or 1
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def test_jobs_from_config_are_capped(tmp_path: Path) -> None:
    (tmp_path / ".dralint.yaml").write_text("jobs: 400\n")
    cfg = load_config(cwd=tmp_path)
    assert cfg.jobs == _cores() and cfg.jobs_requested == 400
    small = build_config({"jobs": 1}, None, tmp_path)
    assert small.jobs == 1 and small.jobs_requested is None
    assert build_config({"jobs": 0}, None, tmp_path).jobs == 0  # 0 still means "choose"


def test_jobs_follow_the_affinity_mask(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    if sys.version_info >= (3, 13):
        monkeypatch.setattr(os, "process_cpu_count", lambda: 3)
    cfg = build_config({}, None, tmp_path)
    cfg.set_jobs(400)
    assert (cfg.jobs, cfg.jobs_requested) == (3, 400)
    # API callers that pass jobs straight to the engine are capped as well
    assert choose_jobs(400, 10**9, 10_000) == 3


def test_verbose_run_shows_the_capped_worker_count(tmp_path: Path) -> None:
    cores = _cores()
    (tmp_path / ".dralint.yaml").write_text("jobs: 400\n")
    for i in range(cores + 3):  # more files than cores: the unfixed code started one worker per file
        (tmp_path / f"pod{i}.yaml").write_text(_pod("nvidia.com/gpu"))
    p = subprocess.run([sys.executable, "-m", "dralint", "check", "--no-cache", "--verbose", "."], cwd=tmp_path,
                       env=_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    run = next(line for line in p.stderr.splitlines() if line.strip().startswith("run:"))
    workers = int(run.split("jobs ")[1].split(",")[0])
    assert 1 <= workers <= cores, run
    assert f"400 requested, capped at {cores}" in p.stderr


# -------------------------------------------------------------------------------------------------
# CEL: what an evaluation builds is paid for before it is built

_NEST = f"cel.bind(a, [{', '.join([GPU] * 10)}], cel.bind(b, [{', '.join(['a'] * 10)}], " \
        f"cel.bind(c, [{', '.join(['b'] * 10)}], cel.bind(d, [{', '.join(['c'] * 10)}], " \
        "'%s'.format([d]).size() > 0))))"

BLOWUPS = {
    # 40,000 one-character strings joined with a 40,000-character separator: 1.6 G characters
    "split-join": f'{GPU}.split("").join({GPU}) == ""',
    # the attribute around every one of its own characters: 1.6 G characters
    "replace-empty": f'{GPU}.replace("", {GPU}) == ""',
    # 8 M characters per call (under the old per-call cap), 150 of them kept in a list
    "replace": f'lists.range(150).map(i, {GPU}.replace("x", "{"y" * 200}")).size() > 0',
    # %s of a list of lists that share their parts: 400 M characters printed from 40 list elements
    "format": _NEST,
    # 30,000 copies of 40,000 characters (each call alone is small)
    "quote": f"lists.range(30000).map(i, strings.quote({GPU})).size() > 0",
    "upperAscii": f"lists.range(30000).map(i, {GPU}.upperAscii()).size() > 0",
    # a 1000-element literal per iteration, kept in the result: 100 M list elements
    "map-literal": f"lists.range(100000).map(i, [{', '.join(['1'] * 1000)}]).size() > 0",
    # 1000 references to a 100-element list, each flattened 1000 times over: 100 M elements
    "flatten": "cel.bind(a, lists.range(1000).map(i, lists.range(100)), a.map(i, a).flatten(2).size() > 0)",
}

_EVAL = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GiB: the unfixed evaluator needs more
from dralint.cel import CelError, Environment
from dralint.cel.runtime import Device, DomainMap
device = Device(driver="gpu.nvidia.com", attributes=DomainMap({"gpu.nvidia.com": {"productName": "x" * %d}}),
                capacity=DomainMap({}))
prog = Environment.for_target("1.37", {}).compile(sys.argv[1])
assert prog.ast is not None, prog.diags
try:
    print("result", prog.evaluate(device))
except CelError as e:
    print("error", e)
# the high-water mark of this process's own memory: ru_maxrss would also count the parent's size at
# fork (Linux keeps it across exec), which is pytest's, not the evaluator's
try:
    hwm = next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmHWM:"))
except (OSError, StopIteration):
    hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("maxrss_kib", hwm)
"""


@pytest.mark.parametrize("expr", BLOWUPS.values(), ids=BLOWUPS.keys())
def test_cel_building_is_charged_before_it_happens(tmp_path: Path, expr: str) -> None:
    p = subprocess.run([sys.executable, "-c", _EVAL % LONG, expr], env=_env(tmp_path), capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    out = dict(line.split(" ", 1) for line in p.stdout.splitlines())
    assert out.get("error") == "operation cancelled: actual cost limit exceeded", p.stdout
    assert int(out["maxrss_kib"]) < 300 * 1024, p.stdout  # the cost limit allows ~10 M characters, not GBs


@pytest.mark.parametrize(("expr", "want"), [
    ('"a,b,c".split(",").size() == 3 && "a,b".split(",", 1) == ["a,b"]', True),
    ('["a", "b"].join("-") == "a-b" && "abc".replace("b", "xx") == "axxc"', True),
    ("'%s-%d'.format(['x', 7]) == 'x-7' && strings.quote('a\"b') == '\"a\\\\\"b\"'", True),
    ("'Ab'.upperAscii() == 'AB' && [[1], [2, [3]]].flatten() == [1, 2, [3]] && lists.range(3) == [0, 1, 2]", True),
    ("[1, 2] + [3] == [1, 2, 3] && 'a' + 'b' == 'ab' && {1: 'x', 2: 'y'}.size() == 2", True),
])
def test_small_values_still_evaluate(expr: str, want: bool) -> None:
    from dralint.cel import Environment

    prog = Environment.for_target("1.37", {}).compile(expr)
    assert prog.ast is not None, prog.diags
    assert prog.evaluate({}) is want


def test_repeated_map_keys_are_found_without_comparing_every_pair() -> None:
    from dralint.cel import CelError, Environment

    env = Environment.for_target("1.37", {})
    for expr in ("{1: 'a', 1u: 'b'}.size() == 2", "{'k': 1, 'k': 2}.size() == 1"):
        with pytest.raises(CelError, match="repeated key"):
            env.compile(expr).evaluate({})
    assert env.compile("{'a': 1, 'b': 2, 3: 4}.size() == 3").evaluate({}) is True


def test_estimator_refuses_join_like_the_api_server() -> None:
    from dralint.cel import Environment

    env = Environment.for_target("1.37", {})
    for expr in ('"a,b".split(",").join("-") == "a-b"', f'{GPU}.split("").join("") == ""'):
        prog = env.compile(expr)
        assert [d.code for d in prog.diags] == ["cost"] and "unbounded" in prog.diags[0].message
    # what the Kubernetes estimator accepts stays accepted
    for expr in (f'{GPU}.replace(" ", "-") == "a-b"', f'{GPU}.lowerAscii().split(" ").size() > 1',
                 f'"%s".format([{GPU}]) == "x"', f"strings.quote({GPU}) != ''"):
        assert env.compile(expr).ok, expr


def test_inventory_blowup_is_a_cost_finding(tmp_path: Path) -> None:
    """End to end: a committed claim and inventory, a 1 GiB address-space limit, a finding and exit 1."""
    (tmp_path / "slices.yaml").write_text(textwrap.dedent(f"""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceSlice
        metadata: {{name: node-a-gpu}}
        spec:
          driver: gpu.nvidia.com
          nodeName: node-a
          pool: {{name: node-a, generation: 1, resourceSliceCount: 1}}
          devices:
          - name: gpu-0
            attributes:
              type: {{string: gpu}}
              productName: {{string: {"x" * LONG}}}
        """))
    (tmp_path / "claim.yaml").write_text(textwrap.dedent(f"""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {{name: gpu, namespace: ml}}
        spec:
          spec:
            devices:
              requests:
              - name: gpu
                exactly:
                  deviceClassName: gpu.nvidia.com
                  selectors:
                  - cel: {{expression: '{BLOWUPS["split-join"]}'}}
        """))

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    p = subprocess.run([sys.executable, "-m", "dralint", "check", "--no-cache", "--select", "DRA403,DRA605",
                        "--inventory", "slices.yaml", "claim.yaml"], cwd=tmp_path, env=_env(tmp_path),
                       capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert p.returncode == 1, (p.stdout, p.stderr[-2000:])
    assert "DRA605" in p.stdout  # refused by the estimator, as the API server would
    assert "DRA403" in p.stdout and "actual cost limit exceeded" in p.stdout  # and stopped at run time



def test_memos_keyed_by_file_text_keep_only_short_strings() -> None:
    """A run-wide memo keyed by text from the linted files must not keep a huge string alive after
    its file is gone: the defaults plan (keyed by kind and version) and the scalar emitter (keyed by
    value) memoise only short keys, and still answer the same for long ones."""
    from dralint.checks import admission
    from dralint.fix import emit

    huge = "K" * 100_000
    admission._memo_plan.cache_clear()
    assert admission._plan(huge, "v1", "1.35") == admission._make_plan(huge, "v1", "1.35")
    assert admission._memo_plan.cache_info().currsize == 0
    assert admission._plan("ResourceClaim", "v1", "1.35")  # a real kind has defaults, and is memoised
    assert admission._memo_plan.cache_info().currsize == 1
    emit._memo_scalar.cache_clear()
    assert emit.format_scalar(huge) == huge
    assert emit._memo_scalar.cache_info().currsize == 0
    assert emit.format_scalar("gpu-claim") == "gpu-claim"
    assert emit._memo_scalar.cache_info().currsize == 1


@pytest.mark.parametrize("command", [["check"], ["fix"], ["migrate"], ["check", "--fix"]])
def test_standard_input_over_the_size_limit_is_refused_whole(tmp_path: Path, command: list[str]) -> None:
    """``-`` is read no further than the file size limit; more is a usage error and nothing is written
    (`fix -` writes its input back: a copy cut at the limit would lose the rest of it)."""
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x\n" \
          "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    env = {**os.environ, "NO_COLOR": "1"}

    def run(text: str, limit: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "dralint", *command, "--isolated", "--no-cache",
                               "--max-file-size", str(limit), "-"], input=text, cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)

    over = run(pod, len(pod.encode()) - 1)
    assert over.returncode == 2, over.stderr
    assert "standard input holds more than" in over.stderr and "Traceback" not in over.stderr
    assert over.stdout == ""  # no report, and no copy of the input
    within = run(pod, 4096)  # room for what fix and migrate add too
    assert within.returncode in (0, 1), within.stderr
    assert within.stdout  # a report, or the input fixed or migrated


def test_merging_many_aliases_of_a_large_mapping_stops_at_the_expansion_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # `<<: [*a, *a, ...]` copies a's keys once per alias: without a check before each copy, a text of a few
    # megabytes costs minutes (the number of aliases times the number of keys) before the size is judged
    from dralint.inputs import load

    calls = 0
    walk = load._Walker.walk

    def counting(self: load._Walker, n: object, depth: int) -> object:
        nonlocal calls
        calls += 1
        return walk(self, n, depth)  # type: ignore[arg-type]

    monkeypatch.setattr(load._Walker, "walk", counting)
    monkeypatch.setattr(load, "NATIVE", None)  # the Python path; the native one bails to it on the same count
    text = ("a: &a {" + ", ".join(f"k{i}: {i}" for i in range(100)) + "}\n"
            "b: {<<: [" + ", ".join(["*a"] * 10_000) + "]}\n")
    sf = load.load_bytes("m.yaml", text.encode(), load.Limits(max_expanded_nodes=5_000))
    assert [(p.code, p.span.line) for p in sf.problems] == [("DRA005", 2)]
    assert "expands to more than 5,000 nodes" in sf.problems[0].message
    assert calls < 100  # about 50 aliases merged before the refusal, not 10,000
