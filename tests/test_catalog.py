"""Meta-tests: rule folders, registered code and docs stay one-to-one and well formed."""

from __future__ import annotations

import re

import jsonschema
import yaml

from dralint.checks.registry import load_checks
from dralint.knowledge.catalog import catalog

from .conftest import RULES

RULE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["code", "name", "severity", "category", "summary", "why", "fix"],
    "properties": {
        "code": {"type": "string", "pattern": "^DRA[0-9]{3}$"},
        "name": {"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"},
        "severity": {"enum": ["error", "warning", "info"]},
        "category": {"type": "string"},
        "enabled_by_default": {"type": "boolean"},
        "summary": {"type": "string", "minLength": 10},
        "why": {"type": "string", "minLength": 20},
        "fix": {
            "type": "object",
            "additionalProperties": False,
            "required": ["availability"],
            "properties": {
                "availability": {"enum": ["none", "sometimes", "always"]},
                "applicability": {"enum": ["safe", "unsafe", "display-only"]},
            },
        },
        "fix_safety": {"type": "string"},
        "options": {"type": "object"},
        "references": {"type": "array", "items": {"type": "string"}},
        "since": {"type": "string"},
        # how tests/test_rule_examples.py presents the bad examples (default: as file content)
        "example_setup": {"enum": ["symlink-outside-roots", "helm-chart"]},
    },
}


def test_rule_files_validate() -> None:
    for folder in sorted(RULES.iterdir()):
        raw = yaml.safe_load((folder / "rule.yaml").read_text())
        jsonschema.validate(raw, RULE_SCHEMA)
        assert folder.name == f"{raw['code']}-{raw['name']}", folder.name
        if raw["fix"]["availability"] != "none":
            assert "applicability" in raw["fix"], folder.name
            assert raw.get("fix_safety"), f"{folder.name}: fixable rules explain their fix safety"


def test_codes_and_names_unique() -> None:
    metas = list(catalog().values())
    assert len({m.code for m in metas}) == len(metas)
    assert len({m.name for m in metas}) == len(metas)


def test_registry_matches_folders() -> None:
    registered = set(load_checks())
    folders = set(catalog())
    assert registered - folders == set(), "code without a rules/ folder"
    assert folders - registered == set(), "rules/ folder without code"


def test_fixable_rules_have_fixed_examples() -> None:
    for code, meta in catalog().items():
        fixed = list(meta.folder.glob("bad*.fixed.yaml"))
        if meta.fix_availability == "always":
            assert fixed, f"{code}: an always-fixable rule needs bad.fixed.yaml"
        if meta.fix_availability == "none":
            assert not fixed, f"{code}: bad.fixed.yaml without a fix"


def test_rules_catalog_ids_are_the_contract() -> None:
    """IDs that RULES.md names keep their meaning (name) forever."""
    contract = {
        "DRA001": "yaml-syntax-error", "DRA002": "not-a-kubernetes-object", "DRA003": "unrendered-template",
        "DRA004": "duplicate-key", "DRA005": "input-limit",
        "DRA201": "legacy-gpu-extended-resource", "DRA202": "legacy-mig-extended-resource",
        "DRA203": "legacy-shared-gpu-resource", "DRA204": "mixed-allocation-models", "DRA205": "legacy-gpu-quota",
        "DRA206": "gfd-label-scheduling", "DRA207": "double-allocator-config", "DRA208": "extended-resource-bridge",
        "DRA301": "undeclared-container-claim", "DRA302": "unused-pod-claim", "DRA303": "missing-resource-claim",
        "DRA304": "missing-claim-template", "DRA305": "unknown-device-class", "DRA306": "unknown-claim-request",
        "DRA307": "shared-claim-in-replicated-workload", "DRA309": "pod-claim-source",
    }
    cat = catalog()
    for code, name in contract.items():
        assert code in cat and cat[code].name == name


def test_summaries_are_single_sentences() -> None:
    for meta in catalog().values():
        assert re.match(r"^[`A-Z]", meta.summary), meta.code
        assert meta.summary.endswith("."), meta.code
