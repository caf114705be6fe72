"""DRA driver knowledge from ``schemas/drivers/*.yaml``, resolved for a cluster profile.

A data file describes one driver project (the NVIDIA chart ships two DRA drivers, ``gpu.nvidia.com``
and ``compute-domain.nvidia.com``) across its release lines: device classes, attributes and
capacities, opaque config kinds with their field schemas, driver feature gates and support status.
Items carry ``since``/``removed`` release keys; this module turns that into "what the configured
release has". Rules ask questions here and never read the YAML themselves.

The profile's ``drivers`` list names the installed DRA drivers (``gpu.nvidia.com=0.4.1``); with an
empty list every known driver is assumed at the data's ``newest`` release with its default gates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from types import MappingProxyType
from typing import Any, Literal

from dralint.knowledge import k8s
from dralint.knowledge import quantity as quantities
from dralint.knowledge.catalog import load_data, schemas_dir
from dralint.knowledge.profile import ClusterProfile, ProfileError
from dralint.suggest import closest

STANDARD_DOMAIN = "resource.kubernetes.io"

JsonPath = tuple["str | int", ...]


# --- the data files --------------------------------------------------------------------------------

class DriverData:
    """One ``schemas/drivers/<name>.yaml`` file: a driver project and its ordered release lines."""

    def __init__(self, name: str, raw: dict[str, Any]) -> None:
        self.file = name
        self.raw = raw
        self.title = str(raw.get("name", name))
        self.drivers: tuple[str, ...] = tuple(str(d) for d in raw.get("drivers", []))
        rel = raw.get("releases") or {}
        self.releases: tuple[str, ...] = tuple(rel)
        self._rank = {k: i for i, k in enumerate(self.releases)}
        self.newest = str(raw.get("newest") or (self.releases[-1] if self.releases else ""))
        self.release_info: dict[str, dict[str, Any]] = {k: (v or {}) for k, v in rel.items()}
        self.gate_defs: dict[str, dict[str, Any]] = {k: (v or {}) for k, v in (raw.get("feature-gates") or {}).items()}

    # versions ------------------------------------------------------------------------------------
    def rank(self, release: str) -> int:
        return self._rank[release]

    def present(self, item: Mapping[str, Any] | None, release: str) -> bool:
        """Whether an item with ``since``/``removed`` release keys exists in ``release``."""
        if not isinstance(item, Mapping):
            return True
        since, removed = item.get("since"), item.get("removed")
        r = self._rank[release]
        if since is not None and r < self._rank.get(str(since), -1):
            return False
        return not (removed is not None and r >= self._rank.get(str(removed), 1 << 30))

    def has_gates(self, release: str) -> bool:
        return self.release_info.get(release, {}).get("feature-gates", True) is not False

    def known_versions_text(self) -> str:
        parts = []
        for k in self.releases:
            vs = [str(v) for v in self.release_info[k].get("versions", [])]
            parts.append(f"{k} ({', '.join(vs)})" if vs and vs != [k.lstrip("v")] else k)
        return ", ".join(parts)

    def resolve(self, version: str | None, driver: str | None = None) -> str:
        """A release key for a user's version spelling: 0.4.1, v0.4.1, 25.12.0, 25.3, v25.3.x, main."""
        if version is None or str(version).strip() == "":
            return self.newest
        text = str(version).strip()
        low = text.lower()
        for k in self.releases:
            info = self.release_info[k]
            names = {k.lower(), *(str(a).lower() for a in info.get("aliases", []))}
            if low in names or low.lstrip("v") in {n.lstrip("v") for n in names}:
                return k
        bare = low.lstrip("v").split("+", 1)[0]
        for candidate in (bare, bare.split("-", 1)[0]):
            for k in self.releases:
                if candidate in {str(v).lower() for v in self.release_info[k].get("versions", [])}:
                    return k
        m = re.fullmatch(r"(\d+)\.(\d+)(?:\.x)?", bare)
        if m:
            prefix = f"{int(m.group(1))}.{int(m.group(2))}."
            hits = [k for k in self.releases
                    if any(str(v).startswith(prefix) for v in self.release_info[k].get("versions", []))]
            if hits:
                return hits[-1]
        raise ProfileError(
            f"driver {driver or '/'.join(self.drivers)}: unknown release {text!r} of the {self.title}; "
            f"known releases: {self.known_versions_text()}"
        )

    def default_gates(self, release: str) -> dict[str, bool]:
        if not self.has_gates(release):
            return {}
        return {g: bool(d.get("default", False)) for g, d in self.gate_defs.items() if self.present(d, release)}


