"""The Python API contract (issue 16, point 7): `select` as a string or a list, `Finding.to_dict()` is
the JSON contract, `lint_paths`, `migrate_text`, `ParseError` from `fix_text`, and the README example."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

import dralint
from dralint.cli.app import main
from tests.conftest import REPO

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml
spec:
  resourceClaims:
  - name: unused
    resourceClaimTemplateName: somewhere
  containers:
  - name: main
    image: cuda:12
    resources:
      limits:
        nvidia.com/gpu: 1
"""


def rules(findings: list[dralint.api.Finding]) -> list[str]:
    return sorted({f.rule for f in findings})


def test_select_takes_a_string() -> None:
    assert rules(dralint.lint_text(POD, select="DRA201")) == ["DRA201"]
    assert rules(dralint.lint_text(POD, select="DRA201, DRA302")) == ["DRA201", "DRA302"]


def test_select_takes_a_list_and_ignore_a_string() -> None:
    assert rules(dralint.lint_text(POD, select=["DRA201", "DRA302"])) == ["DRA201", "DRA302"]
    # the template `somewhere` is not in the text: DRA304 stays
    assert rules(dralint.lint_text(POD, select=["DRA2", "DRA3"], ignore="DRA302")) == ["DRA201", "DRA304"]


def test_to_dict_is_the_json_contract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pod.yaml").write_text(POD, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["check", "--isolated", "--no-cache", "--format", "json", "pod.yaml"])
    cli = json.loads(out.getvalue())["findings"]
    api = [f.to_dict() for f in dralint.lint_text(POD, path="pod.yaml")]
    assert json.loads(json.dumps(api)) == cli
    (gpu,) = [d for d in api if d["rule"] == "DRA201"]
    # the position and object, read from POD: `nvidia.com/gpu` on line 15, column 9
    assert (gpu["line"], gpu["column"], gpu["severity"]) == (15, 9, "warning")
    assert gpu["object"] == {"apiVersion": "v1", "kind": "Pod", "namespace": "ml", "name": "trainer"}


def test_lint_paths_takes_one_path_or_several(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the cwd must stay free of a cache too; a fresh one shows it
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "pod.yaml").write_text(POD, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(POD.replace("trainer", "other"), encoding="utf-8")
    one = dralint.lint_paths(str(tmp_path / "a"), select="DRA201")
    assert [Path(f.path).name for f in one] == ["pod.yaml"]
    both = dralint.lint_paths([str(tmp_path / "a"), str(tmp_path / "b.yaml")], select=["DRA201"])
    assert sorted(Path(f.path).name for f in both) == ["b.yaml", "pod.yaml"]
    json.dumps([f.to_dict() for f in both])
    with pytest.raises(FileNotFoundError):
        dralint.lint_paths(str(tmp_path / "nope"))
    assert not (tmp_path / ".dralint_cache").exists()


def test_migrate_text_returns_the_text_and_the_summary() -> None:
    got = dralint.migrate_text(POD.replace("  resourceClaims:\n  - name: unused\n    resourceClaimTemplateName: "
                                           "somewhere\n", ""))
    assert got.changed
    # the limit is gone; what remains of the name is the toleration migrate adds for the GPU taint
    assert "nvidia.com/gpu:" not in got.text and "key: nvidia.com/gpu" in got.text
    assert got.summary["summary"]["tolerations_added"] == 1
    assert "kind: ResourceClaimTemplate" in got.text and "name: trainer-gpu" in got.text
    assert got.summary["summary"]["migrated"] == 1
    json.dumps(got.summary)
    assert dralint.lint_text(got.text, select="DRA201") == []


def test_migrate_text_leaves_clean_text_alone() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
    got = dralint.migrate_text(text)
    assert (got.text, got.changed, got.summary["summary"]["migrated"]) == (text, False, 0)


@pytest.mark.parametrize(("text", "line"), [
    ("apiVersion: v1\nkind: Pod\nmetadata: [unclosed\n", 4),
    ('{"apiVersion": "v1", "kind": "Pod",\n "metadata": {\n', 3),
])
def test_fix_text_raises_parse_error(text: str, line: int) -> None:
    with pytest.raises(dralint.ParseError) as err:
        dralint.fix_text(text, path="broken.yaml")
    assert err.value.finding.rule == "DRA001"
    assert str(err.value).startswith("broken.yaml:")
    assert err.value.finding.span.line <= line


def test_migrate_text_raises_parse_error() -> None:
    with pytest.raises(dralint.ParseError):
        dralint.migrate_text("kind: Pod\nspec: {containers: [\n")


def test_readme_example_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    intro = readme.index("The same from Python")
    m = re.search(r"```python\n(.*?)```", readme[intro:], re.S)
    assert m is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(m.group(1), "README.md", "exec"), {})  # the project's own README
    printed = out.getvalue().splitlines()
    assert json.loads(printed[0])[0]["rule"] == "DRA201"
    assert printed[1].startswith("{'migrated': 1")
    assert printed[2].startswith("DRA001 ")
