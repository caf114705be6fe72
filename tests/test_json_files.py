"""A JSON file stays JSON: `migrate` and `fix --unsafe-fixes` over every .json file of `examples/` and
of the shared corpus (when present) leave each one parseable by a JSON parser, and the write gate
refuses a result that YAML accepts but JSON does not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dralint.cli import main
from dralint.fix.gates import verify
from dralint.inputs.load import load_bytes
from tests.conftest import CORPUS, EXAMPLES


def _json_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.json")) if root.is_dir() else []


SOURCES = [("examples", EXAMPLES), ("corpus", CORPUS)]


@pytest.mark.parametrize("command", [["migrate"], ["migrate", "--include-custom-resources"],
                                     ["fix", "--unsafe-fixes"]])
@pytest.mark.parametrize(("label", "root"), SOURCES, ids=[s[0] for s in SOURCES])
def test_json_files_still_parse_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str],
                                        label: str, root: Path) -> None:
    files = _json_files(root)
    if not files:
        pytest.skip(f"no .json files under {root}")
    copies = []
    for i, f in enumerate(files):
        json.loads(f.read_text(encoding="utf-8"))  # the input itself is JSON
        dst = tmp_path / f"{i}-{f.name}"
        shutil.copyfile(f, dst)
        copies.append(dst)
    main([*command, "--isolated", "--no-cache", *map(str, copies)])
    capsys.readouterr()
    for f, dst in zip(files, copies, strict=True):
        try:
            json.loads(dst.read_text(encoding="utf-8"))
        except ValueError as e:
            pytest.fail(f"{f} is no longer JSON after `dralint {' '.join(command)}`: {e}")


def test_the_json_dump_example_is_skipped_with_the_reason(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    src = EXAMPLES / "legacy" / "dumps" / "running-pods.json"
    dst = tmp_path / "running-pods.json"
    shutil.copyfile(src, dst)
    main(["migrate", "--isolated", "--no-cache", "--format", "json", str(dst)])
    report = json.loads(capsys.readouterr().out)
    (w,) = report["workloads"]
    assert w["status"] == "skipped" and "JSON file" in w["reason"]
    assert dst.read_bytes() == src.read_bytes()


def test_the_write_gate_refuses_a_json_file_that_is_no_longer_json() -> None:
    before = load_bytes("list.json", b'{"apiVersion": "v1", "kind": "List", "items": []}\n')
    # still one YAML document (a flow mapping continued on the next line), but not JSON
    after = load_bytes("list.json", b'{"apiVersion": "v1", "kind": "List", "items": []\n}\n')
    assert verify(before, after, [0], {0}) is None  # the same content in other JSON layout is fine
    broken = load_bytes("list.json", b'{"apiVersion": "v1", "kind": "List", "items": [],}\n')
    assert verify(before, broken, [0], {0}) == "the result is no longer valid JSON"