@cache
def _driver_files() -> tuple[DriverData, ...]:
    d = schemas_dir() / "drivers"
    if not d.is_dir():
        return ()
    out = []
    for p in sorted(d.glob("*.yaml")):
        raw = load_data(f"drivers/{p.name}")
        if isinstance(raw, dict) and raw.get("drivers"):
            out.append(DriverData(p.stem, raw))
    return tuple(out)


def _data_for(driver: str) -> DriverData | None:
    for data in _driver_files():
        if driver in data.drivers:
            return data
    return None


def knows_driver(driver: str) -> bool:
    """True when dralint has data for this driver (so unknown attributes can be reported)."""
    return _data_for(driver) is not None


def known_drivers() -> list[str]:
    return [d for data in _driver_files() for d in data.drivers]


def releases(driver: str) -> list[str]:
    """Release keys of a driver, oldest first (empty for an unknown driver)."""
    data = _data_for(driver)
    return list(data.releases) if data else []


def normalize_release(driver: str, version: str | None) -> str:
    """The release key for ``version`` (None = newest); ProfileError for an unknown version."""
    data = _data_for(driver)
    if data is None:
        raise ProfileError(f"dralint has no data for driver {driver!r}")
    return data.resolve(version, driver)


# --- a profile resolved against the data ----------------------------------------------------------

@dataclass(frozen=True)
class Setup:
    """One driver project as the profile installs it."""

    data: DriverData
    release: str
    #: DRA driver names of the project that are installed (the chart's enabled components)
    components: frozenset[str]
    #: effective driver feature gates: the release's defaults overridden by the profile
    gates: Mapping[str, bool]
    #: False when the profile lists other drivers only (the project is not installed)
    installed: bool = True

    def gate_on(self, gate: str) -> bool:
        return bool(self.gates.get(gate, False))

    def gate_exists(self, gate: str) -> bool:
        d = self.data.gate_defs.get(gate)
        return d is not None and self.data.has_gates(self.release) and self.data.present(d, self.release)

    def gate_needed(self, gate: str | None) -> bool:
        """A feature behind ``gate`` is unavailable: the gate exists in this release and is off."""
        return gate is not None and self.gate_exists(gate) and not self.gate_on(gate)

    def stage(self, gate: str) -> str:
        return str(self.data.gate_defs.get(gate, {}).get("stage", ""))


def _profile_key(profile: ClusterProfile) -> tuple[Any, ...]:
    return tuple(
        (d.name, d.version, tuple(sorted((str(k), bool(v)) for k, v in (d.feature_gates or {}).items())))
        for d in profile.drivers
    )


@cache
def _setups(key: tuple[Any, ...]) -> tuple[Setup, ...]:
    out = []
    for data in _driver_files():
        chosen = [d for d in key if d[0] in data.drivers]
        installed = bool(chosen) or not key
        version = next((d[1] for d in chosen if d[1]), None)
        try:
            release = data.resolve(version)
        except ProfileError:
            release = data.newest  # validate_profile() reports it; lookups fall back to the newest
        gates = data.default_gates(release)
        for d in chosen:
            gates.update(dict(d[2]))
        components = frozenset(d[0] for d in chosen) if chosen else frozenset(data.drivers)
        out.append(Setup(data, release, components, gates, installed))
    return tuple(out)


def setups(profile: ClusterProfile) -> tuple[Setup, ...]:
    return _setups(_profile_key(profile))


def setup_for(profile: ClusterProfile, driver: str) -> Setup | None:
    """The project holding ``driver`` (installed or not; see `Setup.installed`), None when unknown."""
    for s in setups(profile):
        if driver in s.data.drivers:
            return s
    return None


def installed(profile: ClusterProfile, driver: str) -> bool:
    s = setup_for(profile, driver)
    return s is not None and s.installed and driver in s.components


def release_label(profile: ClusterProfile, driver: str) -> str | None:
    s = setup_for(profile, driver)
    return s.release if s else None


def gates(profile: ClusterProfile, driver: str) -> dict[str, bool]:
    """Effective driver feature gates (defaults of the configured release + the profile's settings)."""
    s = setup_for(profile, driver)
    return dict(s.gates) if s else {}


@dataclass(frozen=True)
class GateInfo:
    name: str
    stage: str
    default: bool
    since: str | None
    unlocks: str
    logging: bool


def gate_info(driver: str, gate: str) -> GateInfo | None:
    data = _data_for(driver)
    d = data.gate_defs.get(gate) if data else None
    if d is None:
        return None
    return GateInfo(gate, str(d.get("stage", "")), bool(d.get("default", False)),
                    str(d["since"]) if d.get("since") else None, str(d.get("unlocks", "")), bool(d.get("logging")))


