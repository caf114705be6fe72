"""What the configured DRA driver release accepts, needs and supports.

DRA106 opaque configs the driver would refuse (strict decoding, value rules, config/request
mismatches), DRA502 features behind a driver feature gate that is off, DRA503 preview features of
the configured release, and DRA207 Helm values that run the device plugin and DRA GPU allocation
side by side. Every fact comes from `dralint.knowledge.drivers` (``schemas/drivers/``); one analysis per
claim object feeds the three object rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from dralint.checks.registry import Context, rule
from dralint.inputs import dra
from dralint.inputs.files import matches_glob
from dralint.inputs.index import K8sObject, ValuesDoc
from dralint.knowledge import k8s
from dralint.knowledge.drivers import (
    ClassInfo,
    OpaqueCheck,
    Setup,
    attribute_gate,
    capacity_gate,
    charts,
    class_info,
    config_kinds,
    knows_driver,
    selector_facts,
    setup_for,
    support_note,
    validate_opaque,
)
from dralint.model import JsonPath, Violation

_CLAIMS = ("ResourceClaim", "ResourceClaimTemplate")
_KINDS = (*_CLAIMS, "DeviceClass")

_ATTR_RE = re.compile(
    r"""\b(attributes|capacity)\s*\[\s*["']([^"']+)["']\s*\]\s*(?:\.\s*([A-Za-z_]\w*)|\[\s*["']([^"']+)["']\s*\])""")


@dataclass(frozen=True)
class _Target:
    """One way a config's request reference can be satisfied: a request or one of its subrequests."""

    ref: str
    device_class: str | None
    path: JsonPath


@dataclass
class _Analysis:
    by_code: dict[str, list[Violation]] = field(default_factory=lambda: {"DRA106": [], "DRA502": [], "DRA503": []})

    #: driver gates already reported in this object: one DRA502 per missing gate is enough
    gates: set[str] = field(default_factory=set)

    def add(self, code: str, v: Violation) -> None:
        self.by_code[code].append(v)

    def missing_gate(self, gate: str, v: Violation) -> None:
        if gate not in self.gates:
            self.gates.add(gate)
            self.by_code["DRA502"].append(v)


def _class_facts(ctx: Context, name: str | None) -> tuple[str | None, str | None]:
    """(driver, device type) of a class: a DeviceClass in the linted set wins over the driver data."""
    if not name:
        return None, None
    memo: dict[str, tuple[str | None, str | None]] = ctx.cache.setdefault("driver-class-facts", {})
    if name in memo:
        return memo[name]
    driver: str | None = None
    dtype: str | None = None
    for dc in ctx.index.find_any_namespace("DeviceClass", name):
        driver, dtype = selector_facts(dc.data)
        break
    else:
        info = class_info(name)
        if info is not None:
            driver, dtype = info.driver, info.device_type
    memo[name] = (driver, dtype)
    return driver, dtype


def _class_driver(ctx: Context, cls: str | None) -> tuple[str | None, ClassInfo | None, Setup | None, str | None]:
    """(driver, what the driver data says of the class, the driver's setup, its support note) of a
    class a request names: once per class and run, as `_class_facts` (thousands of claims, few classes)."""
    memo: dict[str | None, tuple[str | None, ClassInfo | None, Setup | None, str | None]] = ctx.cache.setdefault(
        "driver-class-setup", {})
    hit = memo.get(cls)
    if hit is not None:
        return hit
    drv, _ = _class_facts(ctx, cls)
    info = class_info(cls) if cls else None
    setup = setup_for(ctx.profile, drv) if drv and knows_driver(drv) else None
    note = support_note(ctx.profile, drv) if setup is not None and drv is not None else None
    out = memo[cls] = (drv, info, setup, note)
    return out


def _gate_message(setup: Setup, driver: str, gate: str, what: str, consequence: str) -> str:
    stage = setup.stage(gate)
    return (f"{what} needs the {driver} driver feature gate `{gate}`, which is off in the profile "
            f"({setup.release}{', ' + stage if stage else ''}, default off); {consequence}. Enable it in the driver's "
            f"Helm values (`featureGates: {{{gate}: true}}`) and tell dralint "
            f"(`drivers: [{{name: {driver}, feature-gates: {{{gate}: true}}}}]`)")


