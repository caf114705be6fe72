"""The decoded copy of the data files: the same values as their YAML, read instead of it, never stale.

Every run reads the rule catalog and the knowledge files; their JSON copy in the user cache
directory replaces about 25 ms of YAML decoding with about one. It must give exactly what the YAML
gives, be made again when a data file changes or the copy is damaged, and cost only time when it
cannot be written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dralint.knowledge import catalog
from tests.conftest import EXAMPLES, REPO


@pytest.fixture
def fresh(user_cache: Path) -> Iterator[Path]:
    """A fake user cache directory, and no copy decoded in this process yet (before and after)."""
    catalog.use_copy(True)
    catalog.decoded_data.cache_clear()
    yield user_cache / "data"
    catalog.decoded_data.cache_clear()


def yaml_of(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


def counting_yaml(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = yaml.load

    def load(stream: Any, Loader: Any = None) -> Any:
        calls.append(1)
        return real(stream, Loader=Loader)

    monkeypatch.setattr(yaml, "load", load)
    return calls


def test_the_copy_holds_every_data_file_as_its_yaml_gives_it(fresh: Path) -> None:
    got = catalog.decoded_data()
    files = dict(catalog._data_files())
    assert len(files) > 40 and set(got) == set(files)  # every file is plain JSON data today
    for name, path in files.items():
        assert got[name] == yaml_of(path), name
    (copy,) = fresh.glob("*.json")
    assert json.loads(copy.read_bytes()) == got


def test_a_second_process_reads_the_copy_not_the_yaml(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = catalog.decoded_data()
    catalog.decoded_data.cache_clear()
    calls = counting_yaml(monkeypatch)
    assert catalog.decoded_data() == first and calls == []
    catalog.load_data.cache_clear()
    catalog.catalog.cache_clear()
    try:
        assert catalog.catalog() and catalog.load_data("workloads.yaml") and calls == []
    finally:
        catalog.load_data.cache_clear()
        catalog.catalog.cache_clear()


def test_a_damaged_copy_is_made_again(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = catalog.decoded_data()
    (copy,) = fresh.glob("*.json")
    for damaged in (b"", b"[1, 2]", b'{"rules/x": ', b"\xff\xfe"):
        copy.write_bytes(damaged)
        catalog.decoded_data.cache_clear()
        assert catalog.decoded_data() == good
        assert json.loads(copy.read_bytes()) == good


def test_an_edited_data_file_makes_a_new_copy(fresh: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    root = tmp_path / "data"
    shutil.copytree(catalog.rules_dir(), root / "rules")
    shutil.copytree(catalog.schemas_dir(), root / "schemas")
    monkeypatch.setattr(catalog, "data_root", lambda: root)
    before = catalog.decoded_data()
    (old,) = fresh.glob("*.json")
    workloads = root / "schemas" / "workloads.yaml"
    workloads.write_text(workloads.read_text(encoding="utf-8") + "\nx-test-marker: 1\n", encoding="utf-8")
    catalog.decoded_data.cache_clear()
    after = catalog.decoded_data()
    assert after["schemas/workloads.yaml"]["x-test-marker"] == 1
    assert "x-test-marker" not in before["schemas/workloads.yaml"]
    (new,) = fresh.glob("*.json")  # the copy of the old data is gone
    assert new != old


def test_a_value_json_cannot_hold_is_read_from_its_yaml(fresh: Path, monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    root = tmp_path / "data"
    shutil.copytree(catalog.rules_dir(), root / "rules")
    (root / "schemas").mkdir()
    (root / "schemas" / "odd.yaml").write_text("when: 2024-01-01\n1: one\n")  # a date, an int key
    monkeypatch.setattr(catalog, "data_root", lambda: root)
    assert "schemas/odd.yaml" not in catalog.decoded_data()
    catalog.load_data.cache_clear()
    try:
        assert catalog.load_data("odd.yaml") == yaml_of(root / "schemas" / "odd.yaml")
    finally:
        catalog.load_data.cache_clear()


def test_an_unwritable_cache_costs_only_time(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh.parent.mkdir(parents=True)
    fresh.write_text("not a directory")  # the copy cannot be written
    got = catalog.decoded_data()
    assert got and got == {name: yaml_of(path) for name, path in catalog._data_files()}
    assert fresh.read_text() == "not a directory"


def test_a_symlinked_copy_is_not_read(fresh: Path, tmp_path: Path) -> None:
    good = catalog.decoded_data()
    (copy,) = fresh.glob("*.json")
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps({name: "planted" for name in good}))
    copy.unlink()
    os.symlink(planted, copy)
    catalog.decoded_data.cache_clear()
    assert catalog.decoded_data() == good


def test_no_cache_reads_and_writes_no_copy(user_cache: Path, tmp_path: Path) -> None:
    """``--no-cache`` writes no cache anywhere (the GitHub Action runs so): not even the data's copy."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(tmp_path / "home"),
           "XDG_CACHE_HOME": str(user_cache.parent)}
    args = [sys.executable, "-m", "dralint", "check", str(EXAMPLES / "legacy"), "--isolated", "--exit-zero"]
    subprocess.run([*args, "--no-cache"], env=env, capture_output=True, check=True, timeout=120)
    assert not (user_cache / "data").exists()
    subprocess.run(args, env=env, capture_output=True, check=True, timeout=120, cwd=tmp_path)
    assert len(list((user_cache / "data").glob("*.json"))) == 1