def validate_profile(profile: ClusterProfile) -> None:
    """Raise ProfileError for unknown releases or gates, or gate combinations the driver refuses."""
    from dralint.knowledge.classes import validate as validate_unknown

    validate_unknown(profile)  # drivers without data, declared classes
    for data in _driver_files():
        chosen = [d for d in profile.drivers if d.name in data.drivers]
        if not chosen:
            continue
        versions = {d.name: data.resolve(d.version, d.name) for d in chosen if d.version}
        if len(set(versions.values())) > 1:
            listed = ", ".join(f"{n}={v}" for n, v in versions.items())
            raise ProfileError(f"{listed}: these DRA drivers come from one {data.title} chart; give them one version")
        release = next(iter(versions.values()), data.newest)
        user: dict[str, bool] = {}
        for d in chosen:
            for gate, value in (d.feature_gates or {}).items():
                _check_gate(data, release, d.name, str(gate))
                user[str(gate)] = bool(value)
        effective = {**data.default_gates(release), **user}
        for c in data.raw.get("feature-gate-constraints") or []:
            if not data.present(c, release):
                continue
            if "exclusive" in c:
                a, b = (str(x) for x in c["exclusive"])
                if effective.get(a) and effective.get(b):
                    raise ProfileError(
                        f"{chosen[0].name} {release}: driver feature gates {a} and {b} cannot both be on "
                        "(the driver components exit at start)")
            if "requires" in c:
                a, b = (str(x) for x in c["requires"])
                if effective.get(a) and not effective.get(b):
                    raise ProfileError(
                        f"{chosen[0].name} {release}: driver feature gate {a} requires {b} to be on "
                        "(the driver components exit at start)")


def _check_gate(data: DriverData, release: str, driver: str, gate: str) -> None:
    if not data.has_gates(release):
        raise ProfileError(f"{driver} {release} has no driver feature gates (they arrived in the next release); "
                           f"remove `{gate}` from its feature-gates")
    d = data.gate_defs.get(gate)
    if d is None:
        near = closest(gate, list(data.gate_defs), cutoff=0.6)
        hint = f" (did you mean {near}?)" if near else f"; known: {', '.join(data.gate_defs)}"
        raise ProfileError(f"{driver}: unknown driver feature gate {gate!r}{hint}")
    if not data.present(d, release):
        raise ProfileError(f"{driver} {release}: driver feature gate {gate!r} does not exist in this release "
                           f"(added in {d.get('since')}); the components would refuse to start")


# --- device classes -------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClassInfo:
    name: str
    driver: str
    device_type: str | None
    selector: str
    since: str | None
    #: driver feature gate without which no device of this class exists
    devices_need_gate: str | None
    extended_resource_name: str | None


_SEL_DRIVER = re.compile(r"""device\s*\.\s*driver\s*==\s*["']([^"']+)["']""")
_SEL_TYPE = re.compile(
    r"""attributes\s*\[\s*["']([^"']+)["']\s*\]\s*(?:\.\s*type|\[\s*["']type["']\s*\])\s*==\s*["']([^"']+)["']""")


def selector_facts(device_class: Any) -> tuple[str | None, str | None]:
    """(driver, device type) a DeviceClass's CEL selectors pin down (`device.driver == "x"`,
    `device.attributes["x"].type == "mig"`), None for what they leave open."""
    driver: str | None = None
    dtype: str | None = None
    sels = k8s.get(device_class, "spec", "selectors")
    for sel in sels if isinstance(sels, list) else []:
        expr = k8s.get(sel, "cel", "expression")
        if not isinstance(expr, str):
            continue
        m = _SEL_DRIVER.search(expr)
        driver = driver or (m.group(1) if m else None)
        t = _SEL_TYPE.search(expr)
        if t and (driver is None or t.group(1) == driver):
            dtype = dtype or t.group(2)
    return driver, dtype


def class_info(name: str) -> ClassInfo | None:
    """What the data says about a class installed by some release (independent of the profile)."""
    for data in _driver_files():
        c = (data.raw.get("device-classes") or {}).get(name)
        if isinstance(c, dict):
            ern = c.get("extended-resource-name")
            return ClassInfo(name, str(c.get("driver", "")), c.get("device-type"), str(c.get("selector", "")),
                             str(c["since"]) if c.get("since") else None, c.get("devices-need-gate"),
                             str(ern["name"]) if isinstance(ern, dict) and ern.get("name") else None)
    return None