def _preview_gate_message(setup: Setup, driver: str, gate: str, what: str) -> str:
    return (f"{what} relies on the {setup.stage(gate)} driver feature gate `{gate}` of {driver} {setup.release}: "
            "a preview feature that is off by default and may change between releases")


def _analyse(obj: K8sObject, ctx: Context) -> _Analysis:
    hit = obj.memo.get("driver-analysis")
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    out = _Analysis()
    if obj.kind in _CLAIMS:
        _claim(obj, ctx, out)
    elif obj.kind == "DeviceClass":
        _device_class(obj, ctx, out)
    obj.memo["driver-analysis"] = out
    return out


def _claim(obj: K8sObject, ctx: Context, out: _Analysis) -> None:
    base = dra.claim_spec_path(obj.kind)
    targets: dict[str, list[_Target]] = {}
    preview_done = False
    for r in dra.requests(obj):
        for alt in r.alternatives:
            cls = alt.device_class
            if r.name:
                ref = f"{r.name}/{alt.name}" if alt.name else r.name
                t = _Target(ref, cls, alt.path)
                targets.setdefault(r.name, []).append(t)
                if alt.name:
                    targets.setdefault(ref, []).append(t)
            drv, info, setup, support = _class_driver(ctx, cls)
            cpath = (*alt.path, "deviceClassName")
            if setup is None or drv is None:
                continue
            if info is not None and info.devices_need_gate:
                gate = info.devices_need_gate
                if setup.gate_needed(gate):
                    out.missing_gate(gate, Violation(_gate_message(
                        setup, drv, gate, f"class `{cls}`",
                        f"without it the driver publishes no `{info.device_type}` devices, so the claim is never "
                        "allocated and the pod stays Pending"), cpath, on="value"))
                elif setup.gate_on(gate) and setup.stage(gate) == "Alpha":
                    out.add("DRA503", Violation(_preview_gate_message(setup, drv, gate, f"class `{cls}`"),
                                                cpath, on="value"))
            note = None if preview_done else support
            if note:
                preview_done = True
                out.add("DRA503", Violation(f"class `{cls}`: {note}", cpath, on="value"))
            _selectors(ctx, alt.selectors, out)
            _capacity_requests(ctx, setup, drv, alt, out)
    constraints = k8s.get(obj.data, *base, "devices", "constraints")
    for i, c in enumerate(constraints if isinstance(constraints, list) else []):
        for fld in ("matchAttribute", "distinctAttribute"):
            qn = c.get(fld) if isinstance(c, dict) else None
            if isinstance(qn, str) and "/" in qn:
                domain, name = qn.split("/", 1)
                found = _attribute_gate(ctx, domain, name, f"constraint `{fld}: {qn}`")
                if found is not None:
                    out.missing_gate(found[0], Violation(found[1], (*base, "devices", "constraints", i, fld),
                                                         on="value"))
    configs = k8s.get(obj.data, *base, "devices", "config")
    _configs(obj, ctx, configs, (*base, "devices", "config"), targets, None, out)


def _device_class(obj: K8sObject, ctx: Context, out: _Analysis) -> None:
    drv, dtype = _class_facts(ctx, obj.name) if obj.name else (None, None)
    if drv is None:
        # the class in hand may not be indexed under a name (no metadata.name): read it directly
        drv = selector_facts(obj.data)[0]
    if drv and knows_driver(drv):
        setup = setup_for(ctx.profile, drv)
        if setup is not None:
            sels: list[tuple[JsonPath, str]] = []
            raw = k8s.get(obj.data, "spec", "selectors")
            for i, sel in enumerate(raw if isinstance(raw, list) else []):
                expr = k8s.get(sel, "cel", "expression")
                if isinstance(expr, str):
                    sels.append((("spec", "selectors", i, "cel", "expression"), expr))
            _selectors(ctx, sels, out)
    _configs(obj, ctx, k8s.get(obj.data, "spec", "config"), ("spec", "config"), {}, dtype, out)


