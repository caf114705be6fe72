"""Tests written to kill mutants of `dralint/engine/` that survived `bench/mutation.py --package engine`.

Expectations are read off the inputs written here; the mutants are listed in bench/mutation-results.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dralint.engine.config import ConfigError, build_config, check_input_links
from dralint.engine.lazy import add_summary
from dralint.engine.summary import summarize
from dralint.inputs.index import Index
from dralint.inputs.load import load_bytes


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
