"""The fix engine: edits land exactly where they should, every other byte stays, and a file is only
written when every gate holds (noop inputs, CRLF/BOM, comments, anchors, flow, block scalars,
markers and directives, Helm output, conflicts, the pass cap, gate failures, interrupted writes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from dralint.cli.app import main
from dralint.engine.config import build_config
from dralint.engine.runner import Result
from dralint.fix import loop, splice
from dralint.fix.edits import EditError
from dralint.fix.loop import fix_files, fix_source
from dralint.fix.splice import Refuse, edit_region, file_comments
from dralint.fix.write import atomic_write
from dralint.inputs.load import SourceFile, load_bytes
from dralint.model import Applicability, Edit, Finding, Fix, JsonPath, Severity, Span, to_plain

from .conftest import REPO

ALL = build_config({"select": ["ALL"]}, None, REPO)


def cfg(*codes: str) -> Any:
    return build_config({"select": list(codes)}, None, REPO)


def crlf(s: str) -> str:
    return s.replace("\n", "\r\n")


def bom(s: str) -> bytes:
    return b"\xef\xbb\xbf" + s.encode()


# ----------------------------------------------------------------------------------------------
# noop: inputs that must come back byte for byte (asottile's test_noop_*)

TRICKY = """%YAML 1.1
# header comment
--- # marker comment
apiVersion: v1
kind: ConfigMap
metadata:
  name: tricky   # the name
  labels: {app: x, tier: "backend"}
  annotations:
    note: 'it''s'
    url: http://example.com/#frag
data:
  script: |
    #!/bin/sh
    echo "hi"   # not a comment
  folded: >-
    a long
    line
  kept: |+
    keep

  octal: "0755"
  list: ["--port", "8080"]
...
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: &meta
    name: svc
    labels:
        deep: indent
- apiVersion: v1
  kind: Service
  metadata:
    <<: *meta
    name: other
"""

NOOPS = {
    "tricky": TRICKY,
    "empty": "",
    "comments-only": "# nothing here\n",
    "no-trailing-newline": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x",
    "dra-v1": (REPO / "rules" / "DRA309-pod-claim-source" / "good.yaml").read_text(),
    "tabs-and-unicode": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: é\ndata:\n  a: \"tab\\there\"\n",
    "json": '{\n  "apiVersion": "v1",\n  "kind": "Namespace",\n  "metadata": {"name": "x"}\n}\n',
}


@pytest.mark.parametrize("variant", ["lf", "crlf", "bom-crlf"])
@pytest.mark.parametrize("name", sorted(NOOPS))
def test_noop(name: str, variant: str) -> None:
    text = NOOPS[name]
    raw = text.encode() if variant == "lf" else (crlf(text).encode() if variant == "crlf" else bom(crlf(text)))
    path = "x.json" if name == "json" else "x.yaml"
    run = fix_source(raw, ALL, unsafe=True, path=path)
    out = run.files[0]
    assert out.failures == []
    assert out.after == raw
    assert not out.changed


# ----------------------------------------------------------------------------------------------
# one fix on one document: exact text


POD = """apiVersion: v1
kind: Pod
metadata:
  name: worker  # the name
  labels: {app: x, tier: "backend"}
spec:
  resourceClaims:
  - name: gpu
    source:
      resourceClaimTemplateName: one-gpu
  containers:
  - name: main
    image: "cuda:12"
    args: ["--port", "8080"]
    resources:
      limits:
        nvidia.com/gpu: 1   # one gpu
        cpu: "2"
      # claims below
      claims:
      - name: gpu
        request: gpus/a
