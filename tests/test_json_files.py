"""A JSON file stays JSON: `migrate` and `fix --unsafe-fixes` over every .json file of `examples/` and
of the shared corpus (when present) leave each one parseable by a JSON parser, and the write gate
refuses a result that YAML accepts but JSON does not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dralint.cli import main
from dralint.engine.config import build_config
from dralint.fix.gates import verify
from dralint.inputs.load import load_bytes
from dralint.migrate.records import MigrateOptions
from dralint.migrate.run import migrate_files
from tests.conftest import CORPUS, EXAMPLES, REPO


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


def _item_spans(text: str) -> list[str]:
    """The text of each item of a JSON List, cut at the positions the loader reports."""
    items = load_bytes("x.json", text.encode()).documents[0].data["items"]
    return [text[items.lc[2 * i]: items.lc[2 * i + 1]] for i in range(len(items))]


def test_a_json_list_gets_its_templates_as_items_and_keeps_every_other_byte(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = EXAMPLES / "legacy" / "dumps" / "running-pods.json"
    dst = tmp_path / "running-pods.json"
    shutil.copyfile(src, dst)
    before = src.read_text(encoding="utf-8")
    assert main(["migrate", "--isolated", "--no-cache", "--format", "json", str(dst)]) == 0
    report = json.loads(capsys.readouterr().out)
    (w,) = report["workloads"]
    assert (w["status"], w["name"]) == ("migrated", "cuda-vectoradd")
    after = dst.read_text(encoding="utf-8")
    data, old = json.loads(after), json.loads(before)
    # the template is the item right after its workload; the untouched item keeps its exact text
    assert [(i["kind"], i["metadata"]["name"]) for i in data["items"]] == [
        ("Pod", "cuda-vectoradd"), ("ResourceClaimTemplate", "cuda-vectoradd-gpu"), ("Pod", "web")]
    assert _item_spans(after)[2] == _item_spans(before)[1]
    # outside `items` nothing changed, byte for byte
    head = before[: before.index('"items"')]
    assert after.startswith(head) and after.endswith(before[before.rindex("],"):])
    pod = data["items"][0]["spec"]
    assert pod["containers"][0]["resources"] == {"claims": [{"name": "gpu"}]}
    assert pod["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "cuda-vectoradd-gpu"}]
    # inside the migrated item, the members migrate does not change keep their text
    assert '"metadata": {"name": "cuda-vectoradd", "namespace": "default"},' in _item_spans(after)[0]
    assert old["items"][0]["metadata"] == data["items"][0]["metadata"]
    # a second run has nothing to do
    assert main(["migrate", "--isolated", "--no-cache", str(dst)]) == 0
    capsys.readouterr()
    assert dst.read_text(encoding="utf-8") == after


def test_a_single_object_json_file_is_skipped_with_the_reason(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    dst = tmp_path / "pod.json"
    text = ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": '
            '[{"name": "c", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}\n')
    dst.write_text(text)
    assert main(["migrate", "--isolated", "--no-cache", "--format", "json", str(dst)]) == 0
    (w,) = json.loads(capsys.readouterr().out)["workloads"]
    assert w["status"] == "skipped" and "only object of a JSON file" in w["reason"] and w["line"] == 1
    assert dst.read_text() == text


def test_a_one_line_json_list_stays_on_one_line() -> None:
    text = ('{"kind": "List", "apiVersion": "v1", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": '
            '{"name": "p"}, "spec": {"containers": [{"name": "c", "image": "cuda", "resources": {"limits": '
            '{"nvidia.com/gpu": 2}}}]}}]}\n')
    rep = migrate_files([load_bytes("l.json", text.encode())], [], build_config({}, None, REPO), MigrateOptions())
    after = rep.files[0].after.decode()
    assert after.count("\n") == 1
    items = json.loads(after)["items"]
    assert [i["kind"] for i in items] == ["Pod", "ResourceClaimTemplate"]
    assert items[1]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2


def test_the_write_gate_refuses_a_json_file_that_is_no_longer_json() -> None:
    before = load_bytes("list.json", b'{"apiVersion": "v1", "kind": "List", "items": []}\n')
    # still one YAML document (a flow mapping continued on the next line), but not JSON
    after = load_bytes("list.json", b'{"apiVersion": "v1", "kind": "List", "items": []\n}\n')
    assert verify(before, after, [0], {0}) is None  # the same content in other JSON layout is fine
    broken = load_bytes("list.json", b'{"apiVersion": "v1", "kind": "List", "items": [],}\n')
    assert verify(before, broken, [0], {0}) == "the result is no longer valid JSON"


def _pod(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}


def test_every_workload_of_a_crlf_json_list_is_migrated_in_one_run() -> None:
    data = {"apiVersion": "v1", "kind": "List",
            "items": [_pod("a"), {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, _pod("b")]}
    raw = (json.dumps(data, indent=2) + "\n").replace("\n", "\r\n").encode()
    rep = migrate_files([load_bytes("l.json", raw)], [], build_config({}, None, REPO), MigrateOptions())
    assert [w.status for w in rep.workloads] == ["migrated", "migrated"]
    after = rep.files[0].after
    # one line ending throughout, the one the file had
    assert after.count(b"\n") == after.count(b"\r\n")
    items = json.loads(after)["items"]
    # the second pod reuses the first one's template (same spec): one new item, after the first pod
    assert [i["kind"] for i in items] == ["Pod", "ResourceClaimTemplate", "ConfigMap", "Pod"]
    assert items[3]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] == items[1]["metadata"]["name"]
    # the ConfigMap item keeps its bytes
    assert _item_spans(after.decode())[2] == _item_spans(raw.decode())[1]
