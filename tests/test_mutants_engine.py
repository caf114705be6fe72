"""Tests written to kill mutants of `dralint/engine/` that survived `bench/mutation.py --package engine`.

Expectations are read off the inputs written here; the mutants are listed in bench/mutation-results.md.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dralint.engine.config import ConfigError, build_config, check_input_links
from dralint.engine.lazy import Input, add_summary
from dralint.engine.pipeline import lint_paths
from dralint.engine.summary import summarize
from dralint.inputs.index import Index
from dralint.inputs.load import Limits, load_bytes

from .conftest import lint_text


def test_a_rule_setting_that_is_not_a_mapping_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="rules"):
        build_config({"rules": {"DRA101": "off"}}, None, tmp_path)


def test_extended_resource_kinds_are_the_three_known_ones(tmp_path: Path) -> None:
    for kind in ("gpu", "mig", "shared"):
        build_config({"extended-resources": [{"pattern": "example.com/x", "device-class": "x.example.com",
                                              "kind": kind}]}, None, tmp_path)
    with pytest.raises(ConfigError, match="kind"):
        build_config({"extended-resources": [{"pattern": "example.com/x", "device-class": "x.example.com",
                                              "kind": "fpga"}]}, None, tmp_path)


def test_unsafe_fixes_can_be_turned_on_in_the_config(tmp_path: Path) -> None:
    assert build_config({"unsafe-fixes": True}, None, tmp_path).unsafe_fixes is True
    assert build_config({}, None, tmp_path).unsafe_fixes is False


def test_an_inventory_link_out_of_the_project_is_refused_by_name(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    proj, outside = tmp_path / "proj", tmp_path / "outside"
    proj.mkdir()
    outside.mkdir()
    (outside / "slices.yaml").write_text("kind: List\nitems: []\n")
    (proj / "inventory.yaml").symlink_to(outside / "slices.yaml")
    monkeypatch.chdir(proj)
    cfg = build_config({"inventory": [str(proj / "inventory.yaml")]}, None, proj)
    with pytest.raises(ConfigError, match="the inventory file is a symbolic link that points outside the project"):
        check_input_links(cfg)


def test_values_documents_from_a_summary_belong_to_their_file() -> None:
    sf = load_bytes("x.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\nfoo: bar\n")
    index = Index()
    add_summary(index, "shown/x.yaml", summarize(sf), target=False, loader=None)
    [values] = index.values
    assert values.file is index.files[0] and values.file.path == "shown/x.yaml"
    assert values.data == {"foo": "bar"}


def test_an_unused_suppression_naming_a_rule_prefix_is_reported() -> None:
    # nothing in this ConfigMap is a DRA2xx finding, so both directives suppress nothing; the prefix
    # form (DRA2) names enabled rules just as the full code does
    text = ("# dralint: disable-file=DRA2\n"
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c  # dralint: disable=DRA201\n")
    result = lint_text(text)
    unused = [(f.line, f.message) for f in result.findings if f.rule == "DRA006"]
    assert unused == [(1, "unused suppression: `DRA2` suppressed nothing in this file"),
                      (5, "unused suppression: `DRA201` suppressed nothing on line 5")]


def test_a_directive_after_a_single_quoted_value_still_suppresses() -> None:
    # the directive scanner tracks quotes to skip a `#` inside a scalar; a closed single quote must end that
    legacy = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
              "      containers:\n      - name: c\n        resources:\n          limits:\n"
              "            nvidia.com/gpu: '2'@\n")
    assert "DRA201" in [f.rule for f in lint_text(legacy.replace("@", ""), select=["DRA201"]).findings]
    quiet = lint_text(legacy.replace("@", "  # dralint: disable=DRA201"), select=["DRA201", "DRA006"])
    assert [f.rule for f in quiet.findings] == []


POD = """apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: one-gpu}
  containers:
  - name: train
    image: busybox
    resources: {claims: [{name: gpu}]}
"""
TEMPLATE = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
"""


def test_a_warm_cache_does_not_read_unchanged_context_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("DRALINT_CACHE_DIR", raising=False)
    repo = tmp_path / "repo"
    (repo / "claims").mkdir(parents=True)
    (repo / "pod.yaml").write_text(POD)
    (repo / "claims" / "template.yaml").write_text(TEMPLATE)
    # files written in the last two seconds are not remembered by path (racy mtimes, as git does): age them
    for f in (repo / "pod.yaml", repo / "claims" / "template.yaml"):
        os.utime(f, (time.time() - 60, time.time() - 60))

    def run() -> tuple[list[str], list[str]]:
        config = build_config({}, None, repo)
        config.cache_dir = str(tmp_path / "xdg" / "dralint" / "cache")  # a user cache directory
        read: list[str] = []
        real = Input.ensure_read

        def counting(self: Input, limits: Limits) -> None:
            if self.unread:
                read.append(Path(self.display).name)
            real(self, limits)

        monkeypatch.setattr(Input, "ensure_read", counting)
        r = lint_paths([str(repo / "pod.yaml")], config, context=[str(repo)], jobs=1)
        monkeypatch.setattr(Input, "ensure_read", real)
        return [f.rule for f in r.findings], read

    cold_rules, cold_read = run()
    warm_rules, warm_read = run()
    assert cold_read == ["pod.yaml", "template.yaml"]  # every file is read once ...
    assert warm_rules == cold_rules and warm_read == []  # ... and then comes from the cache, unread