"""


def apply(text: str, *edits: Edit, base: JsonPath = ()) -> splice.RegionEdit:
    return edit_region(text, base, edits)


def changed_lines(a: str, b: str) -> tuple[list[str], list[str]]:
    import difflib

    minus, plus = [], []
    for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0):
        if line.startswith("-") and not line.startswith("---"):
            minus.append(line[1:])
        elif line.startswith("+") and not line.startswith("+++"):
            plus.append(line[1:])
    return minus, plus


def test_set_scalar_keeps_quotes_and_comment() -> None:
    r = apply(POD, Edit("set", ("spec", "containers", 0, "image"), value="cuda:13"),
              Edit("set", ("metadata", "name"), value="w2"))
    assert changed_lines(POD, r.text) == (['  name: worker  # the name', '    image: "cuda:12"'],
                                          ['  name: w2  # the name', '    image: "cuda:13"'])
    assert r.cap == Applicability.SAFE


def test_subrequest_fix_changes_one_token() -> None:
    r = apply(POD, Edit("set", ("spec", "containers", 0, "resources", "claims", 0, "request"), value="gpus"))
    assert changed_lines(POD, r.text) == (["        request: gpus/a"], ["        request: gpus"])


def test_delete_with_an_end_of_line_comment_is_unsafe() -> None:
    r = apply(POD, Edit("delete", ("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")))
    assert changed_lines(POD, r.text) == (["        nvidia.com/gpu: 1   # one gpu"], [])
    assert r.cap == Applicability.UNSAFE
    assert "# one gpu" in r.notes[0]


def test_delete_keeps_the_comment_of_the_next_key() -> None:
    r = apply(POD, Edit("delete", ("spec", "containers", 0, "resources", "limits")))
    assert "      # claims below\n      claims:" in r.text
    assert "limits" not in r.text


def test_moving_out_of_source_is_safe() -> None:
    path = ("spec", "resourceClaims", 0)
    r = apply(POD, Edit("delete", (*path, "source")), Edit("insert", path, key="resourceClaimTemplateName",
                                                              value="one-gpu"))
    assert changed_lines(POD, r.text) == (["    source:", "      resourceClaimTemplateName: one-gpu"],
                                          ["    resourceClaimTemplateName: one-gpu"])
    assert r.cap == Applicability.SAFE


def test_insert_into_flow_mapping_stays_flow_and_quotes_like_the_document() -> None:
    r = apply(POD, Edit("insert", ("metadata", "labels"), key="on", value="yes"))
    # `on`/`yes` are booleans to a YAML 1.1 reader (Kubernetes): both must be quoted
    assert '  labels: {app: x, tier: "backend", "on": "yes"}' in r.text


def test_append_to_flow_sequence_keeps_the_quoting_of_its_items() -> None:
    r = apply(POD, Edit("append", ("spec", "containers", 0, "args"), value="--x"))
    assert '    args: ["--port", "8080", "--x"]' in r.text


def test_insert_before_the_first_key_of_an_item() -> None:
    r = apply(POD, Edit("insert", ("spec", "containers", 0), key="first", value={"a": [1]}, index=0))
    assert "  - first:\n      a:\n      - 1\n    name: main\n" in r.text


def test_delete_the_first_key_of_an_item_pulls_the_next_one_up() -> None:
    r = apply(POD, Edit("delete", ("spec", "containers", 0, "name")))
    assert '  - image: "cuda:12"\n    args:' in r.text


def test_append_creates_parents_with_a_comment() -> None:
    r = apply(POD, Edit("append", ("spec", "containers", 0, "env"), value={"name": "A", "value": "1"},
                        comment="added"))
    assert r.text.endswith("    env:\n    - name: A  # added\n      value: \"1\"\n")


def test_set_creates_missing_parents() -> None:
    r = apply(POD, Edit("set", ("spec", "nodeSelector", "kubernetes.io/os"), value="linux"))
    assert r.text.endswith("  nodeSelector:\n    kubernetes.io/os: linux\n")


def test_rename_keeps_the_key_quotes() -> None:
    text = 'a:\n  "old": 1  # c\n'
    assert apply(text, Edit("rename", ("a", "old"), key="new")).text == 'a:\n  "new": 1  # c\n'


def test_missing_path_is_an_edit_error() -> None:
    with pytest.raises(EditError):
        apply(POD, Edit("delete", ("spec", "nope")))
    with pytest.raises(EditError):
        apply(POD, Edit("wrap", ("spec", "containers", 0), key="image", value=["args"]))


REQUEST = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: t
spec:
  spec:
    devices:
      requests:
      - name: gpu
        # which class
        deviceClassName: gpu.nvidia.com  # the GPU class
        count: 2
        selectors:
        - cel:
            expression: |-
              device.attributes['gpu.nvidia.com'].productname == 'A100'
      - deviceClassName: mig.nvidia.com
        name: mig
"""


