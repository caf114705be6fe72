"""Charts are found among the linted paths, rendered (never linted raw), and findings land on the
template line that produced them (issue 14, points 1, 2 and 5).

Every expected position below was written by reading the template text in the test (or the
shared chart's template), not by running dralint."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from dralint.cli.app import cli
from dralint.inputs.render import helm_engine

from .conftest import CORPUS, PreCommit, git, requires_shared

pytestmark = pytest.mark.skipif(helm_engine() is None, reason="no Helm renderer (helm binary or dralint[helm])")

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "app.name" . }}
  namespace: {{ .Release.Namespace }}
spec:
  selector:
    matchLabels:
      app: x
  template:
    metadata:
      labels:
        app: x
    spec:
      containers:
        {{- if .Values.sidecar.enabled }}
        - name: sidecar
          image: busybox
          resources:
            limits:
              nvidia.com/gpu: 1
        {{- else }}
        - name: main
          image: cuda
          resources:
            {{- include "app.gpu" . | nindent 12 }}
        {{- end }}
        - name: other
          image: cuda
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
        {{- range .Values.workers }}
        - name: {{ . }}
          image: cuda
          resources:
            limits:
              nvidia.com/mig-1g.5gb: 1
        {{- end }}
"""
HELPERS = """\
{{- define "app.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- define "app.gpu" -}}
limits:
  nvidia.com/gpu: {{ .Values.gpus }}
{{- end }}
"""
VALUES = """\
sidecar:
  enabled: false
gpus: 1
resources:
  limits:
    nvidia.com/gpu: 2
workers: [w1, w2]
"""


def _chart(root: Path, name: str = "app", deploy: str = DEPLOY) -> Path:
    chart = root / "charts" / name
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "values.yaml").write_text(VALUES, encoding="utf-8")
    (chart / "templates" / "_helpers.tpl").write_text(HELPERS, encoding="utf-8")
    (chart / "templates" / "deploy.yaml").write_text(deploy, encoding="utf-8")
    return chart


def _run(args: list[str], cwd: Path) -> tuple[int, list[dict[str, object]], str]:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        r = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", *args], catch_exceptions=False)
    finally:
        os.chdir(old)
    try:
        findings = json.loads(r.stdout)["findings"]
    except (ValueError, KeyError):
        findings = []
    return r.exit_code, findings, r.output


def _where(findings: list[dict[str, object]], rule: str | None = None) -> list[tuple[str, object, object]]:
    return sorted((str(f["path"]), f["line"], f["column"]) for f in findings if rule is None or f["rule"] == rule)


def test_a_directory_holding_a_chart_is_rendered_not_linted_raw(tmp_path: Path) -> None:
    _chart(tmp_path)
    code, findings, out = _run(["."], tmp_path)
    assert code == 1, out
    assert not [f for f in findings if f["rule"] == "DRA003"], out  # the templates were never linted raw
    # read from DEPLOY/HELPERS: the else-branch `main` container's limit comes from the define
    # (_helpers.tpl line 6, `nvidia.com/gpu` at column 3); the disabled sidecar (line 21) is absent;
    # `other` is toYaml of values at deploy.yaml line 31 (the action starts at column 13)
    assert _where(findings, "DRA201") == [
        ("charts/app/templates/_helpers.tpl", 6, 3),
        ("charts/app/templates/deploy.yaml", 31, 13),
    ], out
    # each range iteration's MIG limit is the literal line 37, `nvidia.com/mig-1g.5gb` at column 15
    assert _where(findings, "DRA202") == [("charts/app/templates/deploy.yaml", 37, 15)] * 2, out
    from_values = [f for f in findings if f["rule"] == "DRA201" and f["line"] == 31]
    assert "from values `resources`" in str(from_values[0]["message"])


def test_the_enabled_branch_is_the_one_reported(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    _code, findings, out = _run([str(chart.relative_to(tmp_path)), "--set", "sidecar.enabled=true"], tmp_path)
    # sidecar limit: deploy.yaml line 21 `nvidia.com/gpu: 1`, column 15; the else branch is gone
    assert ("charts/app/templates/deploy.yaml", 21, 15) in _where(findings, "DRA201"), out
    assert not [f for f in findings if str(f["path"]).endswith("_helpers.tpl")], out


def test_a_changed_template_renders_its_chart_and_reports_that_file(tmp_path: Path) -> None:
    _chart(tmp_path)
    other = tmp_path / "charts" / "app" / "templates" / "cm.yaml"
    other.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n"
                     "    image: x\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n", encoding="utf-8")
    code, findings, out = _run(["charts/app/templates/cm.yaml"], tmp_path)
    assert code == 1 and _where(findings) == [("charts/app/templates/cm.yaml", 11, 9)], out
    # a changed values file: every template may change, so every finding of the chart is reported
    _code, findings, out = _run(["charts/app/values.yaml"], tmp_path)
    assert {str(f["path"]) for f in findings} >= {"charts/app/templates/cm.yaml", "charts/app/templates/deploy.yaml"}


