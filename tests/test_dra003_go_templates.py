"""DRA003 and Go templates that are data: a `{{range}}` inside a string (a `kubectl --template`
argument, an Argo script) is that program's text, not an unrendered Helm template; Helm's own
actions and a value that is a whole template still are (issue 13)."""

from __future__ import annotations

import pytest

from dralint.inputs.load import load_bytes

POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    image: alpine/k8s
    args:
    - ip=$(kubectl get svc etcd --template="{{range .status.loadBalancer.ingress}}{{.ip}}{{end}}")
      && echo $ip
    env:
    - name: X
      value: '{{inputs.parameters.etcd-ip}}:2379'
"""


def _dra003(text: str) -> list[int]:
    return [p.span.line for p in load_bytes("w.yaml", text.encode()).problems if p.code == "DRA003"]


def test_go_template_text_inside_a_string_is_data() -> None:
    sf = load_bytes("w.yaml", POD.encode())
    assert _dra003(POD) == []
    assert sf.documents and sf.documents[0].data["kind"] == "Pod"


@pytest.mark.parametrize(("line", "where"), [
    ("    image: \"{{ .Values.image }}\"\n", 8),  # a whole value
    ("    image: repo/{{ include \"img\" . }}\n", 8),  # Helm's own function, mid-string
    ("    image: x-{{ .Release.Name }}\n", 8),
    ("    image: \"{{ if .Values.a }}a{{ end }}\"\n", 8),
])
def test_helm_templates_are_still_reported(line: str, where: int) -> None:
    text = POD.replace("    image: alpine/k8s\n", line)
    assert _dra003(text) == [where]