def test_wrap_moves_keys_with_their_comments() -> None:
    r = apply(REQUEST, Edit("wrap", ("spec", "spec", "devices", "requests", 0), key="exactly",
                            value=["deviceClassName", "count", "selectors"]))
    assert r.text.split("requests:\n")[1].startswith(
        "      - name: gpu\n"
        "        # which class\n"
        "        exactly:\n"
        "          deviceClassName: gpu.nvidia.com  # the GPU class\n"
        "          count: 2\n"
        "          selectors:\n"
        "          - cel:\n"
        "              expression: |-\n"
        "                device.attributes['gpu.nvidia.com'].productname == 'A100'\n")
    assert r.cap == Applicability.SAFE


def test_wrap_of_the_first_key_on_a_dash_line() -> None:
    r = apply(REQUEST, Edit("wrap", ("spec", "spec", "devices", "requests", 1), key="exactly",
                            value=["deviceClassName"]))
    assert r.text.endswith("      - exactly:\n          deviceClassName: mig.nvidia.com\n        name: mig\n")


def test_block_scalar_keeps_its_style() -> None:
    path = ("spec", "spec", "devices", "requests", 0, "selectors", 0, "cel", "expression")
    r = apply(REQUEST, Edit("set", path, value="device.attributes['gpu.nvidia.com'].productName == 'A100'"))
    assert changed_lines(REQUEST, r.text) == (
        ["              device.attributes['gpu.nvidia.com'].productname == 'A100'"],
        ["              device.attributes['gpu.nvidia.com'].productName == 'A100'"])


def test_folded_and_quoted_expressions_keep_their_style() -> None:
    text = ("a: >-\n  device.attributes['x'].productname\n  == 'A100'\n"
            "b: 'device.attributes[\"x\"].productname == \"A\"'\n"
            "c: |\n  line one\n  line two\n")
    r = apply(text, Edit("set", ("a",), value="device.attributes['x'].productName == 'A100'"),
              Edit("set", ("b",), value='device.attributes["x"].productName == "A"'),
              Edit("set", ("c",), value="line one\nline 2\n"))
    assert r.text == ("a: >-\n  device.attributes['x'].productName\n  == 'A100'\n"
                      "b: 'device.attributes[\"x\"].productName == \"A\"'\n"
                      "c: |\n  line one\n  line 2\n")


SLICE = """apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata:
  name: s
spec:
  driver: gpu.nvidia.com
  devices:
  - name: gpu-0
    basic:  # v1beta1 shape
      attributes:
        type: {string: gpu}
      capacity:
        memory: {value: 80Gi}
"""


def test_unwrap_dedents_the_children() -> None:
    r = apply(SLICE, Edit("unwrap", ("spec", "devices", 0, "basic")), Edit("set", ("apiVersion",),
                                                                            value="resource.k8s.io/v1"))
    assert r.text.endswith("  - name: gpu-0\n    attributes:\n      type: {string: gpu}\n"
                           "    capacity:\n      memory: {value: 80Gi}\n")
    assert r.cap == Applicability.UNSAFE  # the `# v1beta1 shape` comment goes with the `basic:` line


def test_replace_document_keeps_comments_of_surviving_keys() -> None:
    data = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "worker", "labels": {"app": "y"}},
            "spec": {"containers": [{"name": "main", "image": "cuda:12"}]}}
    r = apply(POD, Edit("replace_document", (), value=data))
    assert "  name: worker  # the name\n  labels: {app: y}\n" in r.text
    assert r.text.endswith("  containers:\n  - name: main\n    image: \"cuda:12\"\n")


MIXED = """apiVersion: v1
kind: Pod
metadata:
  name: m
spec:
  containers:
  - name: a
    image: x
  volumes:
      - name: v
        emptyDir: {}
  tolerations:
    -   key: k
        operator: Exists
"""


