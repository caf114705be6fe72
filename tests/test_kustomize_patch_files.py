"""A file a kustomization applies as a patch is a fragment: DRA101 does not ask it for required fields.

A strategic-merge patch that sets a node selector has no `containers`; the base has them. Every
other schema error (an unknown field, a wrong type) is still one in a patch, and a partial manifest
no kustomization lists is still reported. The kustomization may be an object (apiVersion and kind)
or a plain document; patches come from `patches`, `patchesStrategicMerge` and `patchesJson6902`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dralint.inputs.kustomize_patches import patch_files
from tests.conftest import CORPUS, requires_shared

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: v}}
  template:
    metadata: {labels: {app: v}}
    spec:
      containers:
      - name: main
        image: x
"""
NODE_PATCH = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      nodeSelector: {pool: gpu}
"""
TYPO_PATCH = NODE_PATCH.replace("nodeSelector", "nodeSelecter")
KUSTOMIZATIONS = {
    "object": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../base]\n"
              "patches:\n- path: patch.yaml\n",
    "plain": "resources: [../base]\npatchesStrategicMerge:\n- patch.yaml\n",
}


def test_patch_files_reads_every_patch_list() -> None:
    fields = {
        "Patches": [{"path": "a.yaml"}, {"patch": "kind: Deployment\n"}, {"path": "../shared/b.yaml",
                                                                          "target": {"kind": "Deployment"}}],
        "patchesStrategicMerge": ["c.yaml", "apiVersion: v1\nkind: ConfigMap\n", 7],
        "patchesJson6902": [{"path": "ops.yaml", "target": {"kind": "Deployment", "name": "x"}}, "d.yaml"],
        "resources": ["deploy.yaml"],
    }
    assert patch_files(fields, "repo/overlay") == {
        "repo/overlay/a.yaml", "repo/shared/b.yaml", "repo/overlay/c.yaml", "repo/overlay/ops.yaml"}
    assert patch_files({"patches": "a.yaml", "patchesStrategicMerge": {"x": 1}}, "") == set()
    assert patch_files({"patches": [{"path": "./a.yaml"}]}, "") == {"a.yaml"}


def _repo(root: Path, kustomization: str, patch: str) -> None:
    (root / "base").mkdir(parents=True)
    (root / "overlay").mkdir()
    (root / "base" / "deploy.yaml").write_text(DEPLOY)
    (root / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    (root / "overlay" / "kustomization.yaml").write_text(kustomization)
    (root / "overlay" / "patch.yaml").write_text(patch)
    # the same fragment that no kustomization lists: a manifest missing its containers
    (root / "overlay" / "stray.yaml").write_text(patch.replace("vllm", "stray"))


def _dra101(root: Path, *args: str) -> list[tuple[str, int, str]]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("DRALINT_CACHE_DIR", None)
    p = subprocess.run([sys.executable, "-m", "dralint", "check", "--format", "json", "--exit-zero", *args],
                       cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    found: list[dict[str, Any]] = json.loads(p.stdout)["findings"]
    return sorted((f["path"], f["line"], f["message"].split(" ")[0]) for f in found if f["rule"] == "DRA101")


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("form", sorted(KUSTOMIZATIONS))
def test_a_patch_misses_no_required_field(tmp_path: Path, form: str, jobs: str) -> None:
    _repo(tmp_path, KUSTOMIZATIONS[form], NODE_PATCH)
    got = _dra101(tmp_path, ".", "--no-cache", "--jobs", jobs)
    assert got == [("overlay/stray.yaml", 6, "`spec.template.spec`")], got  # missing `containers`


@pytest.mark.parametrize("form", sorted(KUSTOMIZATIONS))
def test_a_typo_in_a_patch_is_still_reported(tmp_path: Path, form: str) -> None:
    _repo(tmp_path, KUSTOMIZATIONS[form], TYPO_PATCH)
    got = _dra101(tmp_path, ".", "--no-cache")
    assert ("overlay/patch.yaml", 7, "unknown") in got, got
    assert not any(p == "overlay/patch.yaml" and "unknown" not in m for p, _, m in got), got


def test_a_hook_run_knows_the_patch_and_its_cache_follows_the_kustomization(tmp_path: Path) -> None:
    """One changed file against the repository as context, twice (the second from the cache); then the
    kustomization stops listing the patch, and the unchanged patch file gets its finding back."""
    _repo(tmp_path, KUSTOMIZATIONS["object"], NODE_PATCH)
    hook = ("--context", ".", "--", "overlay/patch.yaml")
    assert _dra101(tmp_path, *hook) == []
    assert _dra101(tmp_path, *hook) == []
    assert (tmp_path / ".dralint_cache").is_dir()  # the second run could read the first one's results
    # the file named as the user's shell gives it (absolute), the context relatively
    assert _dra101(tmp_path, "--context", ".", "--", str(tmp_path / "overlay" / "patch.yaml")) == []
    (tmp_path / "overlay" / "kustomization.yaml").write_text("resources: [../base]\n")
    assert _dra101(tmp_path, *hook) == [("overlay/patch.yaml", 6, "`spec.template.spec`")]


@requires_shared
def test_the_corpus_overlay_patches_are_not_reported_as_incomplete() -> None:
    vllm = CORPUS / "kustomize/GoogleCloudPlatform/accelerated-platforms/platforms/gke/base/use-cases/" \
        "inference-ref-arch/kubernetes-manifests/online-inference-gpu/vllm"
    patches = sorted(vllm.glob("*/patch-nodeselector.yaml"))
    assert len(patches) >= 2
    got = _dra101(vllm, ".", "--no-cache", "--isolated")
    assert not any("patch-nodeselector" in p for p, _, _ in got), got
    assert "containers" not in patches[0].read_text()  # what the base adds


def test_patched_by_names_the_kustomization_and_keeps_no_half_answer(tmp_path: Path) -> None:
    """A streamed run asks before its index is whole: the sealed index raises, and the question comes
    again later. Only a whole answer may be kept, or the patch would stay unknown for the run."""
    from dralint.engine.runner import NeedsIndex
    from dralint.inputs.index import Index
    from dralint.inputs.kustomize_patches import patched_by
    from dralint.inputs.load import load_bytes

    _repo(tmp_path, KUSTOMIZATIONS["plain"], NODE_PATCH)
    where = str(tmp_path / "overlay" / "kustomization.yaml")
    index = Index()
    index.add_file(load_bytes(where, (tmp_path / "overlay" / "kustomization.yaml").read_bytes()), target=False)

    class Sealed:
        def values_of_files(self, names: Any) -> Any:
            raise NeedsIndex("@values")

        def of_kind(self, *kinds: str) -> Any:
            raise NeedsIndex(kinds[0])

    cache: dict[str, Any] = {}
    with pytest.raises(NeedsIndex):
        patched_by(Sealed(), cache, str(tmp_path / "overlay" / "patch.yaml"))  # type: ignore[arg-type]
    assert patched_by(index, cache, str(tmp_path / "overlay" / "patch.yaml")) == where
    assert patched_by(index, cache, str(tmp_path / "overlay" / "stray.yaml")) is None