def installed_classes(profile: ClusterProfile) -> set[str]:
    """Device classes installed by the configured drivers (default: every known driver, newest release)."""
    out: set[str] = set()
    for s in setups(profile):
        if not s.installed:
            continue
        for name, c in (s.data.raw.get("device-classes") or {}).items():
            if isinstance(c, dict) and c.get("driver") in s.components and s.data.present(c, s.release):
                out.add(str(name))
    # classes the configuration declares (drivers dralint has no data for, or an admin's own classes)
    out.update(str(c) for c in profile.device_classes)
    for d in profile.drivers:
        out.update(str(c) for c in d.device_classes)
    return out


def data_class_names() -> set[str]:
    """Every class name any driver data file defines, whatever the profile installs (for typo checks)."""
    return {str(n) for data in _driver_files() for n in (data.raw.get("device-classes") or {})}


def stale_class_note(name: str, profile: ClusterProfile) -> str | None:
    """Why a class the profile does not install is missing, as a clause for DRA305's message."""
    for s in setups(profile):
        data = s.data
        note = (data.raw.get("stale-device-classes") or {}).get(name)
        if note:
            return " ".join(str(note).split())
        c = (data.raw.get("device-classes") or {}).get(name)
        if isinstance(c, dict):
            driver = str(c.get("driver"))
            if not s.installed or driver not in s.components:
                comp = (data.raw.get("components") or {}).get(driver) or {}
                helm = f" (Helm `{comp['helm']}`)" if comp.get("helm") else ""
                return (f"`{name}` is installed only with the `{driver}` plugin of the {data.title}{helm}, which "
                        f"the configured drivers do not include; add `{driver}` to `drivers` if the cluster runs it")
            if not data.present(c, s.release):
                if c.get("since") and data.rank(s.release) < data.rank(str(c["since"])):
                    return (f"`{name}` is installed from {c['since']} on; the configured {driver} release "
                            f"{s.release} does not have it (upgrade the driver, or use another class)")
                return f"`{name}` was removed in {c.get('removed')}; the configured release is {s.release}"
        for p in data.raw.get("stale-device-class-patterns") or []:
            if re.fullmatch(str(p.get("pattern", "")), name):
                return " ".join(str(p.get("note", "")).split())
    return None


def support_note(profile: ClusterProfile, driver: str) -> str | None:
    """Why allocating from ``driver`` is a preview feature in the configured release (None: supported)."""
    s = setup_for(profile, driver)
    if s is None:
        return None
    sup = (s.data.raw.get("support") or {}).get(driver) or {}
    if sup.get("status") != "preview" or not s.data.present(sup, s.release):
        return None
    return " ".join(str(sup.get("note", "")).split()).format(release=s.release)


# --- attributes and capacities --------------------------------------------------------------------

def _type_matches(item: Mapping[str, Any], device_type: str | None) -> bool:
    if device_type is None:
        return True
    on = item.get("devices")
    return not isinstance(on, list) or device_type in on


def _domain_items(profile: ClusterProfile, domain: str, section: str) -> tuple[tuple[Setup, str, dict[str, Any]], ...]:
    """(setup, name, item) for ``section`` (attributes|capacities) of ``domain`` in the configured release."""
    return _domain_table(_profile_key(profile), domain, section)


@cache
def _domain_table(key: tuple[Any, ...], domain: str, section: str) -> tuple[tuple[Setup, str, dict[str, Any]], ...]:
    all_setups = _setups(key)
    if domain == STANDARD_DOMAIN:
        chosen = [s for s in all_setups if s.installed] or list(all_setups)
    else:
        chosen = [s for s in all_setups if domain in s.data.drivers]
    out = []
    for s in chosen:
        for name, item in ((s.data.raw.get(section) or {}).get(domain) or {}).items():
            item = item if isinstance(item, dict) else {"type": item}
            if s.data.present(item, s.release):
                out.append((s, str(name), item))
    return tuple(out)


def attributes(profile: ClusterProfile, driver: str, device_type: str | None = None) -> dict[str, str]:
    """Attribute name -> type (bool|int|string|version) that ``driver`` publishes in the configured release.

    Names are as CEL sees them under ``device.attributes['<driver>']``; standard attributes in other
    domains (``resource.kubernetes.io``) are listed under that domain as a driver key of their own.
    ``device_type`` (gpu, mig, vfio, channel, daemon) keeps only attributes devices of that type carry.
    Attributes published only while a driver gate is on are included (see `attribute_gate`); a
    list-typed attribute (its list gate on) is reported as ``list(<type>)``.
    """
    out: dict[str, str] = {}
    for s, name, item in _domain_items(profile, driver, "attributes"):
        if not _type_matches(item, device_type):
            continue
        t = str(item.get("type", "string"))
        lg = item.get("list-type-gate")
        out[name] = f"list({t})" if lg and s.gate_on(str(lg)) else t
    return out


