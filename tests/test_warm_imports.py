"""A second `check` over an unchanged repository runs no rule, so it must not pay for what only rule
runs and fixes use: the CEL stack, the fixer and jsonschema-rs are imported on first use (issue 17:
a warm run near free). The first run, which does run the rules, imports them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import EXAMPLES, REPO

PROBE = """\
import json, sys
from dralint.cli.app import main
main(["check", ".", "--isolated", "--format", "json", "--exit-zero", "--cache-dir", ".dralint_cache"])
heavy = ("dralint.cel", "dralint.fix.splice", "dralint.fix.loop", "jsonschema_rs")  # not fix.write: reports use it
print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))), file=sys.stderr)
"""


def _modules(cwd: Path) -> list[str]:
    r = subprocess.run([sys.executable, "-c", PROBE], cwd=cwd, capture_output=True, text=True, check=True,
                       env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    return list(json.loads(r.stderr.strip().splitlines()[-1]))


def test_a_warm_check_imports_neither_cel_nor_the_fixer(tmp_path: Path) -> None:
    # claim templates with CEL selectors: the first run compiles them
    shutil.copy(EXAMPLES / "dra-v1" / "claims" / "templates.yaml", tmp_path / "templates.yaml")
    cold = _modules(tmp_path)
    assert any(m.startswith("dralint.cel") for m in cold), cold  # the rules ran: the probe can see imports
    assert _modules(tmp_path) == []