def test_mixed_indentation_only_the_edited_lines_change() -> None:
    r = apply(MIXED, Edit("append", ("spec", "volumes"), value={"name": "w", "emptyDir": {}}),
              Edit("set", ("spec", "tolerations", 0, "operator"), value="Equal"))
    assert changed_lines(MIXED, r.text) == (
        ["        operator: Exists"],
        ["      - name: w", "        emptyDir: {}", "        operator: Equal"])
    assert r.cap == Applicability.SAFE


ANCHORED = """base: &b
  x: 1
use:
  <<: *b
  y: 2
alias: *b
"""


def test_edits_next_to_a_merge_key_are_spliced() -> None:
    r = apply(ANCHORED, Edit("set", ("use", "y"), value=3))
    assert r.text == ANCHORED.replace("y: 2", "y: 3") and r.cap == Applicability.SAFE


def test_overriding_a_merged_key_falls_back_to_the_round_trip() -> None:
    # the splicer will not write into the anchor; ruamel adds an explicit key and keeps the anchor
    with pytest.raises(Refuse):
        splice.Splicer(ANCHORED).set(("use", "x"), 5)
    r = apply(ANCHORED, Edit("set", ("use", "x"), value=5))
    assert r.cap == Applicability.SAFE
    assert r.text.startswith("base: &b\n  x: 1\nuse:\n  <<: *b\n")
    assert to_plain(splice._parse(r.text)) == {"base": {"x": 1}, "use": {"x": 5, "y": 2}, "alias": {"x": 1}}


def test_a_document_that_does_not_round_trip_makes_the_fallback_unsafe() -> None:
    text = ANCHORED + "list:\n-   odd spacing\n"
    r = apply(text, Edit("set", ("use", "x"), value=3))
    assert r.cap == Applicability.UNSAFE
    assert "round trip" in r.notes[0]


def test_an_edit_of_a_node_shared_through_an_alias_is_refused() -> None:
    with pytest.raises(Refuse):  # `b` is `a`: no text edit can change one without the other
        apply("a: &x {k: 1}\nb: *x\n", Edit("set", ("b", "k"), value=2))


# ----------------------------------------------------------------------------------------------
# whole files: documents, markers, line endings


MULTI = """# file header
---
apiVersion: v1
kind: ConfigMap   # first
metadata: {name: a}
---
apiVersion: v1
kind: Pod
metadata:
  name: worker
spec:
  resourceClaims:
  - name: gpu
    source:
      resourceClaimTemplateName: one-gpu
  containers:
  - name: main
    image: x
    resources:
      claims:
      - name: gpu
...
%YAML 1.1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: last
data:
  script: |
    # not a comment
"""


@pytest.mark.parametrize("variant", ["lf", "crlf", "bom-crlf"])
def test_only_the_fixed_document_changes(variant: str) -> None:
    text = MULTI if variant == "lf" else crlf(MULTI)
    raw = bom(text) if variant == "bom-crlf" else text.encode()
    out = fix_source(raw, cfg("DRA309"), path="m.yaml").files[0]
    assert out.failures == [] and dict(out.applied) == {"DRA309": 1}
    nl = "\r\n" if variant != "lf" else "\n"
    expected = text.replace(f"    source:{nl}      resourceClaimTemplateName: one-gpu{nl}",
                            f"    resourceClaimTemplateName: one-gpu{nl}")
    assert out.after == (b"\xef\xbb\xbf" if variant == "bom-crlf" else b"") + expected.encode()


