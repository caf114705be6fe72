"""DRA305 with drivers dralint has no data for: declared classes, unknown drivers, proof of absence.

Expectations come from the manifests below: a class is an error only when it provably cannot exist
(a known driver's class the configured drivers do not install, a removed class, a misspelling of a
real one), a warning that says how to declare it otherwise, and one finding per class per file.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dralint.cli.app import cli
from dralint.engine.config import ConfigError, build_config
from dralint.engine.pipeline import lint_paths
from dralint.model import Severity

from .conftest import REPO, lint_text


def _template(name: str, *classes: str) -> str:
    requests = "".join(
        f"      - name: r{i}\n        exactly:\n          deviceClassName: {c}\n" for i, c in enumerate(classes)
    )
    return ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
            f"metadata:\n  name: {name}\nspec:\n  spec:\n    devices:\n      requests:\n{requests}")


def _dra305(text: str, **config: Any) -> list[tuple[int, Severity, str]]:
    result = lint_text(text, select=["DRA305"], **config)
    assert result.internal_errors == []
    return [(f.span.line, f.severity, f.message) for f in result.findings if f.rule == "DRA305"]


def _line_of(text: str, needle: str, nth: int = 0) -> int:
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return lines[nth]


def test_an_unknown_class_is_a_warning_that_says_how_to_declare_it() -> None:
    text = _template("t", "gpu.example.com")
    [(line, sev, msg)] = _dra305(text)
    assert line == _line_of(text, "gpu.example.com")
    assert sev is Severity.WARNING
    assert "device-classes: [gpu.example.com]" in msg and "--device-class gpu.example.com" in msg


def test_one_finding_per_class_per_file_on_its_first_reference() -> None:
    text = _template("a", "gpu.example.com", "gpu.example.com") + "---\n" + _template("b", "gpu.example.com",
                                                                                      "netdev.google.com")
    found = _dra305(text)
    assert [(line, "gpu.example.com" in msg) for line, _, msg in found] == [
        (_line_of(text, "gpu.example.com"), True),
        (_line_of(text, "netdev.google.com"), False),
    ]
    assert "(2 more references in this file)" in found[0][2]
    assert "more reference" not in found[1][2]


def test_each_file_gets_its_own_finding() -> None:
    text = _template("a", "gpu.example.com")
    result = lint_text(text, select=["DRA305"], context=())
    other = lint_text(text, path="other.yaml", select=["DRA305"], context=(("test.yaml", text),))
    assert len([f for f in result.findings if f.rule == "DRA305"]) == 1
    assert [f.path for f in other.findings if f.rule == "DRA305"] == ["other.yaml"]


def test_declared_classes_are_installed() -> None:
    text = _template("t", "gpu.example.com", "netdev.google.com")
    assert _dra305(text, **{"device-classes": ["gpu.example.com", "netdev.google.com"]}) == []
    assert _dra305(text, drivers=[{"name": "dra.example.com",
                                   "device-classes": ["gpu.example.com", "netdev.google.com"]}]) == []


def test_a_listed_unknown_driver_installs_the_classes_named_after_it() -> None:
    text = _template("t", "gpu.example.com", "vfio.gpu.example.com", "netdev.google.com")
    found = _dra305(text, drivers=[{"name": "gpu.example.com"}])
    assert [(line, sev) for line, sev, _ in found] == [(_line_of(text, "netdev.google.com"), Severity.WARNING)]


def test_a_known_driver_left_out_of_the_configured_drivers_makes_its_class_an_error() -> None:
    text = _template("t", "gpu.nvidia.com")
    assert _dra305(text) == []  # no drivers configured: every known driver is assumed
    [(_, sev, msg)] = _dra305(text, drivers=[{"name": "gpu.example.com"}])
    assert sev is Severity.ERROR
    assert "add `gpu.nvidia.com` to `drivers`" in msg


@pytest.mark.parametrize(("cls", "meant"), [("gpu.nvidia.co", "gpu.nvidia.com"),
                                            ("mig.nvdia.com", "mig.nvidia.com")])
def test_a_misspelt_class_is_an_error(cls: str, meant: str) -> None:
    [(_, sev, msg)] = _dra305(_template("t", cls))
    assert sev is Severity.ERROR
    assert f"misspelling of `{meant}`" in msg


def test_a_misspelling_of_a_class_defined_in_the_set_is_an_error() -> None:
    dc = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: fast-nic.example.org\n"
    [(_, sev, msg)] = _dra305(dc + "---\n" + _template("t", "fast-nic.exmaple.org"))
    assert sev is Severity.ERROR and "fast-nic.example.org" in msg


def test_a_removed_class_stays_an_error() -> None:
    [(_, sev, msg)] = _dra305(_template("t", "imex.nvidia.com"))
    assert sev is Severity.ERROR and "removed" in msg


def test_a_severity_set_in_the_configuration_still_wins() -> None:
    found = _dra305(_template("t", "gpu.example.com"), severity={"DRA305": "error"})
    assert [sev for _, sev, _ in found] == [Severity.ERROR]


@pytest.mark.parametrize(("raw", "words"), [
    ({"drivers": [{"name": "gpu.nvida.com"}]}, "did you mean gpu.nvidia.com"),
    ({"drivers": [{"name": "Not_A_Driver"}]}, "not a valid DRA driver name"),
    ({"device-classes": ["Bad Class"]}, "not a valid DeviceClass name"),
    ({"device-classes": "gpu.example.com"}, "device-classes"),
])
def test_driver_entries_dralint_cannot_honour_are_configuration_errors(raw: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        build_config(raw, None, REPO)


def test_cli_driver_and_device_class_options(tmp_path: Path) -> None:
    f = tmp_path / "claims.yaml"
    f.write_text(_template("t", "gpu.example.com", "netdev.google.com"), encoding="utf-8")
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str]:
        res = runner.invoke(cli, ["check", "--isolated", "--no-cache", "--fail-on", "error", *args, str(f)])
        return res.exit_code, res.output

    code, out = run()
    assert code == 0 and out.count("DRA305 [warning]") == 2
    code, out = run("--driver", "gpu.example.com", "--verbose")
    assert code == 0 and out.count("DRA305") == 1 and "netdev.google.com" in out
    assert "gpu.example.com: no data in dralint; taken as installed" in out
    code, out = run("--driver", "gpu.example.com", "--device-class", "netdev.google.com")
    assert code == 0 and "DRA305" not in out
    code, out = run("--driver", "gpu.nvidia.con")
    assert code == 2 and "did you mean gpu.nvidia.com" in out


def test_a_missing_class_is_reported_at_its_first_reference_in_file_order() -> None:
    """One finding per unknown class and file, at the reference that comes first in the file, whatever
    the kinds of the objects that name it (a template before a claim here)."""
    text = ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t, namespace: ml}\n"
            "spec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n"
            "        exactly: {deviceClassName: nowhere.example.com}\n---\n"
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ml}\n"
            "spec:\n  devices:\n    requests:\n    - name: gpu\n"
            "      exactly: {deviceClassName: nowhere.example.com}\n")
    for result in (lint_text(text, select=["DRA305"]), _streamed(text)):
        (f,) = [f for f in result.findings if f.rule == "DRA305"]
        assert f.span.line == 9 and "1 more reference in this file" in f.message


def _streamed(text: str) -> Any:
    """The same file through the streaming pipeline (its DRA305 runs wait for the index)."""
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "test.yaml").write_text(text)
        config = build_config({"select": ["DRA305"]}, None, Path(d))
        config.use_cache = False
        return lint_paths([str(Path(d) / "test.yaml")], config, jobs=1)
