"""Wheel build hook: compile dralint's optional native loader (`dralint/inputs/_yamlfast.c`).

It needs a C compiler and libyaml's headers (Debian: `libyaml-dev`). Without them, or with
DRALINT_NO_NATIVE set, the wheel is pure Python and dralint gives the same results, slower: the
loader then parses every document with PyYAML's composer (`dralint.inputs.load`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("dralint", "inputs", "_yamlfast.c")


def compile_native(root: Path, out: Path) -> str | None:
    """Compile the native loader to ``out``; None on success, else why it was not built."""
    if os.name != "posix":
        return "native loader builds only on POSIX systems"
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    include = sysconfig.get_paths()["include"]
    flags = [*shlex.split(os.environ.get("CFLAGS", "")), *shlex.split(os.environ.get("LDFLAGS", ""))]
    if sys.platform == "darwin":
        flags += ["-undefined", "dynamic_lookup"]
        for prefix in ("/opt/homebrew", "/usr/local"):  # where Homebrew puts libyaml
            if Path(prefix, "include", "yaml.h").is_file():
                flags += [f"-I{prefix}/include", f"-L{prefix}/lib"]
                break
    args = [*cc, "-O2", "-fPIC", "-shared", "-Wall", *flags, f"-I{include}", str(root / SOURCE), "-lyaml",
            "-o", str(out)]
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{args[0]}: {e}"
    if p.returncode != 0:
        first = next((line for line in p.stderr.splitlines() if "error" in line), p.stderr.strip()[:200])
        return f"compiling {SOURCE} failed: {first}"
    return None


class NativeLoaderHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or os.environ.get("DRALINT_NO_NATIVE"):
            return
        name = "_yamlfast" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")
        root = Path(self.root)
        # an editable install imports the package from the checkout: the module goes next to its source
        out = root / SOURCE.parent / name if version == "editable" else Path(tempfile.mkdtemp()) / name
        why = compile_native(root, out)
        if why is not None:
            self.app.display_warning(f"dralint: {why}; installing without the native loader (same results, slower)")
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if version != "editable":
            build_data["force_include"][str(out)] = f"{SOURCE.parent.as_posix()}/{name}"
