"""Fault injection for every gate between a fix and the disk (issue 18, point 2).

Each test runs a real fix (DRA309 unwrapping a pod claim's `source:`) through ``dralint fix`` and
plants one fault with monkeypatch: a splice that damages a document no fix touched, renames an
object, leaves the fixed finding in place, breaks the YAML, adds a document, never converges, or a
write that meets a swapped-in link or a full disk. Whatever the fault, nothing is written (same
bytes, same mtime, no temporary file left), the exit code is 2, and the message names the gate.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from dralint.cli.app import main
from dralint.fix import gates, loop, write
from dralint.fix.splice import PassResult, Skipped
from dralint.inputs.load import SourceFile
from dralint.model import Applicability

from .conftest import REPO

FOLDER = REPO / "rules" / "DRA309-pod-claim-source"
#: two documents: the Pod the fix edits (document 1) and a template no fix touches (document 2)
BAD = (FOLDER / "bad.yaml").read_text(encoding="utf-8")
FIXED = (FOLDER / "bad.fixed.yaml").read_text(encoding="utf-8")

Transform = Callable[[str], str]


def _plant(monkeypatch: pytest.MonkeyPatch, transform: Transform) -> None:
    """Every pass that applies a fix hands ``transform(text)`` on instead of the spliced text."""
    real = loop.apply_pass

    def faulty(sf: SourceFile, planned: list[object], required: Applicability) -> PassResult:
        pr = real(sf, planned, required)  # type: ignore[arg-type]
        if pr.applied:
            pr.text = transform(pr.text)
        return pr

    monkeypatch.setattr(loop, "apply_pass", faulty)


def _run_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
             text: str = BAD, name: str = "p.yaml") -> tuple[int, str, Path, bytes]:
    target = tmp_path / name
    target.write_text(text, encoding="utf-8")
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))  # an mtime a write would certainly change
    monkeypatch.chdir(tmp_path)
    code = main(["fix", "--isolated", "--select", "DRA309", name])
    return code, capsys.readouterr().err, target, text.encode("utf-8")


def _assert_untouched(tmp_path: Path, target: Path, before: bytes) -> None:
    assert target.read_bytes() == before
    assert target.stat().st_mtime_ns == 1_000_000_000
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]  # no temporary file left behind


def test_the_unplanted_fix_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The control: without a fault the same run writes bad.fixed.yaml (so the faults below are what stops it)."""
    code, err, target, _ = _run_fix(tmp_path, monkeypatch, capsys)
    assert code == 0 and "Fixed p.yaml (DRA309)" in err  # every finding fixed: exit 0, as ruff
    assert target.read_text(encoding="utf-8") == FIXED


# -- gates.verify --------------------------------------------------------------------------------

def _second_document_comment(text: str) -> str:
    # a comment is enough: the gate compares bytes, not parsed data
    head, sep, tail = text.partition("\n---\n")
    assert sep, "the example must have two documents"
    return head + sep + tail.replace("deviceClassName: gpu.nvidia.com", "deviceClassName: gpu.nvidia.com  # x")


def _rename_pod(text: str) -> str:
    return text.replace("  name: worker\n", "  name: worker-2\n", 1)


def _change_api_group(text: str) -> str:
    # the Pod keeps kind, namespace and name but moves to another API group
    return text.replace("apiVersion: v1\nkind: Pod\n", "apiVersion: example.com/v1\nkind: Pod\n", 1)


def _break_yaml(text: str) -> str:
    return text.replace("  name: worker\n", '  name: worker\n  labels: {app: "unterminated\n', 1)


def _add_document(text: str) -> str:
    return text + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: ml\n"


