"""Render one Helm chart with the Helm Go SDK (``helm_python``), in a child process of its own.

The SDK runs the chart's templates inside the process that loads it: a template that loops for
ever, allocates without end or reaches the network would do so in dralint itself. So dralint starts
this file through `dralint.inputs.sandbox` as ``python -I -B <this file>`` and talks JSON:

stdin   ``{"path": dir holding helm_python, "chart": dir, "values": {...}, "name": str, "namespace": str,
        "kube_version": "v1.33.0" | null, "api_versions": [str]}``
stdout  ``{"manifests": {template path: text}}`` or ``{"error": str, "stage": "load" | "render"}``

It imports only the standard library and ``helm_python`` (``-I`` keeps dralint itself, the
environment and the current directory off ``sys.path``).
"""

from __future__ import annotations

import json
import sys
from typing import Any


def render(request: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, str(request["path"]))
    try:
        import helm_python
    except Exception as e:  # the native library may not load on this platform
        return {"error": str(e), "stage": "load"}
    opts: dict[str, Any] = {"name": request["name"], "namespace": request["namespace"], "is_install": True}
    if request.get("kube_version"):
        opts["kube_version"] = request["kube_version"]
    if request.get("api_versions"):
        opts["api_versions"] = list(request["api_versions"])
    try:
        with helm_python.Chart.load(str(request["chart"])) as chart:
            # `Chart.render` of the wrapper does not pass kube_version/api_versions on; the native
            # call it makes takes them, so this calls it with the whole option set
            native = getattr(helm_python, "_native", None)
            if native is not None and hasattr(native, "call_string") and hasattr(chart, "_raw"):
                manifests = json.loads(native.call_string("helm_render", chart._raw(),
                                                          json.dumps(request["values"]), json.dumps(opts)))
            else:
                manifests = chart.render(request["values"], name=request["name"],
                                         namespace=request["namespace"], is_install=True)
    except helm_python.HelmError as e:
        return {"error": str(e), "stage": "render"}
    return {"manifests": manifests}


def main() -> None:
    reply = render(json.loads(sys.stdin.buffer.read()))
    sys.stdout.buffer.write(json.dumps(reply).encode("utf-8"))


if __name__ == "__main__":
    main()
