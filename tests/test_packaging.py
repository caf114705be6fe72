"""The wheel carries rules/ and schemas/ and works outside the checkout (the pre-commit install path)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from .conftest import EXAMPLES, REPO


def test_wheel_contains_data_and_runs_from_an_unpacked_copy(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = out.glob("dralint-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("dralint/_data/rules/DRA201-") and n.endswith("rule.yaml") for n in names)
    assert "dralint/_data/schemas/extended-resources.yaml" in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site)}
    code = ("import dralint.knowledge.catalog as c, sys; print(c.data_root()); "
            "sys.exit(0 if len(c.catalog()) > 20 else 1)")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(site / "dralint" / "_data")
    p = subprocess.run([sys.executable, "-m", "dralint", "check", str(EXAMPLES / "legacy"), "--format", "json"],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    assert p.returncode == 1 and '"DRA201"' in p.stdout, p.stderr
