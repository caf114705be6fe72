"""DRA driver knowledge from ``schemas/drivers/*.yaml``: classes each driver release installs."""

from __future__ import annotations

from functools import cache
from typing import Any

from dralint.catalog import load_data, schemas_dir
from dralint.profile import ClusterProfile


@cache
def _driver_files() -> tuple[dict[str, Any], ...]:
    d = schemas_dir() / "drivers"
    if not d.is_dir():
        return ()
    return tuple(load_data(f"drivers/{p.name}") for p in sorted(d.glob("*.yaml")))


def _release(data: dict[str, Any], version: str | None) -> dict[str, Any]:
    releases = data.get("releases", {})
    key = (version or str(data.get("newest", ""))).lstrip("v")
    return releases.get(key) or releases.get(str(data.get("newest", ""))) or {}


def installed_classes(profile: ClusterProfile) -> set[str]:
    """Device classes installed by the configured drivers (default: every known driver, newest release)."""
    out: set[str] = set()
    for data in _driver_files():
        names = set(data.get("drivers", []))
        chosen = [d for d in profile.drivers if d.name in names]
        if profile.drivers and not chosen:
            continue
        version = chosen[0].version if chosen else None
        out |= set(_release(data, version).get("device-classes", {}))
    return out


def stale_class_note(name: str, profile: ClusterProfile) -> str | None:
    for data in _driver_files():
        note = data.get("stale-device-classes", {}).get(name)
        if note:
            return str(note).strip()
    return None


def _releases_for(profile: ClusterProfile, driver: str) -> dict[str, Any] | None:
    for data in _driver_files():
        if driver in data.get("drivers", []):
            chosen = [d for d in profile.drivers if d.name in data.get("drivers", [])]
            return _release(data, chosen[0].version if chosen else None)
    return None


def knows_driver(driver: str) -> bool:
    """True when dralint has data for this driver (so unknown attributes can be reported)."""
    return any(driver in data.get("drivers", []) for data in _driver_files())


def attributes(profile: ClusterProfile, driver: str) -> dict[str, str]:
    """Attribute name -> type (bool|int|string|version) that ``driver`` publishes in the configured release.

    Names are as CEL sees them under ``device.attributes['<driver>']``; standard attributes in other
    domains (``resource.kubernetes.io``) are listed under that domain as a driver key of their own.
    """
    rel = _releases_for(profile, driver) or {}
    return dict(rel.get("attributes", {}).get(driver, {}))


def capacities(profile: ClusterProfile, driver: str) -> dict[str, str]:
    """Capacity name -> 'quantity' for ``driver`` in the configured release."""
    rel = _releases_for(profile, driver) or {}
    return dict(rel.get("capacities", {}).get(driver, {}))
