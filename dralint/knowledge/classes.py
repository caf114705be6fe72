"""Which device classes a cluster has, and how sure dralint can be that one is missing.

dralint has data for a few driver projects (``schemas/drivers/*.yaml``); every other DRA driver
(the Kubernetes example driver, GKE's network drivers, a vendor's own) is unknown to it. A class
that is neither defined in the linted files nor installed by a known driver is therefore only
*provably* absent in a few cases:

- a known driver project defines it but the profile does not install that component or release
  (the data says so: `drivers.stale_class_note`);
- it is a near-miss of a class that does exist (one or two edits away: a typo);

Everything else may well be installed by a driver dralint has no data for, so it is reported as a
warning that says how to declare it (`device-classes:` in the configuration, a `drivers:` entry
with its `device-classes`, or the DeviceClass manifest in the linted set).

Unknown drivers the profile lists (``--driver gpu.example.com``) are taken as installed: the
classes their entry lists exist, and so does a class named after the driver or a subdomain of it
(``gpu.example.com``, ``vfio.gpu.example.com``), the naming most drivers follow.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from dralint.knowledge import drivers
from dralint.knowledge.profile import ClusterProfile, ProfileError
from dralint.suggest import closest, within_edits

#: a DRA driver name is a DNS subdomain (the API server validates `device.driver` so)
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def unknown_drivers(profile: ClusterProfile) -> list[str]:
    """Drivers the profile lists that dralint has no data for, in the order given."""
    return [d.name for d in profile.drivers if not drivers.knows_driver(d.name)]


def declared_classes(profile: ClusterProfile) -> set[str]:
    """Classes the configuration declares installed: `device-classes:` and every `drivers[].device-classes`."""
    out = {str(c) for c in profile.device_classes}
    for d in profile.drivers:
        out.update(str(c) for c in d.device_classes)
    return out


def unknown_driver_of(name: str, profile: ClusterProfile) -> str | None:
    """The listed unknown driver a class belongs to by its name (equal to the driver or a subdomain of it)."""
    for d in unknown_drivers(profile):
        if name == d or name.endswith("." + d):
            return d
    return None


def is_typo(name: str, of: str) -> bool:
    """``name`` is a misspelling of ``of``: at most one edit for short names, two from 12 characters.

    Deliberately tighter than the did-you-mean hint: `mig.nvidia.com` and `gpu.nvidia.com` are
    both real classes three edits apart, and `gpu.example.com` is no typo of `gpu.nvidia.com`.
    """
    if name == of:
        return False
    return within_edits(name, of, 2 if min(len(name), len(of)) >= 12 else 1)


@dataclass(frozen=True)
class Missing:
    """Why a referenced class was not found, and whether that is proven."""

    #: True: the class cannot exist in the configured cluster (error); False: it may (warning)
    proven: bool
    #: a clause for the message (starts lower-case, no trailing period)
    reason: str


def explain_missing(name: str, profile: ClusterProfile, known: AbstractSet[str]) -> Missing:
    """Judge a class that is neither in the linted files nor in ``known`` (defined + installed + declared)."""
    note = drivers.stale_class_note(name, profile)
    if note:
        return Missing(True, note)
    candidates = sorted(known | drivers.data_class_names())
    typo = next((c for c in candidates if is_typo(name, c)), None)
    if typo is not None:
        return Missing(True, f"it looks like a misspelling of `{typo}`")
    near = closest(name, candidates)
    hint = f" (the nearest known class is `{near}`)" if near else ""
    return Missing(
        False,
        f"no driver dralint has data for installs it{hint}; if the cluster has it, declare it "
        f"(`device-classes: [{name}]` in the configuration or `--device-class {name}`) or add its DeviceClass "
        "to the linted files",
    )


def validate(profile: ClusterProfile) -> None:
    """ProfileError for a driver entry dralint cannot honour: a malformed name or a typo of a known
    driver (a version or feature gates of a driver without data are kept but cannot be checked:
    `describe_unknown` says so under --verbose)."""
    known = drivers.known_drivers()
    for d in profile.drivers:
        if drivers.knows_driver(d.name):
            continue
        if len(d.name) > 253 or not _DNS_SUBDOMAIN.fullmatch(d.name):
            raise ProfileError(f"driver {d.name!r}: not a valid DRA driver name (a lower-case DNS subdomain "
                               "such as gpu.example.com)")
        near = next((k for k in known if is_typo(d.name, k)), None)
        if near:
            raise ProfileError(f"driver {d.name!r}: dralint has no data for it; did you mean {near}?")
    for c in sorted(declared_classes(profile)):
        if len(c) > 253 or not _DNS_SUBDOMAIN.fullmatch(c):
            raise ProfileError(f"device class {c!r}: not a valid DeviceClass name (a lower-case DNS subdomain)")


def describe_unknown(profile: ClusterProfile) -> list[str]:
    """One line per listed driver without data, for --verbose: what dralint takes it to mean."""
    out = []
    for name in unknown_drivers(profile):
        entry = next(d for d in profile.drivers if d.name == name)
        listed = ", ".join(f"`{c}`" for c in entry.device_classes)
        classes = f"{listed} and " if listed else ""
        unchecked = "its version, feature gates, attributes and configs are not checked"
        out.append(f"{name}: no data in dralint; taken as installed, with device classes {classes}"
                   f"`{name}` / `*.{name}`; {unchecked}")
    return out
