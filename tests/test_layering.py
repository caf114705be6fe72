"""The package layout is the pipeline, and imports only go down it.

    cli -> report, migrate, fix -> engine -> checks -> cel -> inputs -> knowledge -> model

Every import in ``dralint/`` is read with `ast` (top-level and inside functions alike: an import
deferred for start-up time is still a dependency) and checked against `ALLOWED`. `model` and
`suggest` are leaves every layer may use; ``from dralint import __version__`` reads a constant and is
allowed everywhere. Within `cli`, a command module never imports another command: what two commands
share lives in `dralint.cli.options` or `dralint.cli.apply_fixes`.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

from .conftest import REPO

PKG = REPO / "dralint"

LEAVES = {"model", "suggest"}
BELOW_ENGINE = {"checks", "cel", "inputs", "knowledge", *LEAVES}
#: unit -> the units it may import. A unit is a subpackage of dralint or a module at its top.
ALLOWED: dict[str, set[str]] = {
    "model": set(),
    "suggest": set(),
    "knowledge": {*LEAVES},
    "inputs": {"knowledge", *LEAVES},
    "cel": {"inputs", "knowledge", *LEAVES},
    "checks": {"cel", "inputs", "knowledge", *LEAVES},
    "engine": BELOW_ENGINE,
    "fix": {"engine", *BELOW_ENGINE},
    "report": {"engine", *BELOW_ENGINE},
    # a migration is planned as fixes and applied (and gated) by the fix machinery
    "migrate": {"fix", "engine", *BELOW_ENGINE},
    "cli": {"report", "migrate", "fix", "engine", *BELOW_ENGINE},
    # the Python API (dralint.lint_text, dralint.fix_text, dralint.migrate_text) and the package root
    "api": {"migrate", "fix", "engine", *BELOW_ENGINE},
    "dralint": {"api"},
    "__main__": {"cli"},
}
#: the modules that may stay at the top of dralint/ (besides __init__ and __main__)
TOP_MODULES = {"api", "model", "suggest"}
CLI_COMMANDS = {"check", "fix", "migrate", "report", "rules"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (REPO / rel).with_suffix(".py").is_file() or (REPO / rel / "__init__.py").is_file()


def _unit(module: str) -> str:
    parts = module.split(".")
    return "dralint" if len(parts) == 1 else parts[1]


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, imported dralint module) for every import in the file; ``__version__`` is skipped."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "dralint" or alias.name.startswith("dralint."):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            if module != "dralint" and not module.startswith("dralint."):
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                if _is_module(sub):
                    yield node.lineno, sub
                elif not (module == "dralint" and alias.name == "__version__"):
                    yield node.lineno, module


@functools.cache  # three tests walk the same files: parse the package once
def edges() -> tuple[tuple[str, str, str], ...]:
    """(importing module, imported module, file:line) over the whole package."""
    out = []
    for path in sorted(PKG.rglob("*.py")):
        here = _module_name(path)
        for line, target in imports(path):
            out.append((here, target, f"{path.relative_to(REPO)}:{line}"))
    return tuple(out)


def test_every_module_belongs_to_a_layer() -> None:
    units = {_unit(_module_name(p)) for p in PKG.rglob("*.py")}
    assert units <= set(ALLOWED), f"place {sorted(units - set(ALLOWED))} in ALLOWED (which layer is it?)"
    top = {p.stem for p in PKG.glob("*.py")} - {"__init__", "__main__"}
    assert top <= TOP_MODULES, f"modules at the top of dralint/ other than {sorted(TOP_MODULES)}: {sorted(top)}"
    for p in PKG.iterdir():
        if p.is_dir() and p.name != "__pycache__" and any(p.glob("*.py")):
            doc = ast.get_docstring(ast.parse((p / "__init__.py").read_text(encoding="utf-8")))
            assert doc, f"dralint/{p.name}/__init__.py needs a docstring saying what the package does"


def test_imports_only_go_down_the_pipeline() -> None:
    bad = [f"{where}: {a} imports {b} ({_unit(a)} may import {sorted(ALLOWED[_unit(a)]) or 'nothing'})"
           for a, b, where in edges()
           if _unit(a) != _unit(b) and _unit(b) not in ALLOWED[_unit(a)]]
    assert not bad, "imports against the layering:\n" + "\n".join(bad)


def test_no_cycle_between_packages() -> None:
    graph: dict[str, set[str]] = {}
    for a, b, _ in edges():
        if _unit(a) != _unit(b):
            graph.setdefault(_unit(a), set()).add(_unit(b))
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                path = [*stack, node]
                raise AssertionError(f"import cycle: {' -> '.join([*path[path.index(nxt):], nxt])}")
            if nxt not in state:
                visit(nxt, [*stack, node])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])


def test_commands_do_not_import_each_other() -> None:
    bad = [f"{where}: {a} imports {b}" for a, b, where in edges()
           if a.startswith("dralint.cli.") and a.rpartition(".")[2] in CLI_COMMANDS
           and b.startswith("dralint.cli") and (b.rpartition(".")[2] in CLI_COMMANDS | {"app"} or b == "dralint.cli")]
    assert not bad, "a command imports another command or the app:\n" + "\n".join(bad)


def test_the_checker_sees_deferred_imports() -> None:
    """The layering test itself: imports inside functions and `from package import module` count."""
    found = {target for _, target in imports(PKG / "engine" / "pipeline.py")}
    assert "dralint.engine.parallel" in found  # imported inside lint_inputs
    # `from package import module` names the module
    assert "dralint.engine.charts" in {target for _, target in imports(PKG / "engine" / "rendered.py")}


def test_the_app_names_every_command_module() -> None:
    """The app imports its commands by name when they run (`COMMANDS`): each must exist and be one."""
    from dralint.cli.app import COMMANDS, cli

    assert {m for m, _ in COMMANDS.values()} <= CLI_COMMANDS
    for name in COMMANDS:
        assert cli.get_command(None, name) is not None  # type: ignore[arg-type]