def capacities(profile: ClusterProfile, driver: str, device_type: str | None = None) -> dict[str, str]:
    """Capacity name -> 'quantity' for ``driver`` in the configured release."""
    return {name: "quantity" for _, name, item in _domain_items(profile, driver, "capacities")
            if _type_matches(item, device_type)}


def attribute_gate(profile: ClusterProfile, domain: str, name: str) -> str | None:
    """The driver gate that must be on for the attribute to be published (None: always published)."""
    for _, n, item in _domain_items(profile, domain, "attributes"):
        if n == name and item.get("gate"):
            return str(item["gate"])
    return None


def capacity_gate(profile: ClusterProfile, domain: str, name: str) -> str | None:
    for _, n, item in _domain_items(profile, domain, "capacities"):
        if n == name and item.get("gate"):
            return str(item["gate"])
    return None


def gone_attribute_note(profile: ClusterProfile, domain: str, name: str) -> str | None:
    """For an attribute the configured release does not publish: when it existed and what replaced it."""
    s = setup_for(profile, domain)
    if s is None:
        return None
    item = ((s.data.raw.get("attributes") or {}).get(domain) or {}).get(name)
    if not isinstance(item, dict) or s.data.present(item, s.release):
        return None
    repl = f"; use {item['replaced-by']}" if item.get("replaced-by") else ""
    if item.get("removed") and s.data.rank(s.release) >= s.data.rank(str(item["removed"])):
        return f"`{name}` was removed from `{domain}` in {item['removed']} (configured: {s.release}){repl}"
    return f"`{name}` is published from {item.get('since')} on (configured: {s.release}){repl}"


# --- opaque configuration -------------------------------------------------------------------------

@dataclass(frozen=True)
class ConfigKind:
    kind: str
    driver: str
    device_types: tuple[str, ...]
    gate: str | None
    since: str | None
    generated_by: str | None
    max_per_claim: int | None


def config_kinds(profile: ClusterProfile, driver: str | None = None) -> Mapping[str, ConfigKind]:
    """Opaque config kinds the configured release understands (all drivers, or those of ``driver``);
    read-only, shared by every call with the same drivers (each opaque config of a run asks)."""
    return _config_kinds(_profile_key(profile), driver)


@cache
def _config_kinds(key: tuple[Any, ...], driver: str | None) -> Mapping[str, ConfigKind]:
    out: dict[str, ConfigKind] = {}
    for s in _setups(key):
        for kind, k in (s.data.raw.get("config-kinds") or {}).items():
            if not isinstance(k, dict) or not s.data.present(k, s.release):
                continue
            if driver is not None and k.get("driver") != driver:
                continue
            out[str(kind)] = ConfigKind(
                str(kind), str(k.get("driver")), tuple(k.get("device-types") or ()), k.get("gate"),
                str(k["since"]) if k.get("since") else None, k.get("generated-by"), k.get("max-per-claim"))
    return MappingProxyType(out)


@dataclass(frozen=True)
class Issue:
    """A problem in driver parameters; ``path`` is relative to the checked mapping."""

    path: JsonPath
    message: str
    on: Literal["key", "value"] = "value"


@dataclass(frozen=True)
class GateUse:
    """A feature the parameters use that sits behind a driver feature gate."""

    path: JsonPath
    gate: str
    feature: str


@dataclass
class OpaqueCheck:
    kind: str | None = None
    issues: list[Issue] = field(default_factory=list)
    gate_uses: list[GateUse] = field(default_factory=list)


_DESCRIBE_TYPES = {"string": "a string", "int": "an integer", "bool": "a boolean (true/false)",
                   "quantity": "a quantity such as 10Gi", "map": "a mapping", "list": "a list"}


