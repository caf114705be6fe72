"""The cluster profile: what the manifests will be applied to.

Target Kubernetes minor, feature gates and runtime-config switched on or off by the operator, the
DRA drivers installed (with their release and driver feature gates) and an optional device
inventory. Version knowledge itself lives in ``schemas/`` data; this module only holds the user's
choices and their defaults.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from dralint.knowledge.catalog import load_data


class ProfileError(ValueError):
    """A profile value the user gave is malformed (reported as a usage error, exit 2)."""


@dataclass(frozen=True)
class DriverProfile:
    name: str
    version: str | None = None  # None = newest release in the data
    feature_gates: dict[str, bool] = field(default_factory=dict)
    #: device classes this driver installs, as the configuration lists them (for drivers without data)
    device_classes: tuple[str, ...] = ()


@dataclass
class ClusterProfile:
    kubernetes_version: str = ""  # "1.35"; empty = newest minor in the data
    feature_gates: dict[str, bool] = field(default_factory=dict)
    runtime_config: dict[str, bool] = field(default_factory=dict)
    drivers: list[DriverProfile] = field(default_factory=list)
    inventory: list[str] = field(default_factory=list)
    #: extra legacy extended resources from config (same shape as schemas/extended-resources.yaml)
    extended_resources: list[dict[str, Any]] = field(default_factory=list)
    #: chart name (gpu-operator | dra-driver | device-plugin) -> globs of Helm values files of that chart
    #: (DRA207), for values not recognised by content
    values_files: dict[str, list[str]] = field(default_factory=dict)
    #: device classes the cluster has beyond what the linted files and known drivers define
    #: (`device-classes:` in the configuration, `--device-class`)
    device_classes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.kubernetes_version:
            self.kubernetes_version = newest_minor()
        self.kubernetes_version = normalize_minor(self.kubernetes_version)

    @property
    def minor(self) -> tuple[int, int]:
        major, minor = self.kubernetes_version.split(".")
        return int(major), int(minor)


def known_minors() -> list[str]:
    """Minors the lifecycle data describes, oldest first."""
    try:
        data = load_data("kubernetes/lifecycle.yaml")
    except FileNotFoundError:
        return ["1.37"]
    minors = list((data or {}).get("minors", {}) or {})
    return sorted(minors, key=lambda m: tuple(int(x) for x in m.split("."))) or ["1.37"]


def newest_minor() -> str:
    return known_minors()[-1]


def normalize_minor(text: str) -> str:
    """'v1.35.2', '1.35' -> '1.35'."""
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?", str(text).strip())
    if not m:
        raise ProfileError(f"invalid Kubernetes version {text!r}; expected e.g. 1.35 or v1.35.2")
    return f"{int(m.group(1))}.{int(m.group(2))}"


def target_minor(text: str) -> str:
    """A target version the user asked for: normalised, and not older than the data dralint has.

    DRA before 1.32 is a different API (classic DRA, v1alpha2/v1alpha3) that dralint does not model, so
    pretending to check it would be worse than refusing. Newer minors than the data are judged with the
    newest data (`--verbose` says so).
    """
    minor = normalize_minor(text)
    oldest = known_minors()[0]
    if _key(minor) < _key(oldest):
        raise ProfileError(
            f"Kubernetes {minor} is older than the oldest minor dralint knows ({oldest}); "
            "DRA before 1.32 was a different API"
        )
    return minor


def _key(minor: str) -> tuple[int, int]:
    a, b = minor.split(".")
    return int(a), int(b)


def parse_bool_map(text: str, what: str) -> dict[str, bool]:
    """'A=true,B=false' -> {'A': True, 'B': False} (as kube components take them)."""
    out: dict[str, bool] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep or value.strip().lower() not in ("true", "false"):
            raise ProfileError(f"invalid {what} entry {part!r}; expected Name=true or Name=false")
        out[name.strip()] = value.strip().lower() == "true"
    return out
