"""What rendering is asked to do and how it fails: the part of `dralint.inputs.render` every run needs.

A check without charts or kustomizations only asks whether a path is a kustomization and may raise
a render error; the renderer itself (Helm, kustomize, their sandbox and position markers) is
imported when something is rendered."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dralint.model import ConfigError

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
RELEASE_NAME = "dralint"


class RenderError(ConfigError):
    """A chart or kustomization could not be rendered (exit code 2)."""


class RenderFailed(RenderError):
    """The renderer ran and failed on the input itself (a template error, `fail`, a timeout): for a
    chart, one finding at its Chart.yaml. Every other RenderError (no renderer, not a chart, a bad
    setting, a refused input) stops the run with exit code 2."""


@dataclass
class HelmOptions:
    """How one chart is rendered: what `helm template` takes on its command line."""

    values_files: Sequence[str] = ()
    sets: Sequence[str] = ()
    set_strings: Sequence[str] = ()
    release_name: str = RELEASE_NAME
    namespace: str | None = None
    #: the target minor ("1.33"): `.Capabilities.KubeVersion` is v<minor>.0
    kube_version: str | None = None
    #: added to Helm's built-in list (offline Helm always has its own): `.Capabilities.APIVersions`
    api_versions: Sequence[str] = ()
    #: resource.k8s.io/<v>[/<Kind>] the target serves: `.Capabilities.APIVersions.Has` on that group
    #: answers from it (`helm_positions.pin_capabilities`); None leaves Helm's built-in answer
    resource_versions: Sequence[str] | None = None


def kustomization_file(path: str | Path) -> Path | None:
    p = Path(path)
    if not p.is_dir():
        return None
    for n in KUSTOMIZATION_NAMES:
        if (p / n).is_file():
            return p / n
    return None