def describe(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"the boolean {str(v).lower()}"
    if isinstance(v, (int, float)):
        return f"the number {v}"
    if isinstance(v, str):
        return f'the string "{v}"'
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "a mapping"
    return type(v).__name__




def parse_quantity(v: Any) -> Fraction | None:
    """A driver parameter read as a Kubernetes quantity (string or number), exactly; None when it does
    not parse. The text is trimmed first, as decoding a quantity from JSON does; a number is read from
    its shortest text, as the driver would receive it (`dralint.knowledge.quantity` does the parsing)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return Fraction(v)
    if isinstance(v, float):
        v = str(v)
    if not isinstance(v, str):
        return None
    try:
        return Fraction(quantities.parse_quantity(v.strip()))
    except quantities.QuantityError:
        return None


class _Validator:
    """Strict decoding of driver parameters against the data's mini-schema, for one release."""

    def __init__(self, setup: Setup, types: Mapping[str, Any]) -> None:
        self.s = setup
        self.types = types
        self.out = OpaqueCheck()

    def struct(self, fields: Mapping[str, Any], whens: list[Any], value: Any, path: JsonPath, where: str,
               skip: frozenset[str] = frozenset()) -> None:
        if not isinstance(value, dict):
            self.out.issues.append(Issue(path, f"{where} must be a mapping, got {describe(value)}"))
            return
        data, rel = self.s.data, self.s.release
        for key, v in value.items():
            k = str(key)
            if k in skip:
                continue
            spec = fields.get(k)
            if not isinstance(spec, dict):
                near = closest(k, list(fields), cutoff=0.6) or next(
                    (f for f in fields if f.lower() == k.lower()), None)
                hint = f" (did you mean `{near}`?)" if near else (
                    f" (known: {', '.join(f'`{f}`' for f in fields if data.present(fields[f], rel))})"
                    if fields else " (it takes no fields)")
                self.out.issues.append(Issue(
                    (*path, k), f"unknown field `{k}` in {where}{hint}", "key"))
                continue
            if not data.present(spec, rel):
                when = (f"added in {spec['since']}" if spec.get("since") and data.rank(rel) < data.rank(
                    str(spec["since"])) else f"removed in {spec.get('removed')}")
                self.out.issues.append(Issue(
                    (*path, k), f"`{k}` does not exist in {where} in {rel} ({when})", "key"))
                continue
            if v is None:
                continue  # JSON null leaves the field unset
            self.field(k, spec, v, (*path, k), where)
        for k, spec in fields.items():
            if not isinstance(spec, dict) or not data.present(spec, rel):
                continue
            req = spec.get("required")
            until = spec.get("required-until")
            if until is not None:
                req = data.rank(rel) < data.rank(str(until))
            if req and value.get(k) is None:
                self.out.issues.append(Issue(path, f"{where} needs `{k}`", "key"))
        for w in whens:
            if not isinstance(w, dict) or value.get(w.get("field")) != w.get("equals"):
                continue
            cond = f"`{w['field']}: {w['equals']}`"
            for f in w.get("forbid") or ():
                if value.get(f) is not None:
                    self.out.issues.append(Issue(
                        (*path, f), f"`{f}` cannot be combined with {cond} (remove `{f}` or change "
                        f"`{w['field']}`)", "key"))
            if w.get("gate"):
                self.out.gate_uses.append(GateUse((*path, str(w["field"])), str(w["gate"]),
                                                  str(w.get("feature") or cond)))

    def field(self, name: str, spec: Mapping[str, Any], v: Any, path: JsonPath, where: str) -> None:
        t = str(spec.get("type", "string"))
        label = f"`{name}`"
        if t in self.types:
            sub = self.types[t] or {}
            self.struct(sub.get("fields") or {}, sub.get("when") or [], v, path, f"`{name}`")
            return
        if t == "string":
            if not isinstance(v, str):
                self.out.issues.append(Issue(path, f"{label} must be a string, got {describe(v)}"))
                return
            enum = spec.get("enum")
            if enum and v not in enum:
                near = [e for e in enum if str(e).lower() == v.lower()]
                hint = f" (did you mean `{near[0]}`? values are case-sensitive)" if near else ""
                self.out.issues.append(Issue(
                    path, f"{label} must be one of {', '.join(f'`{e}`' for e in enum)}, got \"{v}\"{hint}"))
            if spec.get("min-length") and len(v) < int(spec["min-length"]):
                self.out.issues.append(Issue(path, f"{label} must not be empty"))
        elif t == "int":
            if isinstance(v, bool) or not isinstance(v, int):
                self.out.issues.append(Issue(path, f"{label} must be an integer, got {describe(v)}"))
                return
            lo, hi = spec.get("minimum"), spec.get("maximum")
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                rng = f"between {lo} and {hi}" if lo is not None and hi is not None else (
                    f"at least {lo}" if lo is not None else f"at most {hi}")
                self.out.issues.append(Issue(path, f"{label} must be {rng}, got {v}"))
        elif t == "bool":
            if not isinstance(v, bool):
                self.out.issues.append(Issue(path, f"{label} must be a boolean (true/false), got {describe(v)}"))
        elif t == "quantity":
            self.quantity(label, spec, v, path)
        elif t == "map":
            if not isinstance(v, dict):
                self.out.issues.append(Issue(path, f"{label} must be a mapping, got {describe(v)}"))
                return
            kp = spec.get("key-pattern")
            vs = spec.get("values") or {}
            for k2, v2 in v.items():
                if kp and not re.fullmatch(str(kp), str(k2)):
                    self.out.issues.append(Issue(
                        (*path, k2), f"key `{k2}` in {label} is neither the UUID of an allocated device "
                        "(GPU-…/MIG-…) nor an index into the allocated devices", "key"))
                if v2 is not None:
                    self.field(str(k2), vs, v2, (*path, k2), label)
        elif t == "list":
            if not isinstance(v, list):
                self.out.issues.append(Issue(path, f"{label} must be a list, got {describe(v)}"))
                return
            items = spec.get("items") or {}
            for i, x in enumerate(v):
                self.field(f"{name}[{i}]", items, x, (*path, i), where)

    def quantity(self, label: str, spec: Mapping[str, Any], v: Any, path: JsonPath) -> None:
        q = parse_quantity(v)
        if q is None:
            self.out.issues.append(Issue(path, f"{label} must be a quantity such as 10Gi, got {describe(v)}"))
            return
        lo = spec.get("min-quantity")
        if lo is None:
            return
        lo_q = parse_quantity(str(lo))
        unit = spec.get("floor")
        value = q
        if unit:
            step = Fraction(quantities.parse_quantity(f"1{unit}"))
            value = (q // step) * step
        if lo_q is not None and value < lo_q:
            floored = f" (the driver rounds it down to whole {unit}B)" if unit else ""
            self.out.issues.append(Issue(path, f"{label} must be at least {lo}{floored}, got {describe(v)}"))


def validate_opaque(profile: ClusterProfile, driver: str, parameters: Any) -> OpaqueCheck:
    """Decode ``opaque.parameters`` for ``driver`` as the configured release does.

    ``issues`` are problems the driver (or its webhook) rejects; ``gate_uses`` are features behind
    driver feature gates — the caller decides with `Setup.gate_needed` whether the gate is missing.
    Unknown drivers give an empty result.
    """
    s = setup_for(profile, driver)
    if s is None:
        return OpaqueCheck()
    data, rel = s.data, s.release
    v = _Validator(s, data.raw.get("types") or {})
    out = v.out
    if not isinstance(parameters, dict):
        out.issues.append(Issue((), f"`parameters` must be a mapping with `apiVersion` and `kind`, got "
                                    f"{describe(parameters)}"))
        return out
    api, kind = parameters.get("apiVersion"), parameters.get("kind")
    out.kind = kind if isinstance(kind, str) else None
    valid_apis = [str(a) for a in data.raw.get("config-api-versions") or []]
    legacy = data.raw.get("legacy-config-api-groups") or {}
    group = api.split("/", 1)[0] if isinstance(api, str) and "/" in api else None
    if group in legacy:
        repl = (data.raw.get("legacy-config-kinds") or {}).get(kind)
        instead = (f"; write `apiVersion: {valid_apis[0]}` with `kind: {repl}` instead (counts and selectors "
                   "belong in the request)") if repl and valid_apis else ""
        out.issues.append(Issue(("apiVersion",), " ".join(str(legacy[group]).split()) + instead))
        return out
    if api is None:
        out.issues.append(Issue((), f"parameters for {driver} need `apiVersion: {' or '.join(valid_apis)}`", "key"))
    elif api not in valid_apis:
        out.issues.append(Issue(("apiVersion",), f"`apiVersion` must be {' or '.join(f'`{a}`' for a in valid_apis)} "
                                                 f"for driver {driver}, got {describe(api)}"))
    kinds = data.raw.get("config-kinds") or {}
    own = [k for k, d in kinds.items() if isinstance(d, dict) and d.get("driver") == driver and data.present(d, rel)]
    if not isinstance(kind, str):
        out.issues.append(Issue((), f"parameters for {driver} need `kind` (one of {', '.join(own)})", "key")
                          if kind is None else Issue(("kind",), f"`kind` must be a string, got {describe(kind)}"))
        return out
    spec = kinds.get(kind)
    if not isinstance(spec, dict):
        legacy_repl = (data.raw.get("legacy-config-kinds") or {}).get(kind)
        near = str(legacy_repl) if legacy_repl else closest(kind, own, cutoff=0.6)
        hint = f" (did you mean `{near}`?)" if near else ""
        out.issues.append(Issue(("kind",), f"`{kind}` is not a config kind of {driver} {rel}{hint}; it takes "
                                           f"{', '.join(f'`{k}`' for k in own)}"))
        return out
    if not data.present(spec, rel):
        out.issues.append(Issue(("kind",), f"`{kind}` exists from {spec.get('since')} on; {driver} {rel} does not "
                                           "know it"))
        return out
    if spec.get("driver") != driver:
        out.issues.append(Issue(("kind",), f"`{kind}` is a config of driver `{spec.get('driver')}`, but this config "
                                           f"is addressed to `{driver}` (kinds for {driver}: "
                                           f"{', '.join(f'`{k}`' for k in own)})"))
        return out
    if spec.get("gate"):
        out.gate_uses.append(GateUse(("kind",), str(spec["gate"]), f"`{kind}`"))
    v.struct(spec.get("fields") or {}, spec.get("when") or [], parameters, (), kind,
             skip=frozenset({"apiVersion", "kind"}))
    return out


# --- custom resources (ComputeDomain) ------------------------------------------------------------

def custom_resource_kinds(profile: ClusterProfile) -> dict[str, str]:
    """kind -> apiVersion of the driver CRDs the configured releases install."""
    out: dict[str, str] = {}
    for s in setups(profile):
        for kind, d in (s.data.raw.get("custom-resources") or {}).items():
            if isinstance(d, dict) and s.data.present(d, s.release):
                out[str(kind)] = str(d.get("api-version"))
    return out


def validate_custom_resource(profile: ClusterProfile, obj: Mapping[str, Any]) -> list[Issue]:
    """Check a ComputeDomain (or other driver CR) against the CRD schema of the configured release.

    Only the fields of the CRD are checked (``metadata`` is the API server's business). Returns []
    for kinds dralint has no CRD for.
    """
    kind = obj.get("kind")
    for s in setups(profile):
        d = (s.data.raw.get("custom-resources") or {}).get(kind)
        if isinstance(d, dict) and obj.get("apiVersion") == d.get("api-version"):
            v = _Validator(s, s.data.raw.get("crd-types") or {})
            v.struct(d.get("fields") or {}, [], dict(obj), (), str(kind),
                     skip=frozenset({"apiVersion", "kind", "metadata"}))
            return v.out.issues
    return []


def custom_resource_schema(profile: ClusterProfile, kind: str) -> dict[str, Any] | None:
    """The CRD's structural schema (JSON Schema) for the configured release, or None."""
    for s in setups(profile):
        d = (s.data.raw.get("custom-resources") or {}).get(kind)
        if isinstance(d, dict) and s.data.present(d, s.release):
            types = s.data.raw.get("crd-types") or {}
            schema = _json_schema(s, types, d.get("fields") or {})
            props = schema["properties"]
            props["apiVersion"] = {"const": d.get("api-version")}
            props["kind"] = {"const": kind}
            props["metadata"] = {"type": "object"}
            return schema
    return None


def _json_schema(s: Setup, types: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    required: list[str] = []
    for name, spec in fields.items():
        if not isinstance(spec, dict) or not s.data.present(spec, s.release):
            continue
        props[name] = _json_type(s, types, spec)
        req = spec.get("required")
        if spec.get("required-until") is not None:
            req = s.data.rank(s.release) < s.data.rank(str(spec["required-until"]))
        if req:
            required.append(name)
    out: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": props}
    if required:
        out["required"] = required
    return out


def _json_type(s: Setup, types: Mapping[str, Any], spec: Mapping[str, Any]) -> dict[str, Any]:
    t = str(spec.get("type", "string"))
    if t in types:
        return _json_schema(s, types, (types[t] or {}).get("fields") or {})
    if t == "list":
        return {"type": "array", "items": _json_type(s, types, spec.get("items") or {})}
    if t == "map":
        return {"type": "object", "additionalProperties": _json_type(s, types, spec.get("values") or {})}
    if t == "quantity":
        return {"anyOf": [{"type": "string"}, {"type": "number"}]}
    out: dict[str, Any] = {"type": {"int": "integer", "bool": "boolean"}.get(t, t)}
    for src, dst in (("enum", "enum"), ("minimum", "minimum"), ("maximum", "maximum"), ("min-length", "minLength")):
        if spec.get(src) is not None:
            out[dst] = spec[src]
    return out


# --- Helm charts (DRA207) -------------------------------------------------------------------------

@cache
def charts() -> dict[str, Any]:
    """Chart recognition and allocator switches from ``schemas/drivers/charts/*.yaml`` (merged)."""
    d = schemas_dir() / "drivers" / "charts"
    out: dict[str, Any] = {"charts": {}, "daemonsets": {}}
    if d.is_dir():
        for p in sorted(d.glob("*.yaml")):
            raw = load_data(f"drivers/charts/{p.name}") or {}
            out["charts"].update(raw.get("charts") or {})
            out["daemonsets"].update(raw.get("daemonsets") or {})
    return out