def test_a_chart_that_fails_to_render_is_one_finding_at_chart_yaml(tmp_path: Path) -> None:
    _chart(tmp_path, deploy='{{ fail "needs --set image.tag" }}\n')
    code, findings, out = _run(["."], tmp_path)
    assert code == 1, out
    assert [(f["rule"], f["path"], f["line"]) for f in findings] == [("DRA009", "charts/app/Chart.yaml", 1)]
    assert "needs --set image.tag" in str(findings[0]["message"])
    assert "Traceback" not in out


CAPS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: caps
  namespace: {{ .Release.Namespace }}
  labels:
    release: {{ .Release.Name }}
data:
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
  v1: {{ .Capabilities.APIVersions.Has "resource.k8s.io/v1" | quote }}
  v1beta2: {{ .Capabilities.APIVersions.Has "resource.k8s.io/v1beta2" | quote }}
  extra: {{ .Capabilities.APIVersions.Has "example.com/v9" | quote }}
  tag: {{ .Values.tag | quote }}
"""


def _rendered_caps(tmp_path: Path, args: list[str]) -> dict[str, object]:
    from dralint.engine.charts import find_charts, options_for
    from dralint.engine.config import build_config
    from dralint.inputs.render import render_helm

    chart = _chart(tmp_path, deploy=CAPS)
    raw: dict[str, object] = {"kubernetes-version": args[0]} if args else {}
    cfg = build_config(raw, None, tmp_path)
    target = find_charts([str(chart)])[0]
    opts = options_for(target.directory, cfg, {"helm_namespace": "gpu", "helm_release_name": "rel",
                                                "helm_set_string": ["tag=0123"],
                                                "helm_api_versions": ["example.com/v9"]})
    import yaml

    r = render_helm(str(chart), options=opts)
    doc = next(sf for sf in r.files if sf.path.endswith("deploy.yaml"))
    data: dict[str, object] = yaml.safe_load(doc.text.split("---\n", 1)[1].split("\n", 1)[1])
    return data


def test_target_version_namespace_release_and_api_versions_reach_the_chart(tmp_path: Path) -> None:
    data = _rendered_caps(tmp_path, ["1.33"])
    assert data["metadata"] == {"name": "caps", "namespace": "gpu", "labels": {"release": "rel"}}
    d = data["data"]
    assert isinstance(d, dict)
    # 1.33 serves no resource.k8s.io version by default (v1 arrives in 1.34); Helm's own list has v1
    assert d == {"kube": "v1.33.0", "v1": "false", "v1beta2": "false", "extra": "true", "tag": "0123"}


def test_per_chart_config_gives_values_and_namespace(tmp_path: Path) -> None:
    chart = _chart(tmp_path, deploy='{{ required "tag" .Values.tag }}: {{ .Release.Namespace }}\n')
    (tmp_path / "ci-values.yaml").write_text("tag: from-config\n", encoding="utf-8")
    (tmp_path / ".dralint.yaml").write_text(
        "helm:\n  charts:\n    charts/app:\n      values: [ci-values.yaml]\n      namespace: gpu\n", encoding="utf-8")
    _code, findings, out = _run(["."], tmp_path)
    assert not [f for f in findings if f["rule"] == "DRA009"], out
    (tmp_path / ".dralint.yaml").write_text("helm:\n  charts:\n    charts/app:\n      namespace: gpu\n",
                                            encoding="utf-8")
    _code, findings, out = _run(["."], tmp_path)
    assert [f["rule"] for f in findings] == ["DRA009"], out
    assert chart.is_dir()


def test_markers_never_reach_the_parsed_output(tmp_path: Path) -> None:
    from dralint.inputs.render import render_helm

    chart = _chart(tmp_path)
    marked = render_helm(str(chart))
    plain = render_helm(str(chart), positions=False)
    assert [sf.text for sf in marked.files] == [sf.text for sf in plain.files]
    assert "#@dralint" not in "".join(sf.text for sf in marked.files)
    # every rendered document kept its positions: the markers changed nothing the template computed
    assert set(marked.line_origins) == {sf.path for sf in marked.files}
    assert not plain.line_origins


# -- the shared charts ------------------------------------------------------------------------------

CHARTS = CORPUS / "charts"
OLLAMA = CHARTS / "otwld" / "ollama-helm"
DRA_DRIVER = CHARTS / "kubernetes-sigs" / "dra-driver-nvidia-gpu" / "deployments" / "helm" / "dra-driver-nvidia-gpu"
DEVICE_PLUGIN = CHARTS / "NVIDIA" / "k8s-device-plugin" / "deployments" / "helm" / "nvidia-device-plugin"


def _copy(src: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "charts" / src.name
    shutil.copytree(src, dest, symlinks=True)
    return dest


@requires_shared
def test_ollama_gpu_limit_is_at_the_toyaml_line(tmp_path: Path) -> None:
    _copy(OLLAMA, tmp_path)
    _code, findings, out = _run(["charts", "--set", "ollama.gpu.enabled=true", "--set", "ollama.gpu.number=2"],
                               tmp_path)
    # templates/deployment.yaml line 130: `{{- toYaml $ressources | nindent 12 }}` prints the limits
    # that lines 109-110 merged (`nvidia.com/gpu` from values ollama.gpu.number)
    assert _where(findings, "DRA201") == [("charts/ollama-helm/templates/deployment.yaml", 130, 13)], out


@requires_shared
def test_dra_driver_chart_follows_the_target_version(tmp_path: Path) -> None:
    _copy(DRA_DRIVER, tmp_path)
    # 1.33 with v1beta2 switched on: the chart's resourceApiVersion helper must pick v1beta2, so
    # nothing is "not served" (DRA102) and the DRA gate is on (no DRA501)
    _code, findings, out = _run(["charts", "--kubernetes-version", "1.33", "--namespace", "gpu",
                                "--feature-gates", "DynamicResourceAllocation=true",
                                "--runtime-config", "resource.k8s.io/v1beta2=true",
                                "--set", "gpuResourcesEnabledOverride=true"], tmp_path)
    assert [f for f in findings if f["rule"] in ("DRA102", "DRA501", "DRA009")] == [], out
    # without the override its templates/validation.yaml `fail`s: one DRA009 with the chart's text
    _code, findings, out = _run(["charts", "--namespace", "gpu"], tmp_path)
    assert [(f["rule"], f["path"]) for f in findings] == [("DRA009", "charts/dra-driver-nvidia-gpu/Chart.yaml")]
    assert "gpuResourcesEnabledOverride=true" in str(findings[0]["message"])


@requires_shared
def test_a_chart_that_wants_a_namespace_says_how_to_give_it_one(tmp_path: Path) -> None:
    """The device plugin chart `fail`s in the default namespace; its DRA009 carries Helm's text on one
    line, and how to give the chart what it needs."""
    _copy(DEVICE_PLUGIN, tmp_path)
    _code, findings, out = _run(["charts"], tmp_path)
    failed = [f for f in findings if f["rule"] == "DRA009"]
    assert len(failed) == 1, out
    message = str(failed[0]["message"])
    assert "'default' namespace is not recommended" in message and "\n" not in message, message
    assert message.endswith("give it the values it needs (`--set`, `-f`, `--namespace`, or `helm: charts:` in the "
                            "configuration)"), message


@requires_shared
def test_device_plugin_chart_renders(tmp_path: Path) -> None:
    _copy(DEVICE_PLUGIN, tmp_path)
    _code, findings, out = _run(["charts", "--namespace", "nvidia"], tmp_path)
    assert [f for f in findings if f["rule"] in ("DRA003", "DRA009")] == [], out


@requires_shared
def test_render_cost_of_the_shared_charts(tmp_path: Path) -> None:
    """Timing for the lead's note (printed with -s); asserts only that both renders agree."""
    from dralint.inputs.render import HelmOptions, render_helm

    cases = [(OLLAMA, HelmOptions(sets=["ollama.gpu.enabled=true"])),
             (DRA_DRIVER, HelmOptions(sets=["gpuResourcesEnabledOverride=true"], namespace="gpu")),
             (DEVICE_PLUGIN, HelmOptions(namespace="nvidia"))]
    for chart, opts in cases:
        t0 = time.perf_counter()
        marked = render_helm(str(chart), options=opts)
        t1 = time.perf_counter()
        plain = render_helm(str(chart), options=opts, positions=False)
        t2 = time.perf_counter()
        assert [sf.text for sf in marked.files] == [sf.text for sf in plain.files]
        # the markers changed no document of the real chart (each one kept its template positions)
        assert set(marked.line_origins) == {sf.path for sf in marked.files}, chart.name
        print(f"\n{chart.name}: marked {t1 - t0:.2f}s, plain {t2 - t1:.2f}s", file=sys.stderr)


# -- pre-commit, as the README shows it ---------------------------------------------------------------


@pytest.mark.integration  # the real pre-commit, like tests/test_precommit.py
def test_readme_pre_commit_snippet_on_a_repo_with_a_chart_and_an_overlay(tmp_path: Path,
                                                                         pre_commit: PreCommit) -> None:
    repo = tmp_path / "manifests"
    repo.mkdir()
    _chart(repo)
    (repo / "base").mkdir()
    (repo / "base" / "kustomization.yaml").write_text("resources: [cm.yaml]\n", encoding="utf-8")
    (repo / "base" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
                                           encoding="utf-8")
    # the README's snippet, pointed at a snapshot of this checkout: `language: python` installs it from there
    (repo / ".pre-commit-config.yaml").write_text(pre_commit.config("dralint"), encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    r = pre_commit.run(repo, "run", "--all-files")
    out = r.stdout + r.stderr
    assert "DRA003" not in out, out  # no template is linted raw
    # the chart is rendered: its findings are DRA201/DRA202 on the templates, at template lines
    assert "charts/app/templates/deploy.yaml:31:13: DRA201" in out, out
    assert r.returncode == 1, out
