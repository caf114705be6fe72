"""GKE's GPU node labels (``schemas/gke.yaml``): which GPU model, MIG partition or sharing mode a
pod's ``nodeSelector`` picks on GKE, and the DRA class and CEL selectors that ask for the same."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from dralint.knowledge.catalog import load_data

#: a MIG profile as GKE writes it (`1g.5gb`); anything else is not turned into a selector
_PROFILE = re.compile(r"[0-9]+g\.[0-9]+gb")


@dataclass(frozen=True)
class GkeLabels:
    accelerator: str
    partition_size: str
    sharing_strategy: str
    max_shared_clients: str
    accelerators: dict[str, str]
    mig_class: str
    profile_cel: str
    product_cel: str


@lru_cache(maxsize=1)
def labels() -> GkeLabels:
    data: dict[str, Any] = load_data("gke.yaml")
    lab = data["labels"]
    return GkeLabels(
        str(lab["accelerator"]), str(lab["partition-size"]), str(lab["sharing-strategy"]),
        str(lab["max-shared-clients"]),
        {str(k): str(v) for k, v in (data.get("accelerators") or {}).items()},
        str(data["mig"]["device-class"]), str(data["mig"]["profile-cel"]), str(data["product-cel"]),
    )


@dataclass(frozen=True)
class GkeSelection:
    """What a pod's GKE node labels ask for (every field None when it names none of them)."""

    accelerator: str | None = None
    #: the NVML product name of `accelerator`, None when the table does not know it
    product: str | None = None
    partition: str | None = None
    sharing: str | None = None

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.accelerator, self.partition, self.sharing))


def selection(node_selector: Any) -> GkeSelection:
    """The GKE GPU labels of a ``nodeSelector`` mapping."""
    if not isinstance(node_selector, dict):
        return GkeSelection()
    t = labels()

    def value(key: str) -> str | None:
        v = node_selector.get(key)
        return str(v) if isinstance(v, (str, int, float)) and not isinstance(v, bool) else None

    acc = value(t.accelerator)
    return GkeSelection(acc, t.accelerators.get(acc) if acc else None, value(t.partition_size),
                        value(t.sharing_strategy))


def valid_profile(profile: str) -> bool:
    return bool(_PROFILE.fullmatch(profile))


def product_cel(vendor: str, product: str) -> str:
    return labels().product_cel.format(vendor=vendor, product=product.replace("'", "\\'"))


def profile_cel(vendor: str, profile: str) -> str:
    return labels().profile_cel.format(vendor=vendor, profile=profile)
