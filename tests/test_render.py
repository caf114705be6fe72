"""Helm charts and kustomizations: rendered offline by the real tools, findings mapped to the sources.

Which Helm runs: a `helm` binary on PATH, else the Helm Go SDK from the `helm-python-sdk` wheel
(`pip install 'dralint[helm]'`; .ci/run installs it). Tests that need an engine that is missing
are skipped with the reason shown in `pytest -rs`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dralint.cli.app import main
from dralint.inputs import render, sandbox
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures"
CHART = "chart/gpu-app"

HAVE_SDK = importlib.util.find_spec("helm_python") is not None
HELM_BIN = shutil.which("helm")
KUSTOMIZE = shutil.which("kustomize") or shutil.which("kubectl")

needs_sdk = pytest.mark.skipif(not HAVE_SDK, reason="Helm SDK not installed (pip install 'dralint[helm]')")
needs_helm_bin = pytest.mark.skipif(HELM_BIN is None, reason="no `helm` binary on PATH")
needs_kustomize = pytest.mark.skipif(KUSTOMIZE is None, reason="neither `kustomize` nor `kubectl` on PATH")


@pytest.fixture
def fixtures(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(FIXTURES)
    return FIXTURES


def check_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    code = main(["check", "--isolated", "--format", "json", *args])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else {}), out.err


# --------------------------------------------------------------------------------------------------
# --set and stream splitting (pure functions)


@pytest.mark.parametrize(("expr", "expected"), [
    ("a=1", {"a": 1}),
    ("a.b=true,c=null,d=007,e=1.5", {"a": {"b": True}, "c": None, "d": "007", "e": "1.5"}),
    ("list[1]=x", {"list": [None, "x"]}),
    ("list[0].name=gpu", {"list": [{"name": "gpu"}]}),
    ("tags={a,b,3}", {"tags": ["a", "b", 3]}),
    (r"nodeSelector.nvidia\.com/gpu\.product=A100", {"nodeSelector": {"nvidia.com/gpu.product": "A100"}}),
    (r"msg=a\,b", {"msg": "a,b"}),
])
def test_parse_set(expr: str, expected: dict[str, Any]) -> None:
    values: dict[str, Any] = {}
    render.parse_set(expr, values)
    assert values == expected


def test_parse_set_merges_into_existing_values_and_rejects_garbage() -> None:
    values: dict[str, Any] = {"a": {"keep": 1}}
    render.parse_set("a.new=2", values)
    assert values == {"a": {"keep": 1, "new": 2}}
    with pytest.raises(render.RenderError, match="has no `=`"):
        render.parse_set("novalue", {})


def test_split_documents() -> None:
    stream = "---\n# Source: c/templates/a.yaml\nkind: A\n---\n\n---   \nkind: B\n--- # comment\nkind: C\n"
    assert render.split_documents(stream) == ["# Source: c/templates/a.yaml\nkind: A\n", "kind: B\n", "kind: C\n"]


# --------------------------------------------------------------------------------------------------
# Helm


@needs_sdk
def test_helm_chart_findings_point_at_the_template(fixtures: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DRALINT_HELM", "sdk")
    code, doc, _ = check_json(["--helm-chart", CHART], capsys)
    assert code == 1
    (f,) = doc["findings"]
    assert f["rule"] == "DRA201"
    assert f["path"] == "chart/gpu-app/templates/deployment.yaml"
    assert f["source"] == "gpu-app/templates/deployment.yaml"
    # the line of `nvidia.com/gpu:` in the template itself, not in the rendered output
    template = (fixtures / CHART / "templates" / "deployment.yaml").read_text(encoding="utf-8").splitlines()
    assert template[f["line"] - 1][f["column"] - 1:].startswith("nvidia.com/gpu: {{ .Values.gpus }}")
    assert f["object"] == {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": None,
                           "name": "dralint-gpu-app"}
    assert "`nvidia.com/gpu: 1`" in f["message"]
    # the template files themselves are not linted as manifests (no DRA003 on `{{ }}`)
    assert doc["summary"]["files"] == 1


@needs_sdk
def test_helm_values_and_set_are_applied(fixtures: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DRALINT_HELM", "sdk")
    _, doc, _ = check_json(["--helm-chart", CHART, "--set", "gpus=3"], capsys)
    assert ["`nvidia.com/gpu: 3`" in f["message"] for f in doc["findings"]] == [True]
    code, doc, _ = check_json(["--helm-chart", CHART, "-f", f"{CHART}/values-dra.yaml", "--select", "DRA2,DRA3",
                               "--driver", "gpu.nvidia.com"], capsys)
    assert code == 0, doc
    assert doc["summary"]["objects"] == 2  # the Deployment and its ResourceClaimTemplate


@needs_sdk
def test_helm_chart_sarif_points_at_the_template(fixtures: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DRALINT_HELM", "sdk")
    main(["check", "--isolated", "--format", "sarif", "--helm-chart", CHART])
    (res,) = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "chart/gpu-app/templates/deployment.yaml"
    assert res["properties"]["source"] == "gpu-app/templates/deployment.yaml"
    # where in the rendered output, and that rendered line itself (issue 14: "also report the rendered line")
    rendered = res["properties"]["renderedLocation"]
    assert set(rendered) == {"line", "column", "text"}
    assert "nvidia.com/gpu" in rendered["text"]


FAKE_HELM = '''\
#!{python}
"""A stand-in for the helm CLI (`helm template` only) built on the Helm SDK, recording how it is called."""
import json, os, sys
sys.path.insert(0, {repo!r})
import helm_python
from dralint.inputs.render import parse_set
args = sys.argv[1:]
with open({log!r}, "w") as fh:  # the environment is not ours to pass a path through: it is empty
    json.dump({{"argv": args, "cwd": os.getcwd(), "https_proxy": os.environ.get("HTTPS_PROXY"),
               "helm_config": os.environ.get("HELM_CONFIG_HOME")}}, fh)
assert args[0] == "template"
name, chart, rest = args[1], args[2], args[3:]
values = {{}}
while rest:
    flag, val, rest = rest[0], rest[1], rest[2:]
    if flag == "--set":
        parse_set(val, values)
with helm_python.Chart.load(chart) as c:
    for path, text in sorted(c.render(values, name=name).items()):
        if path.endswith("NOTES.txt") or text.strip() == "":
            continue
        sys.stdout.write("---\\n# Source: " + path + "\\n" + text)
'''


@needs_sdk
def test_helm_binary_path_is_called_offline(fixtures: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The `helm template` code path, driven through a stand-in CLI (there is no helm binary here)."""
    fake = tmp_path / "helm"
    log = tmp_path / "log.json"
    fake.write_text(FAKE_HELM.format(python=sys.executable, repo=str(REPO), log=str(log)), encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("DRALINT_HELM", str(fake))
    code, doc, err = check_json(["--helm-chart", CHART, "--set", "gpus=2", "--kubernetes-version", "1.34"], capsys)
    assert code == 1, err
    (f,) = doc["findings"]
    assert f["path"] == "chart/gpu-app/templates/deployment.yaml" and "`nvidia.com/gpu: 2`" in f["message"]
    called = json.loads(log.read_text(encoding="utf-8"))
    # it renders a copy of the chart (`./gpu-app` in a temporary directory), not the chart itself
    # the target version reaches .Capabilities.KubeVersion; the resource.k8s.io versions 1.34 serves
    # are added to .Capabilities.APIVersions
    argv = called["argv"]
    assert argv[:7] == ["template", "dralint", "./gpu-app", "--set", "gpus=2", "--kube-version", "v1.34.0"]
    extra = argv[7:]
    assert extra[0::2] == ["--api-versions"] * (len(extra) // 2) and "resource.k8s.io/v1" in extra[1::2]
    assert not Path(called["cwd"]).is_relative_to(FIXTURES) and not Path(called["cwd"]).exists()  # removed after
    assert called["https_proxy"] == "http://127.0.0.1:9"  # the network is closed to it
    assert not str(called["helm_config"]).startswith(os.path.expanduser("~"))


@needs_helm_bin
def test_real_helm_binary(fixtures: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DRALINT_HELM", str(HELM_BIN))
    code, doc, err = check_json(["--helm-chart", CHART], capsys)
    assert code == 1, err
    assert [f["path"] for f in doc["findings"]] == ["chart/gpu-app/templates/deployment.yaml"]


def test_no_helm_is_a_clear_error(fixtures: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DRALINT_HELM", "none")
    code = main(["check", "--isolated", "--helm-chart", CHART])
    err = capsys.readouterr().err
    assert code == 2
    assert "no Helm available to render chart/gpu-app" in err
    assert "pip install 'dralint[helm]'" in err


def test_helm_usage_errors(fixtures: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--isolated", "--set", "a=1", "kustomize/base/trainer.yaml"]) == 2
    assert "add --helm-chart DIR" in capsys.readouterr().err
    assert main(["check", "--isolated", "--helm-chart", "kustomize/base"]) == 2
    assert "not a Helm chart directory" in capsys.readouterr().err


@needs_sdk
def test_template_error_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    chart = tmp_path / "bad"
    shutil.copytree(FIXTURES / CHART, chart)
    (chart / "templates" / "broken.yaml").write_text("x: {{ .Values.nope.deeper }}\n", encoding="utf-8")
    monkeypatch.setenv("DRALINT_HELM", "sdk")
    # Helm's own error is the chart's DRA009 finding at its Chart.yaml (exit 1), with Helm's message
    assert main(["check", "--isolated", "--helm-chart", str(chart)]) == 1
    out = capsys.readouterr().out
    assert "bad/Chart.yaml:1:1: DRA009" in out and "nope" in out


# --------------------------------------------------------------------------------------------------
# kustomize


@needs_kustomize
def test_kustomization_is_rendered_and_mapped_to_its_files(fixtures: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, err = check_json(["kustomize/overlay"], capsys)
    assert code == 1, err
    got = sorted((f["rule"], f["path"], f["line"], f["column"]) for f in doc["findings"])
    assert got == [
        ("DRA201", "kustomize/base/trainer.yaml", 14, 15),  # `nvidia.com/gpu: 4` in the base
        ("DRA301", "kustomize/overlay/serve.yaml", 14, 13),  # `- name: gpus`
        ("DRA302", "kustomize/overlay/serve.yaml", 7, 7),
        ("DRA304", "kustomize/overlay/serve.yaml", 8, 7),
    ]
    # the overlay's transformations are what was linted
    objects = {(f["object"]["kind"], f["object"]["namespace"], f["object"]["name"]) for f in doc["findings"]}
    assert objects == {("Job", "ml", "prod-trainer"), ("Pod", "ml", "prod-serve")}
    assert all(f["source"] is None for f in doc["findings"])


def test_remote_base_is_refused_before_anything_runs(fixtures: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    def no_subprocess(*a: Any, **k: Any) -> Any:
        raise AssertionError("kustomize must not run for a remote base")

    # every renderer starts through the sandbox, and nothing else starts a process
    monkeypatch.setattr(sandbox, "run_sandboxed", no_subprocess)
    monkeypatch.setattr(subprocess, "Popen", no_subprocess)
    assert main(["check", "--isolated", "kustomize/remote"]) == 2
    err = capsys.readouterr().err
    assert "is a remote base; dralint renders offline only" in err


def test_missing_local_resource_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources:\n  - example.com/team/manifests\n", encoding="utf-8")
    assert main(["check", "--isolated", str(tmp_path)]) == 2
    assert "does not exist locally" in capsys.readouterr().err


@needs_kustomize
def test_report_renders_kustomizations_too(fixtures: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--isolated", "--format", "json", "kustomize/overlay"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["by_namespace"]) == {"ml"}
    assert doc["by_namespace"]["ml"]["device_plugin"] == 1


@needs_kustomize
def test_a_rendered_source_named_again_is_linted_once(fixtures: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, doc, _ = check_json(["kustomize/overlay", "kustomize/base/trainer.yaml"], capsys)
    trainer = [f for f in doc["findings"] if f["path"] == "kustomize/base/trainer.yaml"]
    assert [(f["rule"], f["object"]["name"], f["line"]) for f in trainer] == [("DRA201", "prod-trainer", 14)]
