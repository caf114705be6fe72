"""`dralint report` counts workloads per group/kind, operator GPU fields included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dralint.cli.app import main

FILES = {
    "nim.yaml": """apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata: {name: llm}
spec:
  resources:
    limits: {nvidia.com/gpu: 2}
""",
    "volcano.yaml": """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj}
spec:
  tasks:
  - name: w
    replicas: 2
    template:
      spec:
        containers:
        - {name: c, image: cuda, resources: {limits: {nvidia.com/gpu: 1}}}
""",
    "job.yaml": """apiVersion: batch/v1
kind: Job
metadata: {name: bj}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: busybox}
""",
}


def test_report_counts_operator_and_group_qualified_workloads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    main(["report", "--isolated", "--format", "json", "."])
    data = json.loads(capsys.readouterr().out)
    kinds = {k: (g["workloads"], g["device_plugin"]) for k, g in data["by_kind"].items()}
    assert kinds == {"apps.nvidia.com/NIMService": (1, 1), "batch.volcano.sh/Job": (1, 1), "batch/Job": (1, 0)}
    assert data["summary"]["device_plugin"] == 2
