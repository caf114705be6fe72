"""Device-plugin knowledge from ``schemas/extended-resources.yaml`` (plus config additions).

Which extended resource names are legacy GPU allocations, which DRA device class replaces each,
which device classes allocate GPUs, and how gpu-feature-discovery labels map to CEL. Loaded once
per profile; rules ask questions, they never hard-code names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import re2  # type: ignore[import-untyped,unused-ignore]

from dralint.knowledge.catalog import load_data
from dralint.knowledge.profile import ClusterProfile

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern is reported once, as a configuration error, not logged to stderr


class PatternError(ValueError):
    """A resource-name pattern that RE2 does not accept; the message is RE2's reason."""


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    """A resource-name pattern compiled with RE2 (cached: config loading compiles each pattern once).

    Patterns come from `.dralint.yaml`, which a pull request can change: with Python's backtracking
    ``re``, ``(a|aa)+$b`` took over a minute on one 60-character name. RE2 matches in time linear in
    the name, and refuses what it cannot do that way (back-references, look-around).
    """
    try:
        return re2.compile(pattern, options=_RE2_OPTIONS)
    except re2.error as e:
        msg = e.args[0] if e.args else e
        raise PatternError(msg.decode("utf-8", "replace") if isinstance(msg, bytes) else str(msg)) from None


@dataclass(frozen=True)
class LegacyResource:
    name: str
    kind: str  # gpu | mig | shared
    vendor: str
    device_class: str
    profile: str | None  # MIG profile as the device plugin spells it (".me" for "+me")

    @property
    def rule(self) -> str:
        return {"gpu": "DRA201", "mig": "DRA202", "shared": "DRA203"}[self.kind]

    @property
    def dra_profile(self) -> str | None:
        """The MIG profile as the DRA driver publishes it: the plugin's ``.me``/``.gfx`` is ``+``."""
        if self.profile is None:
            return None
        m = re.fullmatch(r"([0-9]+g\.[0-9]+gb)(\.me\.all|\.me|\.gfx|-me)?", self.profile)
        if not m:
            return self.profile
        suffix = m.group(2) or ""
        if suffix.startswith("."):
            suffix = "+" + suffix[1:]
        return m.group(1) + suffix


@dataclass(frozen=True)
class _Pattern:
    regex: Any  # an RE2 pattern (fullmatch, groupdict as in `re`)
    kind: str
    vendor: str
    device_class: str


class LegacyKnowledge:
    def __init__(self, extra: tuple[tuple[str, str, str, str], ...]) -> None:
        data = load_data("extended-resources.yaml")
        entries: list[dict[str, Any]] = [
            {"pattern": p, "kind": k, "vendor": v, "device-class": c} for p, k, v, c in extra
        ] + list(data["resources"])
        self.patterns = [
            _Pattern(compile_pattern(e["pattern"]), e.get("kind", "gpu"), e.get("vendor", e["device-class"]),
                     e["device-class"])
            for e in entries
        ]
        self.false_friends = [(compile_pattern(e["pattern"]), e["note"]) for e in data.get("false-friends", [])]
        self.gpu_classes: dict[str, str] = dict(data.get("gpu-device-classes", {}))
        for _, _, vendor, cls in extra:
            self.gpu_classes.setdefault(cls, vendor)
        self.quota_template: str = data["quota-key-template"]
        self.gfd_labels: dict[str, dict[str, Any]] = {k: (v or {}) for k, v in data.get("gfd-labels", {}).items()}
        self._memo: dict[str, LegacyResource | None] = {}

    def classify(self, name: str) -> LegacyResource | None:
        """The legacy resource behind an extended resource name, or None."""
        if name in self._memo:
            return self._memo[name]
        found = None
        if not any(r.fullmatch(name) for r, _ in self.false_friends):
            for p in self.patterns:
                m = p.regex.fullmatch(name)
                if m:
                    profile = m.groupdict().get("profile")
                    found = LegacyResource(name, p.kind, p.vendor, p.device_class, profile)
                    break
        if len(self._memo) < 65536:  # the knowledge object lives for the process: keep the memo bounded
            self._memo[name] = found
        return found

    def false_friend(self, name: str) -> str | None:
        for r, note in self.false_friends:
            if r.fullmatch(name):
                return str(note)
        return None

    def is_gfd_label(self, key: str) -> bool:
        """A gpu-feature-discovery / GPU Operator node label (known, or in NVIDIA's label prefixes)."""
        return key in self.gfd_labels or key.startswith(("nvidia.com/gpu.", "nvidia.com/cuda.", "nvidia.com/mig."))

    def gfd_cel(self, key: str, op: str, value: str) -> str | None:
        """The CEL selector that picks the devices a node-label condition meant, when there is one.

        ``op`` is a nodeSelector equality (``=``) or a node-affinity operator (In, Gt, Lt).
        """
        entry = self.gfd_labels.get(key)
        if not entry:
            return None
        if op == "Gt" and "cel-gt" in entry:
            return str(entry["cel-gt"]).format(value=value)
        if op == "Lt" and "cel-lt" in entry:
            return str(entry["cel-lt"]).format(value=value)
        if op not in ("In", "=", "Equal") or "cel" not in entry:
            return None
        mapped = (entry.get("values") or {}).get(value, value)
        return str(entry["cel"]).format(value=mapped)

    def quota_key(self, device_class: str) -> str:
        return self.quota_template.format(device_class=device_class)

    def is_gpu_class(self, device_class: str) -> bool:
        return device_class in self.gpu_classes


@cache
def _knowledge(extra: tuple[tuple[str, str, str, str], ...]) -> LegacyKnowledge:
    return LegacyKnowledge(extra)


def legacy(profile: ClusterProfile) -> LegacyKnowledge:
    extra = tuple(
        (e["pattern"], e.get("kind", "gpu"), e.get("vendor", e["device-class"]), e["device-class"])
        for e in profile.extended_resources
    )
    return _knowledge(extra)