def test_new_document_goes_after_the_document_end_marker() -> None:
    sf = load_bytes("m.yaml", MULTI.encode())
    doc = next(d for d in sf.documents if d.data.get("kind") == "Pod")
    pf = splice.PlannedFix("X", Fix("add", Applicability.SAFE, (
        Edit("insert_document", (), value={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n"}}),)),
        doc.index, ())
    pr = splice.apply_pass(sf, [pf], Applicability.SAFE)
    assert "      - name: gpu\n...\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n%YAML 1.1\n---\n" \
        in pr.text
    assert pr.inserted == {doc.index: 1} and pr.touched == set()


def test_document_starting_on_the_marker_line_is_skipped_not_broken() -> None:
    text = "--- {apiVersion: v1, kind: ResourceQuota, metadata: {name: q}, spec: {hard: {nvidia.com/gpu: 1}}}\n"
    out = fix_source(text, cfg("DRA205"), unsafe=True).files[0]
    assert out.after == text.encode() and out.failures == []
    assert any("`---` line" in n for n in out.notes)


def test_json_files_are_edited_as_json() -> None:
    text = ('{\n  "apiVersion": "v1",\n  "kind": "ResourceQuota",\n  "metadata": {\n    "name": "q"\n  },\n'
            '  "spec": {\n    "hard": {\n      "nvidia.com/gpu": "4"\n    }\n  }\n}\n')
    out = fix_source(text, cfg("DRA205"), unsafe=True, path="q.json").files[0]
    assert out.failures == []
    assert '      "nvidia.com/gpu": "4",\n      "gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "4"\n' \
        in out.after.decode()


# ----------------------------------------------------------------------------------------------
# the loop and the gates, driven by a stand-in rule


FakeRule = Callable[[SourceFile], list[tuple[int, JsonPath, Fix | None, str | None]]]


@pytest.fixture
def fake_rule(monkeypatch: pytest.MonkeyPatch) -> Callable[[FakeRule], None]:
    real = loop.lint_files
    quiet = cfg("DRA001")

    def install(rule: FakeRule) -> None:
        def lint(targets: Sequence[SourceFile], context: Sequence[SourceFile], config: Any) -> Result:
            res = real(targets, context, quiet)
            for sf in targets:
                for doc_index, path, fix, source in rule(sf):
                    res.findings.append(Finding("DRA999", "fake", Severity.WARNING, "fake", sf.path,
                                                Span(1, 1, 1, 1), fix=fix, doc_index=doc_index, obj_path=path,
                                                source=source))
            return res

        monkeypatch.setattr(loop, "lint_files", lint)

    return install


COUNTER = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c  # keep\ndata:\n  n: \"0\"\n  m: \"0\"\n"


def test_overlapping_fixes_wait_for_the_next_pass(fake_rule: Callable[[FakeRule], None]) -> None:
    def rule(sf: SourceFile) -> list[tuple[int, JsonPath, Fix | None, str | None]]:
        data = sf.documents[0].data["data"]
        out: list[tuple[int, JsonPath, Fix | None, str | None]] = []
        if data.get("n") == "0":
            out.append((0, ("data",), Fix("n", Applicability.SAFE, (Edit("set", ("data", "n"), value="1"),)), None))
        if data.get("m") == "0":  # touches `data` as a whole: overlaps the fix above
            out.append((0, ("data",), Fix("m", Applicability.SAFE, (Edit("set", ("data",), value={
                "n": data.get("n"), "m": "1"}),)), None))
        return out

    fake_rule(rule)
    run = fix_files([load_bytes("c.yaml", COUNTER.encode())], [], ALL)
    out = run.files[0]
    assert out.failures == []
    assert run.passes == 2
    assert out.after.decode() == COUNTER.replace('"0"', '"1"')


def test_fixes_that_never_converge_write_nothing(fake_rule: Callable[[FakeRule], None]) -> None:
    def rule(sf: SourceFile) -> list[tuple[int, JsonPath, Fix | None, str | None]]:
        n = int(sf.documents[0].data["data"]["n"])
        return [(0, ("data", "n"), Fix(f"to {n + 1}", Applicability.SAFE,
                                       (Edit("set", ("data", "n"), value=str(n + 1)),)), None)]

    fake_rule(rule)
    run = fix_files([load_bytes("c.yaml", COUNTER.encode())], [], ALL)
    out = run.files[0]
    assert run.passes == loop.MAX_PASSES
    assert out.after == COUNTER.encode() and not out.changed
    assert "did not converge after 10 passes" in out.failures[0].reason
    assert out.failures[0].rules == ["DRA999"]


@pytest.mark.parametrize(("edit", "why"), [
    (Edit("set", ("metadata", "name"), value="other"), "identity"),
    (Edit("delete", ("data", "missing")), "cannot be applied"),
    (Edit("set", ("data", "m"), value="0"), "reports it again"),
])
def test_gate_failures_write_nothing(fake_rule: Callable[[FakeRule], None], edit: Edit, why: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    fake_rule(lambda sf: [(0, edit.path, Fix("bad", Applicability.SAFE, (edit,)), None)]
              if sf.documents[0].data["metadata"]["name"] == "c" else [])
    target = tmp_path / "c.yaml"
    target.write_text(COUNTER)
    before = target.stat()
    monkeypatch.chdir(tmp_path)
    assert main(["fix", "--isolated", "c.yaml"]) == 2
    err = capsys.readouterr().err
    assert "not fixing c.yaml: DRA999:" in err and why in err
    assert target.read_text() == COUNTER
    assert target.stat().st_mtime_ns == before.st_mtime_ns


def test_helm_rendered_documents_are_never_rewritten(fake_rule: Callable[[FakeRule], None]) -> None:
    fake_rule(lambda sf: [(0, ("data", "n"), Fix("n", Applicability.SAFE, (Edit("set", ("data", "n"), value="1"),)),
                           "chart/templates/cm.yaml")])
    text = "---\n# Source: chart/templates/cm.yaml\n" + COUNTER
    out = fix_files([load_bytes("r.yaml", text.encode())], [], ALL).files[0]
    assert out.after == text.encode() and out.failures == []
    assert any("`chart/templates/cm.yaml` (Helm chart template) needs this change" in n for n in out.notes)


def test_a_safe_fix_that_drops_a_comment_needs_unsafe(fake_rule: Callable[[FakeRule], None]) -> None:
    edit = Edit("delete", ("metadata", "name"))
    fake_rule(lambda sf: [(0, ("metadata", "name"), Fix("rm", Applicability.SAFE, (edit,)), None)]
              if "name" in sf.documents[0].data["metadata"] else [])
    out = fix_files([load_bytes("c.yaml", COUNTER.encode())], [], ALL).files[0]
    assert not out.changed and any("needs --unsafe-fixes: it would drop the comment `# keep`" in n for n in out.notes)


# ----------------------------------------------------------------------------------------------
# the command line


def test_fix_cli_exit_codes_diff_and_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bad = (REPO / "rules" / "DRA309-pod-claim-source" / "bad.yaml").read_text()
    fixed = (REPO / "rules" / "DRA309-pod-claim-source" / "bad.fixed.yaml").read_text()
    f = tmp_path / "p.yaml"
    f.write_text(bad)
    f.chmod(0o640)
    monkeypatch.chdir(tmp_path)
    assert main(["fix", "--isolated", "--select", "DRA309", "--diff", "p.yaml"]) == 1
    captured = capsys.readouterr()
    assert "-    source:\n" in captured.out and f.read_text() == bad
    # every finding fixed: exit 0, as ruff does (tests/test_cli_exit.py has the other cases)
    assert main(["check", "--isolated", "--select", "DRA309", "--fix", "p.yaml"]) == 0
    assert "Fixed p.yaml (DRA309)" in capsys.readouterr().err
    assert f.read_text() == fixed
    assert (f.stat().st_mode & 0o777) == 0o640
    assert main(["fix", "--isolated", "--select", "DRA309", "p.yaml"]) == 0
    monkeypatch.setattr(sys, "stdin", _Stdin(bad.encode()))
    out = _Stdout()
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["fix", "--isolated", "--select", "DRA309", "-"]) == 0
    assert out.buffer.data == fixed.encode()


class _Buf:
    def __init__(self, data: bytes = b"") -> None:
        self.data = data

    def read(self, size: int = -1) -> bytes:  # as a binary stream reads: at most ``size`` bytes
        return self.data if size < 0 else self.data[:size]

    def write(self, b: bytes) -> int:
        self.data += b
        return len(b)

    def flush(self) -> None:
        pass


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = _Buf(data)


class _Stdout:
    def __init__(self) -> None:
        self.buffer = _Buf()
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


# ----------------------------------------------------------------------------------------------
# atomic writes


def test_interrupted_replace_leaves_the_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "a.yaml"
    f.write_bytes(b"old\n")

    def boom(src: str, dst: Any, **dir_fds: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(f, b"new\n")
    assert f.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.yaml"]


def test_atomic_write_keeps_mode_and_refuses_symlinks(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_bytes(b"old\n")
    real.chmod(0o600)
    atomic_write(real, b"new\n")
    assert real.read_bytes() == b"new\n"
    assert (real.stat().st_mode & 0o777) == 0o600
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    with pytest.raises(OSError, match="symbolic link"):  # callers pass the real path of a link they trust
        atomic_write(link, b"newer\n")
    assert link.is_symlink() and real.read_bytes() == b"new\n"


def _big_manifest(n: int) -> str:
    doc = (REPO / "rules" / "DRA309-pod-claim-source" / "bad.yaml").read_text()
    return "".join(doc.replace("name: worker", f"name: worker-{i}").replace("one-gpu", f"gpu-{i}") + "---\n"
                   for i in range(n))


@pytest.fixture
def killable(tmp_path: Path) -> Iterator[tuple[Path, bytes, bytes, float]]:
    """The manifest, its content before and after the fix, and how long one whole fix run took here."""
    f = tmp_path / "big.yaml"
    old = _big_manifest(300).encode()
    f.write_bytes(old)
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "dralint", "fix", "--isolated", "--select", "DRA309", str(f)],
                   capture_output=True, check=False)
    took = time.monotonic() - start
    new = f.read_bytes()
    assert new != old
    f.write_bytes(old)
    yield f, old, new, took


# When to kill, as fractions of one whole run on this machine: spread over the run and dense near
# its end, where the file is written; the last one may land after the run ended (then the new content
# must be there). The duration only places the kills: no assertion depends on it. (Fixed delays of
# 0.2-2.5 s spent 6 s and mostly killed a process that had already finished.)
KILL_AT = (0.4, 0.6, 0.75, 0.85, 0.92, 1.1)


def test_killing_fix_mid_run_leaves_old_or_new_content(killable: tuple[Path, bytes, bytes, float]) -> None:
    f, old, new, took = killable
    mode = f.stat().st_mode & 0o777
    for fraction in KILL_AT:
        f.write_bytes(old)
        proc = subprocess.Popen([sys.executable, "-m", "dralint", "fix", "--isolated", "--select", "DRA309", str(f)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(took * fraction)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        content = f.read_bytes()
        assert content in (old, new)  # never a half-written manifest
        assert (f.stat().st_mode & 0o777) == mode
        # besides the manifest, at most the temporary file of the interrupted write, holding a
        # prefix of the new content (a name that discovery never lints as a manifest)
        others = [p for p in f.parent.iterdir() if p != f]
        assert len(others) <= 1, others
        for p in others:
            assert p.name.startswith(".big.yaml.") and p.name.endswith(".dralint-tmp"), p.name
            assert new.startswith(p.read_bytes())
            p.unlink()
    # a run that is not killed writes the new content, and the next fix finds nothing more to do
    f.write_bytes(old)
    subprocess.run([sys.executable, "-m", "dralint", "fix", "--isolated", "--select", "DRA309", str(f)],
                   capture_output=True, check=False)
    assert f.read_bytes() == new and [p.name for p in f.parent.iterdir()] == ["big.yaml"]
    assert file_comments(load_bytes("big.yaml", new)) == file_comments(load_bytes("big.yaml", old))


LIST = """apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: first}
- apiVersion: v1
  kind: Pod
  metadata:
    name: worker
  spec:
    resourceClaims:
    - name: gpu
      source:
        resourceClaimTemplateName: one-gpu
    containers:
    - name: main
      image: x
      resources:
        claims:
        - name: gpu
"""


def test_fixes_reach_items_of_a_list_document() -> None:
    out = fix_source(LIST, cfg("DRA309"), path="l.yaml").files[0]
    assert out.failures == [] and dict(out.applied) == {"DRA309": 1}
    assert out.after.decode() == LIST.replace("      source:\n        resourceClaimTemplateName: one-gpu\n",
                                              "      resourceClaimTemplateName: one-gpu\n")
