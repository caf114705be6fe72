"""kustomize findings land on the patch that last set the offending field, else on the origin file.

The fixture (tests/fixtures/kustomize-patches) stacks base -> staging -> prod:
- base/deploy.yaml: a Deployment with containers [sidecar, train]; `train` asks for
  `nvidia.com/gpu: 1` (line 20, column 15); base/quota.yaml: a quota on GPUs (line 8, column 5);
- staging/mig.yaml: a strategic-merge patch adding `nvidia.com/mig-1g.5gb: 1` to `train`
  (line 14, column 15); strategic merge moves the patched `train` to the front of the list;
- prod/gpus.json.yaml: a JSON 6902 patch replacing train's `nvidia.com/gpu` by 2 (the value is at
  line 4, column 10); prod/kustomization.yaml: an inline JSON 6902 patch giving `sidecar`
  `nvidia.com/gpu.shared: 1` (line 15, column 13 of the kustomization).
Every position below was read off those files.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from dralint.cli.app import main
from dralint.inputs import kustomize_patches, render
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures"
needs_kustomize = pytest.mark.skipif(shutil.which("kustomize") is None and shutil.which("kubectl") is None,
                                     reason="neither `kustomize` nor `kubectl` on PATH")

PROD = [
    ("DRA201", "kustomize-patches/prod/gpus.json.yaml", 4, 10),  # the JSON patch set it last (base had 1)
    ("DRA202", "kustomize-patches/staging/mig.yaml", 14, 15),  # strategic merge, by container name
    ("DRA203", "kustomize-patches/prod/kustomization.yaml", 15, 13),  # inline patch, its own line
    ("DRA205", "kustomize-patches/base/quota.yaml", 8, 5),  # no patch touched the quota
]


def _findings(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]], str]:
    code = main(["check", "--isolated", "--format", "json", *args])
    out = capsys.readouterr()
    return code, (json.loads(out.out)["findings"] if out.out.strip() else []), out.err


def _table(findings: list[dict[str, Any]]) -> list[tuple[str, str, int, int]]:
    return sorted((f["rule"], f["path"], f["line"], f["column"]) for f in findings)


@pytest.fixture
def fixtures(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(FIXTURES)
    return FIXTURES


@needs_kustomize
def test_findings_land_on_the_patch_that_set_the_field(fixtures: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, findings, err = _findings(["kustomize-patches/prod"], capsys)
    assert code == 1, err
    assert _table(findings) == PROD
    by_rule = {f["rule"]: f for f in findings}
    assert "set by the JSON 6902 patch of `kustomize-patches/prod/kustomization.yaml`" in by_rule["DRA201"]["message"]
    assert "the resource is in `kustomize-patches/base/deploy.yaml`" in by_rule["DRA202"]["message"]
    assert by_rule["DRA201"]["object"]["name"] == "prod-trainer"


@needs_kustomize
def test_an_unpatched_field_is_found_in_the_origin_by_merge_key(fixtures: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # staging's patch reorders the containers to [train, sidecar]: the base's `train` is still the
    # second container of base/deploy.yaml, where `nvidia.com/gpu` is line 20, column 15
    _, findings, err = _findings(["kustomize-patches/staging"], capsys)
    assert _table(findings) == [
        ("DRA201", "kustomize-patches/base/deploy.yaml", 20, 15),
        ("DRA202", "kustomize-patches/staging/mig.yaml", 14, 15),
        ("DRA205", "kustomize-patches/base/quota.yaml", 8, 5),
    ], err


@needs_kustomize
def test_without_transformer_annotations_the_tree_order_gives_the_same_answer(
        fixtures: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # an older kustomize writes no transformer annotation: every kustomization of the tree is read
    monkeypatch.setattr(render, "applied_from_annotation", lambda data, to_user: None)
    _, findings, err = _findings(["kustomize-patches/prod"], capsys)
    assert _table(findings) == PROD, err


def test_transformer_annotation_is_read_in_order(tmp_path: Path) -> None:
    data = {"metadata": {"annotations": {kustomize_patches.TRANSFORMATIONS_ANNOTATION: (
        "- configuredIn: ../a/kustomization.yaml\n  configuredBy: {apiVersion: builtin, kind: PatchTransformer}\n"
        "- configuredIn: ../a/kustomization.yaml\n  configuredBy: {apiVersion: builtin, kind: PrefixTransformer}\n"
        "- configuredIn: ../b/kustomization.yaml\n"
        "  configuredBy: {apiVersion: builtin, kind: PatchJson6902Transformer}\n"
    )}}}
    got = kustomize_patches.applied_from_annotation(data, lambda p: tmp_path / p.replace("../", ""))
    assert got == [kustomize_patches.Applied(tmp_path / "a/kustomization.yaml", "PatchTransformer"),
                   kustomize_patches.Applied(tmp_path / "b/kustomization.yaml", "PatchJson6902Transformer")]
    assert kustomize_patches.applied_from_annotation({"metadata": {}}, lambda p: None) is None


def _patch_tree(tmp_path: Path, patch: str, name: str = "patch.yaml") -> tuple[Path, Path]:
    root = tmp_path / "overlay"
    root.mkdir()
    (root / "kustomization.yaml").write_text(f"resources: [deploy.yaml]\npatches:\n  - path: {name}\n")
    (root / name).write_text(patch)
    return root, root / "kustomization.yaml"


BUILT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "app"},
         "spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "b", "resources": {
             "limits": {"nvidia.com/gpu": 1}}}]}}}}
GPU = ("spec", "template", "spec", "containers", 1, "resources", "limits", "nvidia.com/gpu")
SMP = ("kind: Deployment\nmetadata: {name: app}\nspec:\n  template:\n    spec:\n      containers:\n"
       "        - name: b\n          resources:\n            limits:\n              nvidia.com/gpu: 1\n")


def test_strategic_patch_entries_are_found_by_merge_key_not_index(tmp_path: Path) -> None:
    root, kfile = _patch_tree(tmp_path, SMP)
    index = kustomize_patches.PatchIndex([root])
    applied = [kustomize_patches.Applied(kfile, "PatchTransformer")]
    site = index.last_setting(applied, BUILT, {"app"}, GPU)
    assert site is not None and site.file == root / "patch.yaml"
    assert (site.span.line, site.span.column, site.style) == (10, 15, kustomize_patches.STRATEGIC)
    # another object of the same kind is not this patch's target; the other container is not in it
    assert index.last_setting(applied, BUILT, {"other"}, GPU) is None
    assert index.last_setting(applied, BUILT, {"app"}, ("spec", "template", "spec", "containers", 0, "name")) is None


def test_a_deleting_patch_did_not_set_the_field(tmp_path: Path) -> None:
    root, kfile = _patch_tree(tmp_path, SMP.replace("nvidia.com/gpu: 1", "nvidia.com/gpu: null"))
    applied = [kustomize_patches.Applied(kfile, "PatchTransformer")]
    assert kustomize_patches.PatchIndex([root]).last_setting(applied, BUILT, {"app"}, GPU) is None


def test_json_patch_append_and_parent_operations(tmp_path: Path) -> None:
    ops = ("- op: add\n  path: /spec/template/spec/containers/-\n  value:\n    name: b\n    resources:\n"
           "      limits: {nvidia.com/gpu: 1}\n- op: remove\n  path: /spec/template/spec/containers/1/resources\n")
    root, kfile = _patch_tree(tmp_path, ops, "ops.yaml")
    applied = [kustomize_patches.Applied(kfile, "PatchTransformer")]
    entry = "  - path: ops.yaml\n    target: {kind: Deployment, name: ap.}\n"
    kfile.write_text("resources: [deploy.yaml]\npatches:\n" + entry)
    site = kustomize_patches.PatchIndex([root]).last_setting(applied, BUILT, {"app"}, GPU)
    # `-` appended the second container; `remove` sets nothing; the key is at line 6, column 16
    assert site is not None and (site.span.line, site.span.column) == (6, 16)
    assert site.style == kustomize_patches.JSON6902
    kfile.write_text("resources: [deploy.yaml]\npatches:\n" + entry.replace("ap.", "web"))
    assert kustomize_patches.PatchIndex([root]).last_setting(applied, BUILT, {"app"}, GPU) is None


def test_a_patch_linked_from_outside_is_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.yaml"
    outside.write_text(SMP)
    root, kfile = _patch_tree(tmp_path, "")
    (root / "patch.yaml").unlink()
    os.symlink(outside, root / "patch.yaml")
    applied = [kustomize_patches.Applied(kfile, "PatchTransformer")]
    assert kustomize_patches.PatchIndex([root]).last_setting(applied, BUILT, {"app"}, GPU) is None


@needs_kustomize
def test_a_build_error_names_the_users_folder_not_the_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text("resources: [bad.yaml]\n")
    (tmp_path / "app" / "bad.yaml").write_text("kind: [\n")
    assert main(["check", "--isolated", "app"]) == 2
    err = capsys.readouterr().err
    assert "kustomize build app failed" in err
    assert "dralint-kustomize-" not in err and "/tree" not in err and "build/" not in err
