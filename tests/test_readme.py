"""The README's promises: its first commands, its YAML snippets, hook ids, action inputs and API example."""

from __future__ import annotations

import re

import yaml

import dralint

from .conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, re.S)


def test_first_commands_install_run_examples_and_tests() -> None:
    first, second = _blocks("sh")[:2]
    assert "pip install ." in first and "dralint check examples/" in first
    assert "pip install -e '.[test]'" in second and second.strip().endswith("python -m pytest")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest\n" in ci and "ruff check ." in ci and "mypy --strict dralint" in ci


def test_yaml_snippets_parse_and_name_real_hooks_and_inputs() -> None:
    hooks = {h["id"] for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    inputs = set(yaml.safe_load((REPO / "action.yml").read_text())["inputs"])
    seen_hook = seen_action = False
    for block in _blocks("yaml"):
        doc = yaml.safe_load(block)
        for repo in (doc or {}).get("repos", []) if isinstance(doc, dict) else []:
            for hook in repo["hooks"]:
                assert hook["id"] in hooks
                seen_hook = True
        if isinstance(doc, list):
            for step in doc:
                if str(step.get("uses", "")).startswith("dralint/dralint"):
                    assert set(step["with"]) <= inputs
                    seen_action = True
    assert seen_hook and seen_action


def test_config_snippet_is_a_valid_configuration(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from dralint.engine.config import build_config

    (block,) = [b for b in _blocks("yaml") if b.startswith("select:")]
    raw = yaml.safe_load(block)
    (tmp_path / "cluster").mkdir()
    cfg = build_config(raw, None, tmp_path)
    assert cfg.profile.kubernetes_version == "1.35"


def test_python_api_example() -> None:
    pod = (REPO / "examples" / "legacy" / "apps" / "trainer.yaml").read_text()
    findings = dralint.lint_text(pod, kubernetes_version="1.35")
    assert {f.rule for f in findings} == {"DRA201"}
    claim = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n" \
            "    requests:\n    - name: gpu\n      deviceClassName: gpu.nvidia.com\n"
    fixed = dralint.fix_text(claim)
    assert "exactly:" in fixed and dralint.lint_text(fixed) == []