def _selectors(ctx: Context, sels: list[tuple[JsonPath, str]], out: _Analysis) -> None:
    for path, expr in sels:
        for gate, message in _selector_gates(ctx, expr):
            out.missing_gate(gate, Violation(message, path, on="value"))


def _selector_gates(ctx: Context, expr: str) -> list[tuple[str, str]]:
    """The driver gates that the profile has off and the selector ``expr`` needs, each with its
    message: worked out once per selector text and run (thousands of claims repeat a few selectors)."""
    memo: dict[str, list[tuple[str, str]]] = ctx.cache.setdefault("driver-selector-gates", {})
    hit = memo.get(expr)
    if hit is not None:
        return hit
    out: list[tuple[str, str]] = []
    seen: set[tuple[str, str, str]] = set()
    for m in _ATTR_RE.finditer(expr):
        section, domain, name = m.group(1), m.group(2), m.group(3) or m.group(4)
        if (section, domain, name) in seen:
            continue
        seen.add((section, domain, name))
        if section == "attributes":
            found = _attribute_gate(ctx, domain, name, f"selector reads attribute `{domain}/{name}`")
        else:
            gate = capacity_gate(ctx.profile, domain, name) if knows_driver(domain) else None
            s = setup_for(ctx.profile, domain) if gate else None
            found = (gate, _gate_message(
                s, domain, gate, f"selector reads capacity `{domain}/{name}`",
                "without it no device has that capacity and evaluating the selector fails, so the claim "
                "is not allocated")) if gate and s is not None and s.gate_needed(gate) else None
        if found is not None:
            out.append(found)
    memo[expr] = out
    return out


def _attribute_gate(ctx: Context, domain: str, name: str, what: str) -> tuple[str, str] | None:
    """The gate reading the attribute ``domain/name`` needs when the profile has it off, and its message."""
    if not knows_driver(domain):
        return None
    gate = attribute_gate(ctx.profile, domain, name)
    s = setup_for(ctx.profile, domain)
    if gate and s is not None and s.gate_needed(gate):
        return gate, _gate_message(s, domain, gate, what,
                                   "without it no device publishes the attribute, so the claim cannot be allocated")
    return None


def _capacity_requests(ctx: Context, setup: Setup, drv: str, alt: dra.Alternative, out: _Analysis) -> None:
    reqs = k8s.get(alt.data, "capacity", "requests")
    if not isinstance(reqs, dict):
        return
    for qn in reqs:
        domain, _, name = str(qn).rpartition("/")
        domain = domain or drv
        gate = capacity_gate(ctx.profile, domain, name) if knows_driver(domain) else None
        s = setup_for(ctx.profile, domain) if gate else None
        if gate and s is not None and s.gate_needed(gate):
            out.missing_gate(gate, Violation(_gate_message(
                s, domain, gate, f"request for capacity `{qn}`",
                "without it devices do not offer that capacity and the claim is never allocated"),
                (*alt.path, "capacity", "requests", qn)))


