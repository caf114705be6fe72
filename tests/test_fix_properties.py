"""Properties of `fix` and `migrate` on generated manifests (hypothesis).

The generated files mix documents that need a fix (a pod claim still in the pre-1.31 `source:`
wrapper, device-plugin GPU requests) with documents no fix touches (ConfigMaps with block scalars,
anchors, flow collections and quotes), sprinkle comments over every line, and vary sequence
indentation, `---`/`...` markers, CRLF, BOM and the trailing newline. Whatever the input, after
`fix` and after `migrate`:

- the file is written (no gate fails) and re-parses;
- every document nothing had to change is byte-identical;
- every comment is still there;
- linting the result finds no error that was not there before;
- running the command again changes nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralint.engine.config import build_config
from dralint.engine.runner import lint_files
from dralint.fix.loop import fix_files
from dralint.fix.splice import doc_regions, file_comments
from dralint.inputs.load import SourceFile, load_bytes
from dralint.migrate.records import MigrateOptions
from dralint.migrate.run import migrate_files

from .conftest import REPO

CONFIG = build_config({}, None, REPO)
ALL = build_config({"select": ["ALL"]}, None, REPO)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# always with a digit: `no`, `on` or `y` would be booleans to a YAML 1.1 reader, not names
names = st.from_regex(r"[a-z]{1,4}[0-9]{1,3}", fullmatch=True)
words = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ]{0,14}[A-Za-z0-9]", fullmatch=True)

#: lines of generated documents: (indent, text, may carry comments). Block scalar content never does.
Line = tuple[int, str, bool]


def _seq(offset: int, indent: int, items: list[list[Line]]) -> list[Line]:
    """A block sequence of mappings at ``indent`` (dash offset ``offset``)."""
    out: list[Line] = []
    for item in items:
        first, *rest = item
        out.append((indent + offset, "- " + first[1], first[2]))
        out.extend((indent + offset + 2 + i, t, c) for i, t, c in rest)
    return out


@st.composite
def source_pod(draw: st.DrawFn, offset: int) -> list[Line]:
    name, tmpl = draw(names), draw(names)
    claim: list[Line] = [(0, "name: gpu", True), (0, "source:", True), (2, f"resourceClaimTemplateName: {tmpl}", True)]
    container: list[Line] = [(0, "name: main", True), (0, "image: cuda:12", True), (0, "resources:", True),
                             (2, "claims:", True), *_seq(offset, 2, [[(0, "name: gpu", True)]])]
    return [(0, "apiVersion: v1", True), (0, "kind: Pod", True), (0, "metadata:", True), (2, f"name: {name}", True),
            (0, "spec:", True), (2, "resourceClaims:", True), *_seq(offset, 2, [claim]), (2, "containers:", True),
            *_seq(offset, 2, [container])]


@st.composite
def legacy_workload(draw: st.DrawFn, offset: int) -> list[Line]:
    name = draw(names)
    kind = draw(st.sampled_from(["Pod", "Deployment", "Job"]))
    resource = draw(st.sampled_from(["nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-2g.20gb.me"]))
    n = draw(st.integers(1, 4))
    amount = draw(st.sampled_from([str(n), f'"{n}"']))
    limits: list[Line] = [(4, "limits:", True), (6, f"{resource}: {amount}", True)]
    if draw(st.booleans()):
        limits.append((6, 'cpu: "1"', True))
    if draw(st.booleans()):
        limits += [(4, "requests:", True), (6, f"{resource}: {amount}", True)]
    gpu: list[Line] = [(0, "name: main", True), (0, "image: cuda:12", True), (0, "resources:", True),
                       *[(i - 2, t, c) for i, t, c in limits]]
    containers = [gpu]
    if draw(st.booleans()):
        containers.append([(0, "name: sidecar", True), (0, "image: busybox", True)])
    pod: list[Line] = [(0, "containers:", True), *_seq(offset, 0, containers)]
    api = {"Pod": "v1", "Deployment": "apps/v1", "Job": "batch/v1"}[kind]
    head: list[Line] = [(0, f"apiVersion: {api}", True), (0, f"kind: {kind}", True), (0, "metadata:", True),
                        (2, f"name: {name}", True)]
    if draw(st.booleans()):
        head.append((2, "namespace: ml", True))
    if kind == "Pod":
        return [*head, (0, "spec:", True), *[(i + 2, t, c) for i, t, c in pod]]
    return [*head, (0, "spec:", True), (2, "template:", True), (4, "spec:", True), *[(i + 6, t, c) for i, t, c in pod]]


@st.composite
def configmap(draw: st.DrawFn, offset: int) -> list[Line]:
    name = draw(names)
    chomp = draw(st.sampled_from(["|", "|-", "|+", ">", ">-"]))
    text = draw(words)
    return [(0, "apiVersion: v1", True), (0, "kind: ConfigMap", True), (0, "metadata:", True),
            (2, f"name: {name}", True), (2, "labels: &labels {app: x, tier: \"backend\"}", True),
            (0, "data:", True), (2, f"script: {chomp}", True), (4, f"echo {text}  # not a comment", False),
            (4, "#!/bin/sh", False), (2, "quoted: 'it''s'", True), (2, 'octal: "0755"', True),
            (2, "url: http://example.com/#frag", True)]


@st.composite
def decorate(draw: st.DrawFn, lines: list[Line]) -> str:
    """Render lines, adding full-line and end-of-line comments where comments may go."""
    out: list[str] = []
    for indent, text, commentable in lines:
        if commentable and draw(st.integers(0, 5)) == 0:
            out.append(" " * indent + "# " + draw(words))
        line = " " * indent + text
        if commentable and draw(st.integers(0, 4)) == 0:
            line += " " * draw(st.integers(1, 3)) + "# " + draw(words)
        out.append(line)
    return "\n".join(out) + "\n"


@st.composite
def manifest_file(draw: st.DrawFn, kinds: tuple[str, ...]) -> bytes:
    offset = draw(st.sampled_from([0, 2]))
    makers = {"source": source_pod, "legacy": legacy_workload, "configmap": configmap}
    docs = []
    for kind in draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=4)):
        docs.append(draw(decorate(draw(makers[kind](offset)))))
    text = ""
    if draw(st.booleans()):
        text += "# " + draw(words) + "\n"
    for i, d in enumerate(docs):
        if i or draw(st.booleans()):
            text += "---" + (" # " + draw(words) if draw(st.integers(0, 4)) == 0 else "") + "\n"
        text += d
        if draw(st.integers(0, 4)) == 0:
            text += "...\n"
    if draw(st.booleans()):
        text = text.rstrip("\n")
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    raw = text.encode()
    return b"\xef\xbb\xbf" + raw if draw(st.booleans()) else raw


def _regions(sf: SourceFile) -> list[str]:
    regions = doc_regions(sf)
    return [sf.text[slice(*regions[d.index])] for d in sf.documents]


def _errors(raw: bytes) -> Counter[tuple[str, str]]:
    result = lint_files([load_bytes("f.yaml", raw)], [], ALL)
    return Counter((f.rule, f.object.label() if f.object else "") for f in result.findings if int(f.severity) >= 3)


def _check_common(before: bytes, after: bytes) -> tuple[SourceFile, SourceFile]:
    old, new = load_bytes("f.yaml", before), load_bytes("f.yaml", after)
    assert not [p for p in new.problems if p.code in ("DRA001", "DRA005")], new.problems
    assert file_comments(old) - file_comments(new) == Counter()
    assert after.startswith(b"\xef\xbb\xbf") == before.startswith(b"\xef\xbb\xbf")
    if b"\r\n" in before and b"\n" not in before.replace(b"\r\n", b""):
        assert b"\n" not in after.replace(b"\r\n", b"")
    assert _errors(after) - _errors(before) == Counter()
    return old, new


@SETTINGS
@given(manifest_file(("source", "configmap")))
def test_fix_properties(raw: bytes) -> None:
    out = fix_files([load_bytes("f.yaml", raw)], [], CONFIG).files[0]
    assert out.failures == []
    old, new = _check_common(raw, out.after)
    old_regions, new_regions = _regions(old), _regions(new)
    assert len(old_regions) == len(new_regions)
    for a, b in zip(old_regions, new_regions, strict=True):
        if "source:" not in a:
            assert a == b
    again = fix_files([load_bytes("f.yaml", out.after)], [], CONFIG).files[0]
    assert again.after == out.after and not again.applied


def _migrate(raw: bytes) -> Any:
    report = migrate_files([load_bytes("f.yaml", raw)], [], CONFIG, MigrateOptions())
    assert not report.failed, [f.failures for f in report.files]
    return report


@SETTINGS
@given(manifest_file(("legacy", "configmap", "source")))
def test_migrate_properties(raw: bytes) -> None:
    report = _migrate(raw)
    after = report.files[0].after
    old, new = _check_common(raw, after)
    assert all(w.status == "migrated" for w in report.workloads), [w.reason for w in report.workloads]
    new_text = new.text
    pos = 0
    for region in _regions(old):  # documents without device-plugin resources stay, in order
        if "nvidia.com/" in region:
            continue
        found = new_text.find(region, pos)
        assert found >= 0
        pos = found + len(region)
    result = lint_files([new], [], ALL)
    assert [f for f in result.findings if f.rule in ("DRA201", "DRA202", "DRA203")] == []
    again = _migrate(after)
    assert again.files[0].after == after and not again.migrated()


@SETTINGS
@given(manifest_file(("source", "configmap")))
def test_unsafe_fix_properties(raw: bytes) -> None:
    """With --unsafe-fixes a fix may drop a comment inside what it rewrites, and nowhere else."""
    out = fix_files([load_bytes("f.yaml", raw)], [], CONFIG, unsafe=True).files[0]
    assert out.failures == []
    old, new = load_bytes("f.yaml", raw), load_bytes("f.yaml", out.after)
    assert not [p for p in new.problems if p.code in ("DRA001", "DRA005")]
    assert _errors(out.after) - _errors(raw) == Counter()
    old_regions, new_regions = _regions(old), _regions(new)
    for a, b in zip(old_regions, new_regions, strict=True):
        if "source:" not in a:
            assert a == b
        else:
            assert "source:" not in b
    outside = file_comments(old) - sum((file_comments(load_bytes("r.yaml", r.encode())) for r in old_regions
                                        if "source:" in r), Counter())
    assert outside - file_comments(new) == Counter()
    again = fix_files([load_bytes("f.yaml", out.after)], [], CONFIG, unsafe=True).files[0]
    assert again.after == out.after and not again.applied
