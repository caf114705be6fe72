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