def _configs(obj: K8sObject, ctx: Context, configs: Any, cpath: JsonPath, targets: dict[str, list[_Target]],
             class_type: str | None, out: _Analysis) -> None:
    if not isinstance(configs, list):
        return
    in_class = obj.kind == "DeviceClass"
    per_claim: dict[str, int] = {}
    for i, entry in enumerate(configs):
        opaque = entry.get("opaque") if isinstance(entry, dict) else None
        drv = opaque.get("driver") if isinstance(opaque, dict) else None
        if not isinstance(opaque, dict) or not isinstance(drv, str) or not knows_driver(drv):
            continue
        setup = setup_for(ctx.profile, drv)
        if setup is None or "parameters" not in opaque:
            continue
        opath: JsonPath = (*cpath, i, "opaque")
        ppath: JsonPath = (*opath, "parameters")
        check = _opaque_check(ctx, drv, opaque["parameters"])
        who = "claims of this class" if in_class else "the claim"
        tail = f"; {drv} {setup.release} rejects this when it prepares {who}, and the pod does not start"
        label = f"{check.kind}: " if check.kind else ""
        for issue in check.issues:
            out.add("DRA106", Violation(f"{label}{issue.message}{tail}", (*ppath, *issue.path), on=issue.on))
        for use in check.gate_uses:
            if setup.gate_needed(use.gate):
                out.missing_gate(use.gate, Violation(_gate_message(
                    setup, drv, use.gate, f"{label}{use.feature}",
                    f"the driver refuses the config when it prepares {who} and the pod does not start"),
                    (*ppath, *use.path), on="value"))
            elif setup.gate_on(use.gate) and setup.stage(use.gate) == "Alpha":
                out.add("DRA503", Violation(_preview_gate_message(setup, drv, use.gate, f"{label}{use.feature}"),
                                            (*ppath, *use.path), on="value"))
        if check.issues or check.kind is None:
            continue
        kinds = config_kinds(ctx.profile, drv)
        ck = kinds.get(check.kind)
        if ck is None:
            continue
        if ck.max_per_claim is not None and not in_class:
            per_claim[ck.kind] = per_claim.get(ck.kind, 0) + 1
            if per_claim[ck.kind] > ck.max_per_claim:
                out.add("DRA106", Violation(
                    f"{ck.kind}: a claim may carry at most {ck.max_per_claim} `{ck.kind}` "
                    f"config{'s' if ck.max_per_claim > 1 else ''}; {drv} fails to prepare the claim",
                    (*ppath, "kind"), on="value"))
        if in_class:
            if class_type and ck.device_types and class_type not in ck.device_types:
                out.add("DRA106", Violation(
                    f"{ck.kind} applies to `{'`/`'.join(ck.device_types)}` devices, but this class selects "
                    f"`{class_type}` devices: the config never takes effect{_kind_for(ctx, drv, class_type)}",
                    (*ppath, "kind"), on="value"))
            continue
        _wiring(ctx, entry, drv, ck.kind, ck.device_types, targets, opath, ppath, out)


def _opaque_check(ctx: Context, drv: str, parameters: Any) -> OpaqueCheck:
    """`validate_opaque`, once per driver and parameters in a run (claims repeat a few configs). Keyed
    by ``repr``, which tells apart every type a loaded value has (``1``, ``"1"``, ``1.0``, ``true``;
    an integer key and a string one, which JSON text would not) and keeps the key order the issues follow."""
    memo: dict[tuple[str, str], OpaqueCheck] = ctx.cache.setdefault("driver-opaque-checks", {})
    key = (drv, repr(parameters))
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = validate_opaque(ctx.profile, drv, parameters)
    return hit


def _kind_for(ctx: Context, drv: str, device_type: str | None) -> str:
    if device_type is None:
        return ""
    fits = [k.kind for k in config_kinds(ctx.profile, drv).values() if device_type in k.device_types]
    return f"; use `{fits[0]}`" if fits else ""


def _wiring(ctx: Context, entry: dict[str, Any], drv: str, kind: str, device_types: tuple[str, ...],
            targets: dict[str, list[_Target]], opath: JsonPath, ppath: JsonPath, out: _Analysis) -> None:
    """The config's driver and kind against the classes of the requests it names."""
    refs = entry.get("requests")
    named = [r for r in refs if isinstance(r, str)] if isinstance(refs, list) else []
    if not named:
        # applies to every request: pointless when no request is served by this driver
        facts = [_class_facts(ctx, t.device_class)[0] for ts in targets.values() for t in ts]
        if facts and all(f is not None and f != drv for f in facts):
            others = sorted({f for f in facts if f})
            out.add("DRA106", Violation(
                f"config for driver `{drv}` applies to all requests, but every request uses a class of "
                f"{', '.join(f'`{o}`' for o in others)}: {drv} never sees these devices and the config has no effect",
                (*opath, "driver"), on="value"))
        return
    wrong_driver: list[str] = []
    wrong_type: list[str] = []
    for ref in named:
        for t in targets.get(ref, []):
            cdrv, ctype = _class_facts(ctx, t.device_class)
            if cdrv is not None and cdrv != drv:
                wrong_driver.append(f"`{t.ref}` (class `{t.device_class}` of driver `{cdrv}`)")
            elif cdrv == drv and ctype is not None and device_types and ctype not in device_types:
                wrong_type.append(f"`{t.ref}` (class `{t.device_class}`, `{ctype}` devices"
                                  f"{_kind_for(ctx, drv, ctype).replace('; use', ': use')})")
    if wrong_driver:
        out.add("DRA106", Violation(
            f"config for driver `{drv}` names request {', '.join(wrong_driver)}: that driver ignores configs "
            f"addressed to `{drv}` and `{drv}` never prepares the device, so the config has no effect",
            (*opath, "driver"), on="value"))
    if wrong_type:
        out.add("DRA106", Violation(
            f"{kind} applies to `{'`/`'.join(device_types)}` devices, but it names request {', '.join(wrong_type)}; "
            f"{drv} fails to prepare the claim (it cannot apply {kind} to that device) and the pod does not start",
            (*ppath, "kind"), on="value"))