@pytest.mark.parametrize(("transform", "gate"), [
    (_second_document_comment, "document 2, which no fix touched, changed"),
    (_rename_pod, "the identity (kind, namespace, name or API group) of document 1 changed"),
    (_change_api_group, "the identity (kind, namespace, name or API group) of document 1 changed"),
    (_break_yaml, "the result does not parse:"),
    (_add_document, "the result has 3 documents where 2 were expected"),
], ids=["untouched-document", "identity-name", "identity-group", "parse", "document-count"])
def test_a_damaged_result_is_not_written(transform: Transform, gate: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _plant(monkeypatch, transform)
    code, err, target, before = _run_fix(tmp_path, monkeypatch, capsys)
    assert code == 2
    assert f"not fixing p.yaml: DRA309: {gate}" in err
    assert "Fixed p.yaml" not in err
    _assert_untouched(tmp_path, target, before)


def test_a_result_that_parses_but_cannot_be_split_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The document regions are computed by a second parser; its failure is a parse failure too."""
    real = gates.doc_regions
    calls: list[SourceFile] = []

    def regions(sf: SourceFile) -> dict[int, tuple[int, int]]:
        calls.append(sf)
        if len(calls) == 2:  # the fixed file (the first call reads the original)
            import yaml
            raise yaml.YAMLError("planted: no document boundaries")
        return real(sf)

    monkeypatch.setattr(gates, "doc_regions", regions)
    code, err, target, before = _run_fix(tmp_path, monkeypatch, capsys)
    assert code == 2 and "not fixing p.yaml: DRA309: the result does not parse: planted" in err
    _assert_untouched(tmp_path, target, before)


def test_a_json_file_that_stops_being_json_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    docs = list(yaml.safe_load_all(BAD))
    text = json.dumps(docs[0], indent=2) + "\n"
    # YAML still reads the result, so only the JSON gate can tell
    _plant(monkeypatch, lambda t: t.rstrip("\n") + "\n# trailing comment\n")
    code, err, target, before = _run_fix(tmp_path, monkeypatch, capsys, text, "p.json")
    assert code == 2 and "not fixing p.json: DRA309: the result is no longer valid JSON" in err
    _assert_untouched(tmp_path, target, before)


# -- the loop ------------------------------------------------------------------------------------

def test_a_fix_that_leaves_its_finding_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The splice claims success but returns the text unchanged: the next lint reports the same fix."""
    real = loop.apply_pass

    def claims_but_keeps(sf: SourceFile, planned: list[object], required: Applicability) -> PassResult:
        pr = real(sf, planned, required)  # type: ignore[arg-type]
        pr.text = sf.text
        return pr

    monkeypatch.setattr(loop, "apply_pass", claims_but_keeps)
    code, err, target, before = _run_fix(tmp_path, monkeypatch, capsys)
    assert code == 2
    assert "not fixing p.yaml: DRA309: the fix \"" in err and "was applied but DRA309 reports it again" in err
    _assert_untouched(tmp_path, target, before)


def test_a_fix_the_splicer_refuses_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    real = loop.apply_pass

    def refuses(sf: SourceFile, planned: list[object], required: Applicability) -> PassResult:
        pr = real(sf, planned, required)  # type: ignore[arg-type]
        pr.failures = [Skipped(pr.applied[0], "planted: the edited node moved")]
        return pr

    monkeypatch.setattr(loop, "apply_pass", refuses)
    code, err, target, before = _run_fix(tmp_path, monkeypatch, capsys)
    assert code == 2 and "cannot be applied: planted: the edited node moved" in err
    _assert_untouched(tmp_path, target, before)


def test_fixes_whose_second_run_differs_are_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Every pass leaves a new `source:` claim behind, so the next lint always has another fix."""
    passes: list[int] = []

    def regrows(text: str) -> str:
        passes.append(1)
        claim = f"  - name: extra-{len(passes)}\n    source:\n      resourceClaimTemplateName: one-gpu\n"
        return text.replace("  containers:\n", claim + "  containers:\n", 1)

    _plant(monkeypatch, regrows)
    code, err, target, before = _run_fix(tmp_path, monkeypatch, capsys)
    assert code == 2
    assert f"fixes did not converge after {loop.MAX_PASSES} passes (still fixable: DRA309)" in err
    assert len(passes) > loop.MAX_PASSES  # the last check applies once more and still finds work
    _assert_untouched(tmp_path, target, before)


# -- the writer ----------------------------------------------------------------------------------

def test_a_link_swapped_in_during_the_write_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Between the temporary file and the rename, p.yaml becomes a link to a file the fix must not reach."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "secret.yaml").write_text("keep: me\n")
    real = write._replaceable_mode
    calls: list[str] = []

    def swap(name: str, dir_fd: int | None) -> int | None:
        calls.append(name)
        if len(calls) == 2:  # the re-check right before os.replace
            Path(tmp_path, "p.yaml").unlink()
            Path(tmp_path, "p.yaml").symlink_to(victim / "secret.yaml")
        return real(name, dir_fd)

    monkeypatch.setattr(write, "_replaceable_mode", swap)
    code, err, target, _ = _run_fix(tmp_path, monkeypatch, capsys)
    assert code == 2 and "cannot write p.yaml: it is a symbolic link; not written" in err
    assert (victim / "secret.yaml").read_text() == "keep: me\n"
    assert target.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.yaml", "victim"]


def test_a_failed_write_leaves_the_original(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(write.os, "fsync", full)
    code, err, target, before = _run_fix(tmp_path, monkeypatch, capsys)
    assert code == 2 and "cannot write p.yaml: No space left on device" in err
    assert "Fixed p.yaml" not in err
    _assert_untouched(tmp_path, target, before)