@rule("DRA106", kinds=_KINDS)
def invalid_opaque_config(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    yield from _analyse(obj, ctx).by_code["DRA106"]


@rule("DRA502", kinds=_KINDS)
def driver_feature_gate_required(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    yield from _analyse(obj, ctx).by_code["DRA502"]


@rule("DRA503", kinds=_KINDS)
def preview_driver_feature(obj: K8sObject, ctx: Context) -> Iterator[Violation]:
    yield from _analyse(obj, ctx).by_code["DRA503"]


# --- DRA207: device plugin and DRA GPU allocation both enabled by Helm values -----------------------

@dataclass(frozen=True)
class _ChartValues:
    """A values document recognised as one chart's values (``prefix`` for umbrella-chart nesting)."""

    doc: ValuesDoc
    chart: str
    prefix: JsonPath
    data: dict[str, Any]
    device_plugin: tuple[bool, JsonPath]
    dra_gpus: tuple[bool, JsonPath]


def _truthy(v: Any) -> bool:
    """How a Helm template `if` reads a value: empty, zero, false and nil are false."""
    return v is not False and v is not None and v != "" and v != 0 and v != [] and v != {}


def _switches(data: dict[str, Any], specs: Any, prefix: JsonPath) -> tuple[bool, JsonPath]:
    """All switches on (value or default)? And the path that turns the allocator on, for the report."""
    if not isinstance(specs, list) or not specs:
        return False, ()
    path: JsonPath | None = None
    for spec in specs:
        keys = tuple(str(spec.get("path", "")).split("."))
        raw = k8s.get(data, *keys)
        on = bool(spec.get("default", False)) if raw is None else _truthy(raw)
        if not on:
            return False, ()
        if raw is not None and (path is None or not spec.get("default", False)):
            path = (*prefix, *keys)
    return True, path if path is not None else prefix


def _score(d: dict[str, Any], chart: dict[str, Any]) -> int:
    strong = sum(2 for k in chart.get("strong") or () if k in d)
    weak = sum(1 for k in chart.get("weak") or () if k in d)
    return strong + weak if strong else (weak if weak >= 3 else 0)


def _chart_of(vd: ValuesDoc, ctx: Context) -> _ChartValues | None:
    if "chart-of" in vd.memo:
        return vd.memo["chart-of"]  # type: ignore[no-any-return]
    found: _ChartValues | None = None
    facts = charts()["charts"]
    d = vd.data
    if isinstance(d, dict):
        chosen: tuple[str, JsonPath, dict[str, Any]] | None = None
        for name, globs in (ctx.profile.values_files or {}).items():
            if name in facts and any(matches_glob(vd.file.path, g) for g in globs or ()):
                chosen = (name, (), d)
                break
        if chosen is None:
            for name, c in facts.items():
                for alias in c.get("names") or ():
                    if isinstance(d.get(alias), dict):
                        chosen = (name, (alias,), d[alias])
                        break
                if chosen:
                    break
        if chosen is None:
            scores = sorted(((_score(d, c), n) for n, c in facts.items()), reverse=True)
            if scores and scores[0][0] >= 2 and (len(scores) == 1 or scores[1][0] < scores[0][0]):
                chosen = (scores[0][1], (), d)
        if chosen is not None:
            name, prefix, data = chosen
            c = facts[name]
            found = _ChartValues(vd, name, prefix, data, _switches(data, c.get("device-plugin"), prefix),
                                 _switches(data, c.get("dra-gpus"), prefix))
    vd.memo["chart-of"] = found
    return found


def _daemonsets(ctx: Context) -> tuple[list[K8sObject], list[K8sObject]]:
    """Rendered DaemonSets of the device plugin, and of the DRA kubelet plugin running its GPU part."""
    hit = ctx.cache.get("dra207-daemonsets")
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    facts = charts()["daemonsets"]
    plugin_imgs = tuple((facts.get("device-plugin") or {}).get("images") or ())
    dra_facts = facts.get("dra-driver") or {}
    dra_imgs = tuple(dra_facts.get("images") or ())
    gpu_container = dra_facts.get("gpu-container")
    plugins: list[K8sObject] = []
    dras: list[K8sObject] = []
    for ds in ctx.index.of_kind("DaemonSet"):
        for ps in ds.pod_specs:
            for c in k8s.containers(ps):
                img = c.container.get("image")
                if not isinstance(img, str):
                    continue
                if any(i in img for i in plugin_imgs) and ds not in plugins:
                    plugins.append(ds)
                if any(i in img for i in dra_imgs) and c.name == gpu_container and ds not in dras:
                    dras.append(ds)
    ctx.cache["dra207-daemonsets"] = (plugins, dras)
    return plugins, dras


def _title(chart: str) -> str:
    return str((charts()["charts"].get(chart) or {}).get("title", chart))


def _switch_text(cv: _ChartValues, which: str) -> str:
    """The switches as written (or defaulted), e.g. "`resources.gpus.enabled` (on by default) and ..."."""
    specs = (charts()["charts"].get(cv.chart) or {}).get(which) or []
    parts = []
    for spec in specs:
        path = str(spec.get("path", ""))
        raw = k8s.get(cv.data, *path.split("."))
        if raw is None:
            parts.append(f"`{path}` defaulting to true")
        else:
            parts.append(f"`{path}: {str(raw).lower() if isinstance(raw, bool) else raw}`")
    return " and ".join(parts)


def _where(vd: ValuesDoc, other: ValuesDoc) -> str:
    return "another document of this file" if other.file is vd.file else other.file.path


@rule("DRA207", scope="values")
def double_allocator_config(vd: ValuesDoc, ctx: Context) -> Iterator[Violation]:
    me = _chart_of(vd, ctx)
    if me is None:
        return
    dp_on, dp_path = me.device_plugin
    dra_on, dra_path = me.dra_gpus
    if dp_on and dra_on:
        yield Violation(
            f"{_title(me.chart)} values run both the device plugin ({_switch_text(me, 'device-plugin')}) and "
            f"DRA GPU allocation ({_switch_text(me, 'dra-gpus')}): two allocators would hand the same GPUs "
            "to different pods. Turn the device plugin off when moving to DRA, or keep the two on disjoint nodes",
            dra_path,
        )
        return
    plugins, dra_sets = _daemonsets(ctx)
    if dra_on:
        others = []
        for other in ctx.index.all_values():
            if other is vd:
                continue
            oc = _chart_of(other, ctx)
            if oc is not None and oc.chart != me.chart and oc.device_plugin[0]:
                others.append(f"{_where(vd, other)} ({_title(oc.chart)} values)")
        others += [f"{ds.file.path} (DaemonSet `{ds.name}`)" for ds in plugins]
        if others:
            yield Violation(
                f"{_title(me.chart)} values turn on DRA GPU allocation ({_switch_text(me, 'dra-gpus')}) while "
                f"the device plugin is enabled in {', '.join(sorted(set(others)))}: on nodes running both, the same "
                "GPUs are handed to device-plugin pods and to DRA claims. Disable one of them, or keep them on "
                "disjoint nodes",
                dra_path,
            )
    elif dp_on and dra_sets:
        where = ", ".join(sorted({f"{ds.file.path} (DaemonSet `{ds.name}`)" for ds in dra_sets}))
        yield Violation(
            f"{_title(me.chart)} values run the device plugin ({_switch_text(me, 'device-plugin')}) while the "
            f"DRA driver's GPU plugin is deployed by {where}: on nodes running both, the same GPUs are handed to "
            "device-plugin pods and to DRA claims. Disable one of them, or keep them on disjoint nodes",
            dp_path,
        )
